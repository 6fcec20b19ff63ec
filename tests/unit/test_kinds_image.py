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

"""Glance images against the fake cloud: what is kept, what is deleted."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import Step
from osc_cascade.kinds import image
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud, ignoring_filters

IMAGE = image.Image.name


def plan_for(conn, pid, **options):
    kind = image.Image(**options)
    return build_plan(
        Inventory(kind.list(conn, pid)),
        {IMAGE: kind},
        [{'id': pid, 'name': 'A'}],
    )


def only_step(plan):
    [step] = [s for s in plan.steps.values() if not s.is_break_action]
    return step


def test_list_asks_for_the_projects_images_of_every_visibility(
    cloud, conn, pid
):
    list(image.Image().list(conn, pid))
    calls = [p for m, p in cloud.requests if p.startswith('/v2/images')]
    # and the hidden ones, which Glance lists only when asked alone
    assert len(calls) == 2
    for call in calls:
        assert f'owner={pid}' in call and 'visibility=all' in call
    assert 'os_hidden=True' in calls[1]


def test_another_owners_image_never_gets_in():
    with ignoring_filters(FakeCloud)() as cloud:
        a = scenarios.project(cloud, 'A')['id']
        b = scenarios.project(cloud, 'B')['id']
        mine = scenarios.image(cloud, a, 'mine')
        scenarios.image(cloud, b, 'theirs', visibility='public')
        scenarios.image(cloud, '', 'ownerless', visibility='public')
        conn = cloud.connection()
        refs = list(image.Image().list(conn, a))
        assert [(r.id, r.project_id) for r in refs] == [(mine['id'], a)]


def test_private_image_is_deleted(cloud, conn, pid):
    img = scenarios.image(cloud, pid)
    step = only_step(plan_for(conn, pid))
    assert step.is_delete and step.target.id == img['id']
    assert step.target.attrs == {'visibility': 'private'}


@pytest.mark.parametrize('visibility', ['public', 'community'])
def test_public_and_community_images_are_kept(cloud, conn, pid, visibility):
    scenarios.image(cloud, pid, visibility=visibility)
    step = only_step(plan_for(conn, pid))
    assert step.action == 'keep'
    assert step.params == {'reason': f'{visibility} image', 'shared': True}


def test_shared_image_with_members_is_kept_naming_them(cloud, conn, pid):
    img = scenarios.image(
        cloud, pid, visibility='shared', members=['p-two', 'p-one']
    )
    step = only_step(plan_for(conn, pid))
    assert step.action == 'keep'
    assert step.params['reason'] == 'shared with p-one, p-two'
    assert ('GET', f'/v2/images/{img["id"]}/members') in cloud.requests


def test_shared_image_without_members_is_deleted(cloud, conn, pid):
    scenarios.image(cloud, pid, visibility='shared')
    assert only_step(plan_for(conn, pid)).is_delete


def test_members_are_asked_only_for_shared_images(cloud, conn, pid):
    scenarios.image(cloud, pid, 'a')
    scenarios.image(cloud, pid, 'b', visibility='public')
    list(image.Image().list(conn, pid))
    assert not [p for m, p in cloud.requests if p.endswith('/members')]


def test_protected_image_is_kept(cloud, conn, pid):
    scenarios.image(cloud, pid, protected=True)
    plan = plan_for(conn, pid)
    assert only_step(plan).params == {
        'reason': 'protected image',
        'shared': True,
    }
    # kept: no unprotect action either
    assert len(plan.steps) == 1


@pytest.mark.parametrize(
    'extra',
    [
        {'visibility': 'public'},
        {'visibility': 'community'},
        {'visibility': 'shared', 'members': ['p2']},
    ],
)
def test_delete_shared_images_deletes_them(cloud, conn, pid, extra):
    scenarios.image(cloud, pid, **extra)
    plan = plan_for(conn, pid, delete_shared=True)
    assert only_step(plan).is_delete
    assert plan.kept() == []


def test_protected_image_is_unprotected_first_when_asked(cloud, conn, pid):
    img = scenarios.image(cloud, pid, visibility='public', protected=True)
    plan = plan_for(conn, pid, delete_shared=True)
    unprotect = f'unprotect_image:{IMAGE}:{img["id"]}'
    assert set(plan.steps) == {unprotect, f'delete:{IMAGE}:{img["id"]}'}
    assert plan.edges == {(unprotect, f'delete:{IMAGE}:{img["id"]}')}
    kinds = kinds_mod.build(delete_shared=True)
    result = Executor(conn, kinds, clock=FakeClock()).run(plan)
    assert result.ok
    assert not cloud.exists('images', img['id'])
    base = f'/v2/images/{img["id"]}'
    assert cloud.changes == [('PATCH', base), ('DELETE', base)]


def test_deleting_a_protected_image_without_unprotecting_fails(
    cloud, conn, pid
):
    scenarios.image(cloud, pid, protected=True)
    [ref] = image.Image().list(conn, pid)
    with pytest.raises(sdk_exc.ForbiddenException):
        image.Image().delete(conn, ref)


def test_image_delete_and_unknown_action(cloud, conn, pid):
    img = scenarios.image(cloud, pid)
    [ref] = image.Image().list(conn, pid)
    kind = image.Image()
    assert kind.synchronous_delete
    kind.delete(conn, ref)
    assert cloud.changes == [('DELETE', f'/v2/images/{img["id"]}')]
    with pytest.raises(sdk_exc.NotFoundException):
        kind.delete(conn, ref)
    with pytest.raises(NotImplementedError):
        kind.apply(conn, Step('share', ref))


def test_a_hidden_image_is_listed_and_deleted_too(cloud, conn, pid):
    hidden = scenarios.image(cloud, pid, 'hidden', os_hidden=True)
    shown = scenarios.image(cloud, pid, 'shown')
    refs = image.Image().list(conn, pid)
    assert {r.id for r in refs} == {hidden['id'], shown['id']}
