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

"""Stuck states beyond Cinder's (issue #33): Octavia's PENDING_* left for
longer than a worker takes, Manila's failed share states; what
``--force-stuck`` does and cannot do for them."""

import datetime

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import DONE, KEPT, SKIPPED
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import base, compute, load_balancer
from osc_cascade.kinds import shared_file_system as manila
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import run_kind

LB = load_balancer.LoadBalancer.name
SHARE = manila.Share.name
SERVER = compute.Server.name
LONG_AGO = '2026-01-01T00:00:00Z'


def just_now():
    return datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')


def plan_of(kind, refs, pid):
    return build_plan(Inventory(refs), {kind.name: kind}, [{'id': pid}])


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def subnet(cloud, pid):
    _net, sub = scenarios.network(cloud, pid)
    return sub


@pytest.mark.parametrize(
    'status', ['PENDING_CREATE', 'PENDING_UPDATE', 'PENDING_DELETE']
)
def test_a_load_balancer_pending_for_hours_is_stuck(
    cloud, pid, subnet, status
):
    lb = cloud.load_balancer(pid, subnet)
    # left by a worker that died: it never settles
    lb.update(
        provisioning_status=status, updated_at=LONG_AGO, pending_left=10**6
    )
    kind = kinds_mod.build(force_stuck=True)[LB]
    [ref] = kind.list(cloud.connection(), pid)
    plan = plan_of(kind, [ref], pid)
    step = plan.steps[f'keep:{LB}:{lb["id"]}']
    assert step.params['stuck'] is True
    assert step.describe() == (
        f"{LB} lb ({lb['id']}) is '{status}' since {LONG_AGO}: Octavia "
        'deletes a load balancer only when it is ACTIVE or ERROR, and only '
        'the worker that set PENDING_* clears it; no API resets it: an '
        "operator must set its provisioning_status to ERROR in Octavia's "
        'database (--force-stuck cannot)'
    )


def test_a_load_balancer_pending_just_now_is_waited_for(cloud, pid, subnet):
    lb = cloud.load_balancer(pid, subnet, pending=2)
    lb['updated_at'] = just_now()
    kind = kinds_mod.build()[LB]
    [ref] = kind.list(cloud.connection(), pid)
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == DONE


@pytest.mark.parametrize(
    'status',
    [
        'error_deleting',
        'manage_error',
        'unmanage_error',
        'extending_error',
        'shrinking_error',
        'shrinking_possible_data_loss_error',
        'reverting_error',
    ],
)
def test_a_share_in_a_failed_state_is_stuck(cloud, pid, status):
    share = cloud.share(pid, 'files', status=status, updated_at=LONG_AGO)
    kind = kinds_mod.build()[SHARE]
    [ref] = kind.list(cloud.connection(), pid)
    step = plan_of(kind, [ref], pid).steps[f'keep:{SHARE}:{share["id"]}']
    assert step.params['reason'] == (
        f"is '{status}' since {LONG_AGO}: Manila deletes a share only when "
        'it is available, error or inactive; an admin can reset its state '
        '(openstack share set --status error) or use --force-stuck'
    )


def test_force_stuck_resets_a_share_then_deletes_it(cloud, pid):
    share = cloud.share(pid, 'files', status='error_deleting')
    kind = kinds_mod.build(force_stuck=True)[SHARE]
    [ref] = kind.list(cloud.connection(), pid)
    result = run_kind(cloud, kind, [ref])
    assert result.ok, result.results
    assert {r.step.action: r.outcome for r in result.results.values()} == {
        'reset_share_state': DONE,
        'delete': DONE,
    }
    assert cloud.share_resets == [(share['id'], {'status': 'error'})]
    assert cloud.get('shares', share['id']) is None


def test_force_stuck_leaves_a_share_another_project_took(cloud, pid):
    share = cloud.share(pid, 'files', status='error_deleting')
    kind = kinds_mod.build(force_stuck=True)[SHARE]
    [ref] = kind.list(cloud.connection(), pid)
    other = scenarios.project(cloud, 'B')['id']
    share['project_id'] = other
    result = run_kind(cloud, kind, [ref])
    assert not cloud.share_resets
    assert cloud.get('shares', share['id']) is not None
    outcomes = {
        r.step.action: (r.outcome, r.error) for r in result.results.values()
    }
    assert outcomes['reset_share_state'] == (KEPT, f'owner is now {other}')
    assert outcomes['delete'][0] == SKIPPED


