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

"""Cinder kinds against the fake cloud."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import DONE, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import Step
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds import block_storage, compute
from osc_cascade.kinds.access import AccessKind
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud, ignoring_filters
from tests.unit.fakes.kinds import kinds_of, sdk_error
from tests.unit.fakes.run import cascade_for

VOL, SNAP, BACKUP = (
    block_storage.Volume.name,
    block_storage.Snapshot.name,
    block_storage.Backup.name,
)
SERVER = compute.Server.name


def discover(conn, pid, *kinds):
    kinds = kinds or (
        block_storage.Volume,
        block_storage.Snapshot,
        block_storage.Backup,
        compute.Server,
    )
    return [r for k in kinds for r in k().list(conn, pid)]


def plan_for(conn, pid):
    kinds = kinds_mod.build()
    return build_plan(
        Inventory(discover(conn, pid)), kinds, [{'id': pid, 'name': 'A'}]
    )


def d(kind, id_):
    return f'delete:{kind}:{id_}'


@pytest.mark.parametrize(
    'kind,path',
    [
        (block_storage.Volume, '/v3/volumes/detail'),
        (block_storage.Snapshot, '/v3/snapshots/detail'),
        (block_storage.Backup, '/v3/backups/detail'),
    ],
)
def test_list_calls_carry_the_project_filter(cloud, conn, pid, kind, path):
    list(kind().list(conn, pid))
    calls = [p for m, p in cloud.requests if p.startswith(path)]
    assert len(calls) == 1
    assert f'project_id={pid}' in calls[0]
    assert 'all_tenants=True' in calls[0]


def test_other_projects_volumes_snapshots_backups_never_get_in():
    with ignoring_filters(FakeCloud)() as cloud:
        a = scenarios.project(cloud, 'A')['id']
        b = scenarios.project(cloud, 'B')['id']
        mine = scenarios.volume(cloud, a, 'mine')
        theirs = scenarios.volume(cloud, b, 'theirs')
        scenarios.snapshot(cloud, b, theirs)
        scenarios.backup(cloud, b, theirs)
        my_snap = scenarios.snapshot(cloud, a, mine)
        my_backup = scenarios.backup(cloud, a, mine)
        conn = cloud.connection()
        listed = conn.block_storage.volumes(all_projects=True, project_id=a)
        assert len(list(listed)) == 2
        refs = discover(
            conn,
            a,
            block_storage.Volume,
            block_storage.Snapshot,
            block_storage.Backup,
        )
        assert sorted(r.id for r in refs) == sorted(
            [mine['id'], my_snap['id'], my_backup['id']]
        )
        assert {r.project_id for r in refs} == {a}


def test_volume_attached_to_a_project_server_goes_after_it(cloud, conn, pid):
    vm = scenarios.server(cloud, pid)
    vol = scenarios.volume(cloud, pid, attach_to=vm)
    [ref] = discover(conn, pid, block_storage.Volume)
    assert ref.attrs['attachments'] == [
        {
            'server_id': vm['id'],
            'attachment_id': vol['attachments'][0]['attachment_id'],
        }
    ]
    plan = plan_for(conn, pid)
    assert (d(SERVER, vm['id']), d(VOL, vol['id'])) in plan.edges
    assert not any(s.action == 'detach_volume' for s in plan.steps.values())


def test_volume_attached_to_another_projects_server_is_kept(cloud, pid):
    # the reproduction: an admin attached the project's volume to another
    # project's server; the cascade force-detached it and deleted it
    other = scenarios.project(cloud, 'B')['id']
    their_vm = scenarios.server(cloud, other)
    vol = scenarios.volume(cloud, pid, attach_to=their_vm)
    assert kept_and_refused(cloud, pid, vol['id']) == (
        f'attached to server {their_vm["id"]} of project {other}: deleting '
        f'it would force-detach it from that guest'
    )
    [still] = cloud.get('volumes', vol['id'])['attachments']
    assert still['server_id'] == their_vm['id']


def test_a_stale_attachment_to_a_server_that_is_gone_is_detached(
    cloud, conn, pid
):
    vol = scenarios.volume(cloud, pid)
    gone = {'id': 'server-gone', 'volumes': []}  # never in Nova
    scenarios.attach(cloud, vol, gone)
    attachment = vol['attachments'][0]['attachment_id']
    plan = plan_for(conn, pid)
    assert plan.kept() == []
    [detach] = [s for s in plan.steps.values() if s.action == 'detach_volume']
    assert detach.target.id == vol['id']
    assert detach.params == {
        'server_id': 'server-gone',
        'attachment_id': attachment,
    }
    assert (detach.id, d(VOL, vol['id'])) in plan.edges
    # Nova was asked, as admin, whether the server exists
    assert ('GET', '/v2.1/servers/server-gone') in cloud.requests
    # applying it detaches exactly that attachment, by force
    block_storage.Volume().apply(conn, detach)
    assert cloud.changes == [('POST', f'/v3/volumes/{vol["id"]}/action')]
    assert cloud.get('volumes', vol['id'])['attachments'] == []
    assert cloud.get('volumes', vol['id'])['status'] == 'available'


def test_an_attachment_that_names_no_server_keeps_the_volume(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    vol['status'] = 'in-use'
    vol['attachments'].append(
        {'server_id': None, 'attachment_id': 'att-1', 'volume_id': vol['id']}
    )
    [kept] = plan_for(conn, pid).kept()
    assert kept.target.id == vol['id']
    assert 'attachment att-1, which names no server' in kept.params['reason']


def test_servers_are_listed_once_and_only_foreign_ones_are_asked(
    cloud, conn, pid
):
    # cost: one list of the project's servers for all its attachments, a
    # GET only for a server that is not in it; none without attachments
    mine = [scenarios.server(cloud, pid, f'vm{i}') for i in range(3)]
    for i, vm in enumerate(mine):
        scenarios.volume(cloud, pid, f'v{i}', attach_to=vm)
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.server(cloud, other)
    scenarios.volume(cloud, pid, 'lent', attach_to=theirs)
    scenarios.volume(cloud, pid, 'loose')
    list(block_storage.Volume().list(conn, pid))
    nova = [p for m, p in cloud.requests if p.startswith('/v2.1/servers')]
    assert len([p for p in nova if p.startswith('/v2.1/servers/detail')]) == 1
    assert [p for p in nova if not p.startswith('/v2.1/servers/detail')] == [
        f'/v2.1/servers/{theirs["id"]}'
    ]
    cloud.requests.clear()
    for vol in cloud.all('volumes'):
        vol['attachments'] = []
    list(block_storage.Volume().list(conn, pid))
    assert not [p for m, p in cloud.requests if p.startswith('/v2.1/')]


def test_a_failing_server_lookup_is_retried_by_discovery(cloud, pid):
    other = scenarios.project(cloud, 'B')['id']
    their_vm = scenarios.server(cloud, other)
    vol = scenarios.volume(cloud, pid, attach_to=their_vm)
    cloud.faults.append(('GET', f'/servers/{their_vm["id"]}$', 503))
    _pc, _targets, plan = cascade_for(cloud, pid)
    assert [k.target.id for k in plan.kept()] == [vol['id']]
    assert not cloud.faults  # the fault was answered, then retried


def test_clone_then_snapshot_then_volume(cloud, conn, pid):
    base = scenarios.volume(cloud, pid, 'base')
    snap = scenarios.snapshot(cloud, pid, base)
    clone = scenarios.volume(cloud, pid, 'clone', snapshot_id=snap['id'])
    plan = plan_for(conn, pid)
    assert plan.order() == [
        d(VOL, clone['id']),
        d(SNAP, snap['id']),
        d(VOL, base['id']),
    ]
    assert plan.edges == {
        (d(VOL, clone['id']), d(SNAP, snap['id'])),
        (d(SNAP, snap['id']), d(VOL, base['id'])),
    }


def test_volume_from_another_projects_snapshot_has_no_edge(cloud, conn, pid):
    other = scenarios.project(cloud, 'B')['id']
    their_snap = scenarios.snapshot(
        cloud, other, scenarios.volume(cloud, other)
    )
    scenarios.volume(cloud, pid, snapshot_id=their_snap['id'])
    assert plan_for(conn, pid).edges == set()


def test_full_backups_alone_have_no_order(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    for name in ('b1', 'b2', 'b3'):
        scenarios.backup(cloud, pid, vol, name)
    plan = plan_for(conn, pid)
    backup_edges = [e for e in plan.edges if BACKUP in e[0] and BACKUP in e[1]]
    assert backup_edges == []


def test_with_incrementals_backups_go_newest_first(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    full = scenarios.backup(cloud, pid, vol, 'full')
    incr1 = scenarios.backup(cloud, pid, vol, 'incr1', incremental=True)
    incr2 = scenarios.backup(cloud, pid, vol, 'incr2', incremental=True)
    # another volume's backups are a chain of their own
    other = scenarios.volume(cloud, pid, 'other')
    lone = scenarios.backup(cloud, pid, other, 'lone')
    plan = plan_for(conn, pid)
    backup_edges = {e for e in plan.edges if BACKUP in e[0]}
    assert backup_edges == {
        (d(BACKUP, incr2['id']), d(BACKUP, incr1['id'])),
        (d(BACKUP, incr1['id']), d(BACKUP, full['id'])),
    }
    assert not any(d(BACKUP, lone['id']) in e for e in plan.edges)


def test_backups_are_ordered_by_when_they_were_taken_not_by_listing(
    cloud, conn, pid
):
    vol = scenarios.volume(cloud, pid)
    older = scenarios.backup(cloud, pid, vol, 'z-old')
    newer = scenarios.backup(cloud, pid, vol, 'a-new', incremental=True)
    # listed newest first, named the other way round
    cloud.db['backups'] = dict(reversed(list(cloud.db['backups'].items())))
    plan = plan_for(conn, pid)
    assert (d(BACKUP, newer['id']), d(BACKUP, older['id'])) in plan.edges


def _one_of(cloud, pid, coll):
    """A volume, or a snapshot or backup of a new volume."""
    vol = scenarios.volume(cloud, pid)
    if coll == 'volumes':
        return vol
    make = scenarios.snapshot if coll == 'snapshots' else scenarios.backup
    return make(cloud, pid, vol)


@pytest.mark.parametrize(
    'kind,coll',
    [
        (block_storage.Volume, 'volumes'),
        (block_storage.Snapshot, 'snapshots'),
        (block_storage.Backup, 'backups'),
    ],
)
def test_delete_then_status_until_404(cloud, conn, pid, kind, coll):
    obj = _one_of(cloud, pid, coll)
    [ref] = [r for r in kind().list(conn, pid) if r.id == obj['id']]
    kind().delete(conn, ref)
    assert cloud.deleted_order() == [f'/v3/{coll}/{obj["id"]}']
    assert kind().status(conn, ref) == 'deleting'
    with pytest.raises(sdk_exc.NotFoundException):
        kind().status(conn, ref)


def test_delete_of_a_missing_volume_raises_not_found(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    [ref] = discover(conn, pid, block_storage.Volume)
    cloud._remove('volumes', vol['id'])
    with pytest.raises(sdk_exc.NotFoundException):
        block_storage.Volume().delete(conn, ref)


def test_an_attached_volume_delete_is_classified_in_use(cloud, conn, pid):
    vm = scenarios.server(cloud, pid)
    scenarios.volume(cloud, pid, attach_to=vm)
    [ref] = discover(conn, pid, block_storage.Volume)
    with pytest.raises(sdk_exc.BadRequestException) as err:
        block_storage.Volume().delete(conn, ref)
    assert block_storage.Volume().is_in_use(err.value)


@pytest.mark.parametrize(
    'exc,in_use',
    [
        (
            sdk_error(
                sdk_exc.BadRequestException,
                400,
                'Invalid volume: Volume status must be available',
            ),
            True,
        ),
        (
            sdk_error(
                sdk_exc.BadRequestException,
                400,
                'Invalid snapshot: has dependent volumes',
            ),
            True,
        ),
        (sdk_error(sdk_exc.BadRequestException, 400, 'Bad parameter'), False),
        (sdk_error(sdk_exc.ConflictException, 409, 'busy'), True),
        (sdk_error(sdk_exc.HttpException, 500, 'Invalid state'), False),
    ],
)
def test_in_use_classification(exc, in_use):
    for kind in kinds_of(block_storage):
        # not a delete: no status; a transfer's delete waits for nothing
        if not issubclass(kind, (AccessKind, block_storage.VolumeTransfer)):
            assert kind().is_in_use(exc) is in_use


def test_error_statuses():
    assert 'error_deleting' in block_storage.Volume.error_statuses
    assert 'error' in block_storage.Backup.error_statuses
    # a volume in 'error' is deletable, not a failed delete
    assert 'error' not in block_storage.Volume.error_statuses


def test_volume_apply_refuses_unknown_actions(cloud, conn, pid):
    scenarios.volume(cloud, pid)
    [ref] = discover(conn, pid, block_storage.Volume)
    with pytest.raises(NotImplementedError, match='no action unprotect'):
        block_storage.Volume().apply(conn, Step('unprotect', ref))


def test_the_plan_runs_against_cinder_in_an_order_it_accepts(cloud, conn, pid):
    vm = scenarios.server(cloud, pid)
    other = scenarios.project(cloud, 'B')['id']
    their_vm = scenarios.server(cloud, other)
    attached = scenarios.volume(cloud, pid, 'attached', attach_to=vm)
    stale = scenarios.volume(cloud, pid, 'stale')
    scenarios.attach(cloud, stale, {'id': 'server-gone', 'volumes': []})
    snap = scenarios.snapshot(cloud, pid, attached)
    scenarios.volume(cloud, pid, 'clone', snapshot_id=snap['id'])
    scenarios.backup(cloud, pid, attached, 'full')
    scenarios.backup(cloud, pid, attached, 'incr', incremental=True)
    plan = plan_for(conn, pid)
    clock = FakeClock()
    result = Executor(
        conn, kinds_mod.build(), clock=clock, retry=RetryPolicy(max_attempts=3)
    ).run(plan)
    assert result.ok, [r.error for r in result.results.values()]
    assert {r.outcome for r in result.results.values()} == {DONE}
    assert cloud.owned_by(pid) == []
    # the server of the other project keeps running, untouched
    assert cloud.exists('servers', their_vm['id'])
    assert cloud.get('volumes', stale['id']) is None


@pytest.mark.parametrize(
    'kind,coll',
    [
        (block_storage.Volume, 'volumes'),
        (block_storage.Snapshot, 'snapshots'),
        (block_storage.Backup, 'backups'),
    ],
)
def test_statuses_of_a_project_in_one_list(cloud, conn, pid, kind, coll):
    obj = _one_of(cloud, pid, coll)
    other = scenarios.project(cloud, 'other')['id']
    theirs = scenarios.volume(cloud, other)
    [ref] = [r for r in kind().list(conn, pid) if r.id == obj['id']]
    kind().delete(conn, ref)
    cloud.requests.clear()
    statuses = kind().list_statuses(conn, pid)
    assert statuses[obj['id']] == 'deleting'
    assert theirs['id'] not in statuses
    assert len(cloud.requests) == 1
    assert obj['id'] not in kind().list_statuses(conn, pid)
