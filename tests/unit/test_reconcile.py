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

"""What a run may delete, given the plan shown and what is owned now."""

import datetime

import pytest

from osc_cascade.engine import resource
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.reconcile import created_after, parse_time, reconcile
from osc_cascade.engine.resource import ResourceRef, Step

PROJECT = 'p1'
DRAIN = datetime.datetime(2026, 5, 1, 12, 0, 0, 500000, tzinfo=datetime.UTC)


def ref(id_, created_at=''):
    return ResourceRef(
        kind='test.kind', id=id_, project_id=PROJECT, created_at=created_at
    )


def plan(*steps, edges=()):
    return Plan(
        projects=[{'id': PROJECT, 'name': 'p'}],
        steps={s.id: s for s in steps},
        edges=set(edges),
    )


def test_a_resource_still_owned_runs_and_one_gone_or_given_away_is_dropped():
    a, b = resource.delete(ref('a')), resource.delete(ref('b'))
    checked = reconcile(plan(a, b, edges=[(a.id, b.id)]), plan(a), DRAIN)
    assert set(checked.plan.steps) == {a.id}
    assert checked.plan.edges == set()
    assert checked.dropped == [b]
    assert checked.unpreviewed == []


def test_a_shown_delete_that_must_now_be_kept_is_a_keep_not_a_miss():
    """Lent to another project since the preview: the keep is in the plan
    (which the run refuses as kept), neither dropped nor unpreviewed."""
    a = resource.delete(ref('a'))
    now_kept = resource.keep(ref('a'), 'attached to a server of p2')
    checked = reconcile(plan(a), plan(now_kept), DRAIN)
    assert set(checked.plan.steps) == {now_kept.id}
    assert checked.plan.kept() == [now_kept]
    assert checked.dropped == []
    assert checked.unpreviewed == []


def test_a_resource_the_preview_missed_is_never_run():
    a = resource.delete(ref('a'))
    old = resource.delete(ref('old', '2026-05-01T11:59:59Z'))
    same_second = resource.delete(ref('tie', '2026-05-01T12:00:00.900Z'))
    unknown = resource.delete(ref('unknown'))
    checked = reconcile(plan(a), plan(a, old, same_second, unknown), DRAIN)
    assert set(checked.plan.steps) == {a.id}
    assert {s.id for s in checked.unpreviewed} == {
        old.id,
        same_second.id,
        unknown.id,
    }


def test_a_resource_created_after_the_drain_began_is_the_race_and_goes():
    a = resource.delete(ref('a'))
    late = resource.delete(ref('late', '2026-05-01T12:00:01Z'))
    checked = reconcile(plan(a), plan(a, late), DRAIN)
    assert set(checked.plan.steps) == {a.id, late.id}
    assert checked.unpreviewed == []


def test_break_actions_come_from_what_is_owned_now():
    a = resource.delete(ref('a'))
    was = Step('remove_router_interface', ref('a'), {'port_id': 'p-old'})
    now = Step('remove_router_interface', ref('a'), {'port_id': 'p-new'})
    checked = reconcile(
        plan(a, was, edges=[(was.id, a.id)]),
        plan(a, now, edges=[(now.id, a.id)]),
        DRAIN,
    )
    # the interface that is there now is removed; the gone one is no
    # resource of the project's, so it is not reported as dropped
    assert set(checked.plan.steps) == {a.id, now.id}
    assert checked.dropped == []


def test_a_users_keypair_reported_only_is_not_unpreviewed():
    a = resource.delete(ref('a'))
    keypair = resource.keep(ref('k'), 'a user owns it', blocking=False)
    checked = reconcile(plan(a), plan(a, keypair), DRAIN)
    assert checked.unpreviewed == []


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ('2026-05-01T12:00:01Z', (12, 0, 1)),
        ('2026-05-01T12:00:01.123456', (12, 0, 1)),
        ('2026-05-01T14:00:01+02:00', (12, 0, 1)),
        ('', None),
        ('yesterday', None),
    ],
)
def test_service_times_in_their_forms(text, expected):
    when = parse_time(text)
    assert (
        when is None
        if expected is None
        else (when.hour, when.minute, when.second) == expected
    )


def test_created_after_is_strict_to_the_second():
    assert created_after(ref('x', '2026-05-01T12:00:01Z'), DRAIN)
    assert not created_after(ref('x', '2026-05-01T12:00:00.999Z'), DRAIN)
    assert not created_after(ref('x'), DRAIN)
