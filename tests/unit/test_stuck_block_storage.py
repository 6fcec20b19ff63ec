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

"""Cinder's volumes, snapshots and backups stuck in a state Cinder will not
delete from (issue #33): shown as stuck in the plan, never retried, their
dependents skipped; ``--force-stuck`` resets them first, for an admin,
only what the project owns and nothing else uses."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError, Kept
from osc_cascade.engine.executor import (
    DONE,
    KEPT,
    SKIPPED,
    STUCK,
    Executor,
)
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import block_storage, compute
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.run import cascade_for, zero_delays
from tests.unit.fakes.scoped import ScopedCloud

VOL, SNAP, BACKUP = (
    block_storage.Volume.name,
    block_storage.Snapshot.name,
    block_storage.Backup.name,
)
SINCE = '2026-11-28T05:10:00Z'


def refs_of(conn, pid, **options):
    kinds = kinds_mod.build(**options)
    return kinds, [
        r
        for k in (VOL, SNAP, BACKUP, compute.Server.name)
        for r in kinds[k].list(conn, pid)
    ]


def plan_of(conn, pid, **options):
    kinds, refs = refs_of(conn, pid, **options)
    return kinds, build_plan(Inventory(refs), kinds, [{'id': pid, 'name': ''}])


def run(cloud, kinds, plan):
    return Executor(
        cloud.connection(), kinds, clock=FakeClock(), retry=zero_delays()
    ).run(plan)


def volume(cloud, pid, name='vol', status='available', **extra):
    vol = scenarios.volume(cloud, pid, name, **extra)
    vol['status'] = status  # attach() made it in-use
    return vol


def stuck_volume(cloud, pid, status, name=None, **extra):
    vol = volume(cloud, pid, name or f'stuck-{status}', status, **extra)
    vol['updated_at'] = SINCE
    return vol


@pytest.mark.parametrize(
    'status',
    ['error_deleting', 'creating', 'attaching', 'detaching', 'maintenance'],
)
def test_a_volume_in_a_state_cinder_refuses_is_stuck_in_the_plan(
    cloud, conn, pid, status
):
    vol = stuck_volume(cloud, pid, status)
    _kinds, plan = plan_of(conn, pid)
    step = plan.steps[f'keep:{VOL}:{vol["id"]}']
    assert step.params['stuck'] is True
    assert step.describe() == (
        f"{VOL} stuck-{status} ({vol['id']}) is '{status}' since {SINCE}: "
        'Cinder deletes a volume only when it is available, error, '
        'error_restoring, error_extending or error_managing; an admin can '
        'reset its state (openstack volume set --state error) or use '
        '--force-stuck'
    )
    assert f'delete:{VOL}:{vol["id"]}' not in plan.steps


@pytest.mark.parametrize(
    'status',
    [
        'available',
        'error',
        'error_restoring',
        'error_extending',
        'error_managing',
        'in-use',  # ends when its server goes
        'deleting',
    ],
)
def test_a_volume_cinder_deletes_or_that_ends_by_itself_is_not_stuck(
    cloud, conn, pid, status
):
    vol = volume(cloud, pid, status=status)
    _kinds, plan = plan_of(conn, pid)
    assert f'delete:{VOL}:{vol["id"]}' in plan.steps


@pytest.mark.parametrize(
    'coll,kind,make,status,refuses',
    [
        (
            'snapshots',
            SNAP,
            scenarios.snapshot,
            'error_deleting',
            'Cinder deletes a snapshot only when it is available or error',
        ),
        (
            'snapshots',
            SNAP,
            scenarios.snapshot,
            'creating',
            'Cinder deletes a snapshot only when it is available or error',
        ),
        (
            'backups',
            BACKUP,
            scenarios.backup,
            'error_deleting',
            'Cinder deletes a backup only when it is available or error',
        ),
        (
            'backups',
            BACKUP,
            scenarios.backup,
            'creating',
            'Cinder deletes a backup only when it is available or error',
        ),
    ],
)
def test_snapshots_and_backups_stuck(
    cloud, conn, pid, coll, kind, make, status, refuses
):
    vol = volume(cloud, pid, status='error')
    obj = make(cloud, pid, vol)
    obj.update(status=status, updated_at=SINCE)
    _kinds, plan = plan_of(conn, pid)
    step = plan.steps[f'keep:{kind}:{obj["id"]}']
    assert f"is '{status}' since {SINCE}: {refuses}; " in step.describe()
    # the volume waits for it in vain: it is skipped when the plan runs
    # (the cascade refuses the plan first: it keeps something)
    assert plan.kept()


def test_the_issues_project_is_drained_and_the_rest_goes(cloud, pid):
    # four volumes reset to error_deleting, error, creating, attaching, a
    # snapshot error_deleting of the 'error' one, a server in ERROR and a
    # locked one (issue #33)
    stuck = {
        status: stuck_volume(cloud, pid, status)
        for status in ('error_deleting', 'creating', 'attaching')
    }
    errored = volume(cloud, pid, 'stuck-error', 'error')
    snap = scenarios.snapshot(cloud, pid, errored)
    snap.update(status='error_deleting', updated_at=SINCE)
    vm_error = scenarios.server(cloud, pid, 'vm-error', status='ERROR')
    vm_locked = scenarios.server(cloud, pid, 'vm-locked')
    vm_locked['locked'] = True
    pc, targets, plan = cascade_for(cloud, pid)
    assert len(plan.stuck()) == 4
    assert not plan.refusing()
    with pytest.raises(CascadeError) as err:
        pc.execute(plan, targets)
    text = str(err.value)
    assert text.startswith(
        'The projects were not deleted and stay drained (disabled): their '
        'services will not delete 4 resource(s)'
    )
    assert "stuck-attaching" in text and "is 'attaching' since" in text
    assert 'http' not in text and 'Exception' not in text
    # no verification round: one run, stuck ones never asked to delete
    assert len(pc.runs) == 1
    for vol in stuck.values():
        assert cloud.get('volumes', vol['id']) is not None
        assert not [
            p
            for m, p in cloud.requests
            if m == 'DELETE' and p.endswith(vol['id'])
        ]
    # the rest is gone: both servers; the 'error' volume waits for its
    # snapshot (skipped); the project stays, drained
    assert cloud.get('servers', vm_error['id']) is None
    assert cloud.get('servers', vm_locked['id']) is None
    skipped = pc.runs[0].results[f'delete:{VOL}:{errored["id"]}@RegionOne']
    assert skipped.outcome == SKIPPED
    assert cloud.get('projects', pid) is not None


def test_a_volume_stuck_at_its_delete_is_not_retried(cloud, pid):
    # listed available; an admin resets it to attaching before its delete
    snap_src = scenarios.volume(cloud, pid, 'src')
    snap = scenarios.snapshot(cloud, pid, snap_src)
    vol = scenarios.volume(cloud, pid, 'clone', snapshot_id=snap['id'])
    kinds, plan = plan_of(conn=cloud.connection(), pid=pid)
    vol.update(status='attaching', updated_at=SINCE)
    result = run(cloud, kinds, plan)
    got = result.results[f'delete:{VOL}:{vol["id"]}']
    assert got.outcome == STUCK
    assert got.attempts == 1
    assert got.error.startswith(f"is 'attaching' since {SINCE}: Cinder")
    deletes = [
        p for m, p in cloud.requests if m == 'DELETE' and vol['id'] in p
    ]
    assert len(deletes) == 1
    # the snapshot it was cloned from waited for it, and is skipped
    after = result.results[f'delete:{SNAP}:{snap["id"]}']
    assert after.outcome == SKIPPED
    assert after.error == (f'after {VOL} clone ({vol["id"]}), which is stuck')
    assert not result.ok


def test_a_volume_merely_in_use_is_still_retried(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    kinds, plan = plan_of(conn, pid)
    vol['status'] = 'in-use'  # attached meanwhile: Cinder refuses (400)
    calls = []

    def detach(event):
        if event.kind == 'retry':
            calls.append(event)
            vol['status'] = 'available'

    result = Executor(
        cloud.connection(),
        kinds,
        clock=FakeClock(),
        retry=zero_delays(),
        on_event=detach,
    ).run(plan)
    assert result.results[f'delete:{VOL}:{vol["id"]}'].outcome == DONE
    assert len(calls) == 1


def test_the_progress_line_says_it_in_a_persons_words(cloud, pid):
    import io

    from osc_cascade.engine.events import Event, StepResult
    from osc_cascade.engine.resource import ResourceRef, delete
    from osc_cascade.v1.progress import Progress

    out = io.StringIO()
    progress = Progress(out, tty=False)
    ref = ResourceRef(VOL, 'v1', 'stuck-attaching', pid, region='RegionOne')
    step = delete(ref)
    why = block_storage.Volume().stuck_reason(ref, 'attaching', SINCE)
    progress(Event('started', step, run=1, planned=1))
    progress(Event(STUCK, step, why, StepResult(step, STUCK, error=why)))
    progress.close()
    assert (
        f"stuck: {VOL} stuck-attaching (v1) in RegionOne is 'attaching' "
        f'since {SINCE}: Cinder deletes a volume only when it is available'
    ) in out.getvalue()


# -- --force-stuck ----------------------------------------------------------


@pytest.mark.parametrize(
    'coll,kind,action',
    [
        ('volumes', VOL, 'reset_volume_state'),
        ('snapshots', SNAP, 'reset_snapshot_state'),
        ('backups', BACKUP, 'reset_backup_state'),
    ],
)
def test_force_stuck_resets_then_deletes(cloud, conn, pid, coll, kind, action):
    vol = volume(cloud, pid, status='error')
    obj = {
        'volumes': lambda: vol,
        'snapshots': lambda: scenarios.snapshot(cloud, pid, vol),
        'backups': lambda: scenarios.backup(cloud, pid, vol),
    }[coll]()
    obj.update(status='error_deleting', updated_at=SINCE)
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    [forced] = [s for s in plan.steps.values() if s.action == action]
    assert forced.params == {'status': 'error_deleting'}
    assert (forced.id, f'delete:{kind}:{obj["id"]}') in plan.edges
    assert not plan.kept()
    result = run(cloud, kinds, plan)
    assert result.ok, result.results
    assert cloud.reset_calls == [(obj['id'], {'status': 'error'})]
    assert cloud.get(coll, obj['id']) is None


def test_force_stuck_resets_after_the_projects_own_server_goes(
    cloud, conn, pid
):
    vm = scenarios.server(cloud, pid)
    vol = stuck_volume(cloud, pid, 'attaching', attach_to=vm)
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    reset = f'reset_volume_state:{VOL}:{vol["id"]}[status=attaching]'
    assert (f'delete:{compute.Server.name}:{vm["id"]}', reset) in plan.edges
    result = run(cloud, kinds, plan)
    assert result.ok, result.results
    # the server's delete detached it (Cinder's attachment_delete makes a
    # volume without attachments available): no reset was needed
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id']) is None


def test_force_stuck_detaches_the_projects_own_server_through_cinder(
    cloud, conn, pid
):
    # attached to the project's server, stuck detaching; the forced step
    # is met before the server goes (a plan file's order, a race): Cinder
    # refuses to delete the record Nova still uses, and the volume is kept
    vm = scenarios.server(cloud, pid)
    vol = stuck_volume(cloud, pid, 'detaching', attach_to=vm)
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    [forced] = [
        s for s in plan.steps.values() if s.action == 'reset_volume_state'
    ]
    with pytest.raises(Kept) as kept:
        kinds[VOL].apply(conn, forced)
    [(record, answer)] = cloud.attachment_deletes
    assert answer == 409
    assert str(kept.value) == (
        f'not forced: Cinder refuses to delete its attachment {record}: '
        f'server {vm["id"]} still has the volume in Nova'
    )
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id'])['status'] == 'detaching'


def test_force_stuck_detaches_a_half_way_record_of_the_projects_server(
    cloud, conn, pid
):
    # Nova's attach to the project's server stopped half-way: the record
    # ('attaching') is not in the volume's view, and survives the server
    vm = scenarios.server(cloud, pid)
    vol = stuck_volume(cloud, pid, 'attaching')
    record = cloud.hidden_attachment(vol, vm['id'], 'attaching')
    assert vol['attachments'] == []
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    forced = f'reset_volume_state:{VOL}:{vol["id"]}[detach=1,status=attaching]'
    assert forced in plan.steps, sorted(plan.steps)
    assert (f'delete:{compute.Server.name}:{vm["id"]}', forced) in plan.edges
    result = run(cloud, kinds, plan)
    assert result.ok, result.results
    # Cinder's own detach (its attachment delete), not a database reset:
    # the volume, with no record left, is available and goes as it is
    assert cloud.attachment_deletes == [(record['id'], 200)]
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id']) is None


def test_force_stuck_keeps_a_volume_being_attached_to_another_project(
    cloud, conn, pid
):
    # the record Nova's attach to B's server left: not in the volume's
    # view, whose attachments are empty; the plan keeps it all the same
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.server(cloud, other)
    vol = stuck_volume(cloud, pid, 'attaching')
    cloud.hidden_attachment(vol, theirs['id'], 'attaching')
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    step = plan.steps[f'keep:{VOL}:{vol["id"]}']
    assert step.params['reason'] == (
        f"attached to server {theirs['id']} of project {other} (a record "
        "'attaching'): deleting it would force-detach it from that guest"
    )
    assert not any(s.is_break_action for s in plan.steps.values())
    run(cloud, kinds, plan)
    assert cloud.attachment_deletes == [] and cloud.reset_calls == []
    assert cloud.get('volumes', vol['id'])['status'] == 'attaching'


def test_force_stuck_rereads_the_records_before_it_acts(cloud, conn, pid):
    vol = stuck_volume(cloud, pid, 'attaching')
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    # after the plan, an attach to B's server begins (and stops)
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.server(cloud, other)
    cloud.hidden_attachment(vol, theirs['id'], 'attaching')
    result = run(cloud, kinds, plan)
    [forced] = [r for r in result.results.values() if r.step.is_break_action]
    assert forced.outcome == KEPT
    assert forced.error == (
        f'not forced: attached to server {theirs["id"]} of project {other}'
    )
    assert cloud.attachment_deletes == [] and cloud.reset_calls == []


def test_force_stuck_keeps_a_record_that_names_no_server(cloud, conn, pid):
    vol = stuck_volume(cloud, pid, 'attaching')
    cloud.hidden_attachment(vol, None, 'reserved')
    vol['status'] = 'attaching'
    _kinds, plan = plan_of(conn, pid, force_stuck=True)
    step = plan.steps[f'keep:{VOL}:{vol["id"]}']
    assert 'which names no server' in step.params['reason']


def test_force_stuck_without_cinders_attachments_api_keeps_it(
    cloud, conn, pid
):
    # a Cinder before 3.27 cannot say who a volume is being attached to
    cloud.ATTACHMENTS = (3, 99)
    vol = stuck_volume(cloud, pid, 'attaching')
    _kinds, plan = plan_of(conn, pid, force_stuck=True)
    step = plan.steps[f'keep:{VOL}:{vol["id"]}']
    assert 'unlisted (attachments API, 3.27)' in step.params['reason']


def test_force_stuck_keeps_a_volume_attaching_to_another_projects_server(
    cloud, conn, pid
):
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.server(cloud, other)
    vol = stuck_volume(cloud, pid, 'attaching', attach_to=theirs)
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    step = plan.steps[f'keep:{VOL}:{vol["id"]}']
    assert 'attached to server' in step.params['reason']
    assert not any(
        s.action == 'reset_volume_state' for s in plan.steps.values()
    )
    run(cloud, kinds, plan)
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id'])['status'] == 'attaching'


def test_force_stuck_rereads_and_keeps_what_another_project_uses_now(
    cloud, conn, pid
):
    vol = stuck_volume(cloud, pid, 'attaching')
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    # attached, after the plan, to another project's server
    other = scenarios.project(cloud, 'B')['id']
    scenarios.attach(cloud, vol, scenarios.server(cloud, other))
    vol['status'] = 'attaching'
    result = run(cloud, kinds, plan)
    [forced] = [
        r for r in result.results.values() if r.step.action.startswith('reset')
    ]
    assert forced.outcome == KEPT
    assert forced.error.startswith('not forced: attached to server')
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id']) is not None


def test_force_stuck_rereads_and_keeps_what_left_the_project(cloud, conn, pid):
    vol = stuck_volume(cloud, pid, 'error_deleting')
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    other = scenarios.project(cloud, 'B')['id']
    vol['os-vol-tenant-attr:tenant_id'] = other
    result = run(cloud, kinds, plan)
    assert {r.outcome for r in result.results.values()} == {KEPT, SKIPPED}
    assert cloud.reset_calls == []


def test_force_stuck_without_admin_says_what_only_an_admin_can_do():
    # without admin: a token scoped to the project, which Cinder answers
    # with the project's volumes alone
    with ScopedCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        member = cloud.add_user('member')
        cloud.assign(member, 'member', project={'id': pid})
        vol = stuck_volume(cloud, pid, 'error_deleting')
        conn = cloud.connection_as(member, project_id=pid)
        _kinds, plan = plan_of(conn, pid, force_stuck=True, scoped=True)
    step = plan.steps[f'keep:{VOL}:{vol["id"]}']
    assert step.params['reason'].endswith(
        '; only an admin can reset its state (openstack volume set --state '
        'error) or use --force-stuck'
    )


def test_a_forced_reset_the_caller_may_not_make_fails_once(cloud, conn, pid):
    vol = stuck_volume(cloud, pid, 'error_deleting')
    cloud.admin_actions = False
    kinds, plan = plan_of(conn, pid, force_stuck=True)
    result = run(cloud, kinds, plan)
    [forced] = [
        r for r in result.results.values() if r.step.action.startswith('reset')
    ]
    assert forced.outcome == 'failed' and forced.attempts == 1
    assert result.results[f'delete:{VOL}:{vol["id"]}'].outcome == SKIPPED


def test_a_volume_stuck_during_the_cascade_ends_it_without_more_rounds(
    cloud, pid
):
    vol = volume(cloud, pid, 'data')
    pc, targets, plan = cascade_for(cloud, pid)
    rounds = []

    def on_event(event):
        if event.kind == 'round':
            rounds.append(event)
        if event.kind == 'started' and event.step.target.id == vol['id']:
            # an admin resets it as its delete is about to be made
            vol.update(status='maintenance', updated_at=SINCE)

    pc.on_event = on_event
    with pytest.raises(CascadeError) as err:
        pc.execute(plan, targets)
    assert str(err.value) == (
        'The projects were not deleted and stay drained (disabled): their '
        'services will not delete 1 resource(s) from the state they are '
        f"in, which waiting does not change: {VOL} data ({vol['id']}) in "
        f"RegionOne is 'maintenance' since {SINCE}: Cinder deletes a volume "
        'only when it is available, error, error_restoring, error_extending '
        'or error_managing; an admin can reset its state (openstack volume '
        'set --state error) or use --force-stuck'
    )
    assert rounds == []  # no verification round
    deletes = [
        p for m, p in cloud.requests if m == 'DELETE' and vol['id'] in p
    ]
    assert len(deletes) == 1


# -- the commands ------------------------------------------------------------


def test_the_dry_run_shows_it_stuck_and_exits_1(cloud, pid, osc):
    import json

    vol = stuck_volume(cloud, pid, 'attaching')
    result = osc(
        'project', 'delete', '--cascade', '--dry-run', 'A', '-f', 'json'
    )
    assert result.code == 1
    [row] = [r for r in json.loads(result.stdout) if r['ID'] == vol['id']]
    assert row['Action'] == 'stuck'
    assert row['Reason'].startswith(f"is 'attaching' since {SINCE}: Cinder")
    assert 'http' not in result.stderr
    # what the real run would do: the rest goes, the project stays drained
    assert (
        'The real run would delete the rest and leave the projects drained: '
        '1 resource(s) are stuck (see the plan).'
    ) in result.stderr
    assert cloud.changes == []


def test_the_dry_run_with_force_stuck_shows_the_reset(cloud, pid, osc):
    import json

    vol = stuck_volume(cloud, pid, 'attaching')
    result = osc(
        'project', 'delete', '--cascade', '--dry-run', '--force-stuck', 'A',
        '-f', 'json',
    )  # fmt: skip
    assert result.code == 0, result.stderr
    actions = {
        r['Action'] for r in json.loads(result.stdout) if r['ID'] == vol['id']
    }
    assert actions == {'reset_volume_state', 'delete'}
    assert cloud.changes == []


def test_the_commands_take_force_stuck(osc):
    for command in (('project', 'delete'), ('orphan', 'purge')):
        assert '--force-stuck' in osc('help', *command).stdout


def test_stuck_after_the_plan_with_force_stuck_says_to_run_again(cloud, pid):
    vol = volume(cloud, pid, 'data')
    kinds, plan = plan_of(cloud.connection(), pid, force_stuck=True)
    vol.update(status='error_deleting', updated_at=SINCE)
    got = run(cloud, kinds, plan).results[f'delete:{VOL}:{vol["id"]}']
    assert got.outcome == STUCK
    assert got.error.endswith(
        '; it got there after the plan was made: run again, and '
        '--force-stuck will reset it'
    )
    assert cloud.reset_calls == []
