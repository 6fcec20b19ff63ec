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

"""Keypairs belong to users: the cascade reports those of the project's
users and deletes none, and they keep nothing alive."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.kinds import compute
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import cascade_for

KEYPAIR = compute.Keypair.name


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def project(cloud):
    p = scenarios.project(cloud, 'A')
    cloud.add(
        'role_assignments',
        user={'id': 'alice'},
        role={'id': 'm'},
        scope={'project': {'id': p['id']}},
    )
    cloud.keypair('alice', 'laptop')
    cloud.keypair('bob', 'other-users')
    return p['id']


def test_the_keypairs_of_the_projects_users_are_listed(cloud, project):
    [ref] = kinds_mod.build()[KEYPAIR].list(cloud.connection(), project)
    assert (ref.id, ref.name, ref.project_id) == (
        'alice/laptop',
        'laptop',
        project,
    )
    assert ('GET', '/v2.1/os-keypairs?user_id=alice') in cloud.requests


def test_they_are_reported_and_keep_nothing_alive(cloud, project):
    pc, targets, plan = cascade_for(cloud, project)
    step = plan.steps[step_id('keep', KEYPAIR, 'alice/laptop')]
    assert step.is_report_only
    assert (
        'belongs to user alice, not to the project' in (step.params['reason'])
    )
    assert (
        'openstack keypair delete --user alice laptop'
        in (step.params['reason'])
    )
    assert plan.kept() == []
    assert not [e for e in plan.edges if e[0] == step.id]

    pc.execute(plan, targets)  # no refusal, one round

    assert len(pc.runs) == 1
    assert cloud.exists('keypairs', 'alice/laptop')
    assert not [c for c in cloud.changes if 'keypair' in c[1]]


def test_a_kept_resource_still_stops_the_cascade(cloud, project):
    scenarios.image(cloud, project, 'public', visibility='public')
    pc, targets, plan = cascade_for(cloud, project)
    with pytest.raises(CascadeError, match='public image') as err:
        pc.execute(plan, targets)
    assert 'keypair' not in str(err.value)


def test_no_keypair_is_an_orphan(cloud, project):
    assert kinds_mod.build()[KEYPAIR].list(cloud.connection(), None) == []


def test_a_deleted_project_has_no_users_and_so_no_keypairs(cloud):
    # the settle step lists by a deleted project's ID: Keystone answers
    # its role assignments with 404 (seen on the minicloud)
    cloud.faults.append(('GET', r'/role_assignments', 404))
    kind = kinds_mod.build()[compute.Keypair.name]
    assert kind.list(cloud.connection(), 'f' * 32) == []
