#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""Glance memberships: the project's membership of another project's image
is removed; the image stays."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.kinds import image
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_for
from tests.unit.scenarios import share_image_with

MEMBER = image.ImageMember.name


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def test_lists_the_projects_memberships_of_others_images(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    c = scenarios.project(cloud, 'C')['id']
    golden = share_image_with(cloud, b, a)
    share_image_with(cloud, b, c, 'for-c')
    share_image_with(cloud, a, c, 'mine')  # A's own: the image kind's
    [ref] = kinds_mod.build()[MEMBER].list(cloud.connection(), a)
    assert (ref.id, ref.project_id, ref.attrs['image_id']) == (
        f'{golden["id"]}/{a}',
        a,
        golden['id'],
    )


def test_the_membership_goes_and_the_image_stays(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    c = scenarios.project(cloud, 'C')['id']
    golden = cloud.add(
        'images',
        name='golden',
        owner=b,
        status='active',
        visibility='shared',
        protected=False,
        members=[a, c],
    )
    pc, targets, plan = cascade_for(cloud, a)

    pc.execute(plan, targets)

    assert cloud.get('images', golden['id'])['members'] == [c]
    assert ('DELETE', f'/v2/images/{golden["id"]}/members/{a}') in (
        cloud.changes
    )


def test_the_orphan_search_sees_every_membership(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    share_image_with(cloud, b, a)
    share_image_with(cloud, a, b, 'mine')
    refs = kinds_mod.build()[MEMBER].list(cloud.connection(), None)
    assert sorted(r.project_id for r in refs) == sorted([a, b])