@pytest.mark.parametrize(
    'when,seconds,old',
    [
        ('2026-01-01T00:00:00Z', 60, True),
        ('2026-01-01T00:00:00', 60, True),  # Octavia's: UTC, no zone
        ('2026-01-01T00:00:00.000000', 60, True),
        ('', 60, False),
        (None, 60, False),
        ('not a time', 60, False),
    ],
)
def test_older_than(when, seconds, old):
    assert base.older_than(when, seconds) is old
    assert base.older_than(just_now(), 3600) is False


# -- Nova: it deletes from every state; --force-stuck clears a dead task ----


def test_a_server_with_an_old_task_is_deleted_as_nova_accepts(cloud, pid):
    vm = scenarios.server(cloud, pid)
    vm.update(task_state='spawning', updated=LONG_AGO)
    kind = kinds_mod.build()[SERVER]
    [ref] = kind.list(cloud.connection(), pid)
    plan = plan_of(kind, [ref], pid)
    assert list(plan.steps) == [f'delete:{SERVER}:{vm["id"]}']


def test_force_stuck_resets_a_servers_dead_task_then_deletes(cloud, pid):
    vm = scenarios.server(cloud, pid)
    vm.update(task_state='spawning', updated=LONG_AGO)
    kind = kinds_mod.build(force_stuck=True)[SERVER]
    [ref] = kind.list(cloud.connection(), pid)
    plan = plan_of(kind, [ref], pid)
    reset = f'reset_server_state:{SERVER}:{vm["id"]}[status=task spawning]'
    assert (reset, f'delete:{SERVER}:{vm["id"]}') in plan.edges
    result = run_kind(cloud, kind, [ref])
    assert result.ok, result.results
    assert cloud.server_resets == [(vm['id'], {'state': 'error'})]
    assert cloud.get('servers', vm['id']) is None


def test_force_stuck_leaves_a_task_that_moved_recently(cloud, pid):
    vm = scenarios.server(cloud, pid)
    vm.update(task_state='spawning', updated=just_now())
    kind = kinds_mod.build(force_stuck=True)[SERVER]
    [ref] = kind.list(cloud.connection(), pid)
    assert list(plan_of(kind, [ref], pid).steps) == [
        f'delete:{SERVER}:{vm["id"]}'
    ]


# -- what the services delete from any state: never stuck, never forced -----


def test_a_load_balancer_in_error_is_deleted_by_cascade_not_forced(
    cloud, pid, subnet
):
    # octavia/common/constants.py DELETABLE_STATUSES: ACTIVE and ERROR;
    # failover (FAILOVERABLE_STATUSES, the same two) rebuilds amphorae,
    # which a delete from ERROR does not need: --force-stuck adds nothing
    lb = cloud.load_balancer(pid, subnet)
    lb['provisioning_status'] = 'ERROR'
    kind = kinds_mod.build(force_stuck=True)[LB]
    [ref] = kind.list(cloud.connection(), pid)
    plan = plan_of(kind, [ref], pid)
    assert [s.action for s in plan.steps.values() if s.target.kind == LB] == [
        'delete'
    ]
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == DONE
    assert cloud.get('loadbalancers', lb['id']) is None


IMAGE = 'image.image'


@pytest.mark.parametrize(
    'status', ['importing', 'uploading', 'queued', 'saving', 'killed']
)
def test_an_image_glance_deletes_from_any_state_is_not_stuck(
    cloud, pid, status
):
    # glance/domain/__init__.py Image.valid_state_targets: every state may
    # go to 'deleted'; api/v2/images.py delete cancels an import's hashing
    # and removes its staged data: nothing to force
    image = scenarios.image(cloud, pid)
    image['status'] = status
    kind = kinds_mod.build(force_stuck=True)[IMAGE]
    [ref] = kind.list(cloud.connection(), pid)
    plan = plan_of(kind, [ref], pid)
    assert [s.action for s in plan.steps.values()] == ['delete']
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == DONE
    assert cloud.get('images', image['id']) is None
