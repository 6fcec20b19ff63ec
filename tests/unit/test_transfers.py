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

"""Issue 29 (1): a resource the project offered to another project (a
pending transfer) must never be deleted once the other project has
accepted it, however long the cascade has been retrying its delete."""

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, FAILED, KEPT, SKIPPED, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import block_storage, dns, shared_file_system
from osc_cascade.kinds import image as image_kinds
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud, ServicesCloud, ignoring_filters
from tests.unit.fakes.common import Conflict
from tests.unit.fakes.run import cascade_for, run_kind, zero_delays

VOL, SNAP = block_storage.Volume.name, block_storage.Snapshot.name


def d(kind, id_):
    return f'delete:{kind}:{id_}'


def test_volume_accepted_by_another_project_while_retried_is_not_deleted(
    cloud,
):
    """The issue's reproduction: A offered its volume to B (the volume is
    ``awaiting-transfer``, Cinder refuses its delete with 400 "Invalid
    volume"); B accepts while the cascade retries. B's volume must
    survive."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    offer = cloud.offer_volume(vol)
    pc, targets, plan = cascade_for(cloud, a)
    accepted = []

    def b_accepts(event):
        if event.kind == 'retry' and not accepted:
            accepted.append(cloud.accept_volume_transfer(offer['id'], b))

    pc.on_event = b_accepts
    try:
        pc.execute(plan, targets)
    except Exception:  # refusing is fine; deleting B's volume is not
        pass
    if accepted == [True]:  # B took it: it is B's, and it stays
        assert cloud.get('volumes', vol['id']) is not None


def test_the_offer_is_in_the_plan_and_withdrawn_before_the_volume(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    snap = scenarios.snapshot(cloud, a, vol)
    offer = cloud.offer_volume(vol)
    pc, targets, plan = cascade_for(cloud, a)
    [transfer] = [s for s in plan.steps if offer['id'] in s]
    assert transfer.startswith(d(block_storage.VolumeTransfer.name, ''))
    [volume] = [s for s in plan.steps if vol['id'] in s]
    [snapshot] = [s for s in plan.steps if snap['id'] in s]
    assert (transfer, volume) in plan.edges
    assert (transfer, snapshot) in plan.edges
    pc.execute(plan, targets)
    deleted = cloud.deleted_order()
    assert deleted.index(f'/v3/volume-transfers/{offer["id"]}') < min(
        cloud.index_of_delete('/volumes', vol['id']),
        cloud.index_of_delete('/snapshots', snap['id']),
    )
    assert not cloud.accept_volume_transfer(offer['id'], b)  # withdrawn
    # Cinder never refused the volume's delete: no retry
    assert cloud.deleted_order().count(f'/v3/volumes/{vol["id"]}') == 1


def test_another_projects_transfers_are_not_listed():
    with ignoring_filters(FakeCloud)() as cloud:
        a = scenarios.project(cloud, 'A')['id']
        b = scenarios.project(cloud, 'B')['id']
        cloud.offer_volume(scenarios.volume(cloud, b))
        conn = cloud.connection()
        assert list(block_storage.VolumeTransfer().list(conn, a)) == []


def moved_between_attempts(cloud, vol, to):
    """An executor's on_event: the first retry of the volume's delete
    finds it moved to project ``to`` (a transfer accepted meanwhile)."""

    def on_event(event):
        if event.kind == 'retry' and event.step.target.id == vol['id']:
            vol['os-vol-tenant-attr:tenant_id'] = to

    return on_event


def test_a_volume_given_away_between_attempts_is_kept(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    kinds = {VOL: block_storage.Volume()}
    [ref] = kinds[VOL].list(cloud.connection(), a)
    plan = build_plan(Inventory([ref]), kinds, [{'id': a, 'name': 'A'}])
    # Cinder refuses the first delete (in use: retried)
    cloud.faults.append(('DELETE', f'/volumes/{vol["id"]}', 409))
    result = Executor(
        cloud.connection(),
        kinds,
        clock=FakeClock(),
        retry=zero_delays(),
        on_event=moved_between_attempts(cloud, vol, b),
    ).run(plan)
    [step] = result.results.values()
    assert (step.outcome, step.error) == (KEPT, f'owner is now {b}')
    assert cloud.get('volumes', vol['id']) is not None
    # one DELETE (refused), one GET before each of the two attempts
    path = f'/v3/volumes/{vol["id"]}'
    assert [
        (m, p.split('?')[0]) for m, p in cloud.requests if p.startswith(path)
    ] == [
        ('GET', path),
        ('DELETE', path),
        ('GET', path),
    ]
    assert kinds[VOL].facts.kept() == [(ref, f'owner is now {b}')]


def test_a_cascade_keeps_the_project_of_a_volume_given_away(cloud):
    """Through the whole cascade: the kept volume is in the run's results
    and the project is not deleted, though it lists nothing any more."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    pc, targets, plan = cascade_for(cloud, a)
    cloud.faults.append(('DELETE', f'/volumes/{vol["id"]}', 409))
    pc.on_event = moved_between_attempts(cloud, vol, b)
    with pytest.raises(CascadeError) as refused:
        pc.execute(plan, targets)
    assert str(refused.value) == (
        'The projects were not deleted and stay drained (disabled): the '
        'run kept what was no longer theirs to delete: block_storage.volume '
        f'vol ({vol["id"]}) in RegionOne: owner is now {b}'
    )
    [kept] = [
        r for run in pc.runs for r in run.results.values() if r.outcome == KEPT
    ]
    assert (kept.step.target.id, kept.error) == (
        vol['id'],
        f'owner is now {b}',
    )
    assert cloud.get('volumes', vol['id']) is not None
    assert cloud.exists('projects', a)


def test_a_volume_offered_after_the_plan_is_kept_not_retried(cloud):
    """The offer is not in the plan (made after it was listed): the
    volume's delete finds it ``awaiting-transfer`` and keeps it at once,
    instead of 90 s of retrying Cinder's 400."""
    a = scenarios.project(cloud, 'A')['id']
    vol = scenarios.volume(cloud, a)
    kinds = {VOL: block_storage.Volume()}
    [ref] = kinds[VOL].list(cloud.connection(), a)
    plan = build_plan(Inventory([ref]), kinds, [{'id': a, 'name': 'A'}])
    cloud.offer_volume(vol)
    result = Executor(
        cloud.connection(), kinds, clock=FakeClock(), retry=zero_delays()
    ).run(plan)
    [step] = result.results.values()
    assert (step.outcome, step.error) == (
        KEPT,
        'it is awaiting-transfer: offered to another project, and the '
        'offer could not be withdrawn',
    )
    assert f'/v3/volumes/{vol["id"]}' not in cloud.deleted_order()


def test_an_offer_that_cannot_be_withdrawn_keeps_its_volume(cloud):
    """The transfer's delete fails (here: forbidden): the volume's delete
    is skipped after it, one line, and never tried."""
    a = scenarios.project(cloud, 'A')['id']
    vol = scenarios.volume(cloud, a)
    offer = cloud.offer_volume(vol)
    cloud.forbidden.add(f'/volume-transfers/{offer["id"]}')
    pc, targets, plan = cascade_for(cloud, a)
    with pytest.raises(CascadeError, match='not deleted'):
        pc.execute(plan, targets)
    results = {r.step.target.id: r for r in pc.runs[0].results.values()}
    assert results[offer['id']].outcome == FAILED
    assert results[vol['id']].outcome == SKIPPED
    assert results[vol['id']].error == (
        'after delete block_storage.volume_transfer offer '
        f'({offer["id"]}) in RegionOne, '
        'which was failed'
    )
    assert f'/v3/volumes/{vol["id"]}' not in cloud.deleted_order()
    assert cloud.get('volumes', vol['id'])['status'] == 'awaiting-transfer'


def test_a_volume_gone_before_its_delete_is_done_without_a_delete(cloud):
    a = scenarios.project(cloud, 'A')['id']
    vol = scenarios.volume(cloud, a)
    kinds = {VOL: block_storage.Volume()}
    [ref] = kinds[VOL].list(cloud.connection(), a)
    cloud._remove('volumes', vol['id'])
    result = run_kind(cloud, kinds[VOL], [ref])
    [step] = result.results.values()
    assert step.outcome == DONE
    assert f'/v3/volumes/{vol["id"]}' not in cloud.deleted_order()


# -- Designate ---------------------------------------------------------------


@pytest.fixture
def services():
    with ServicesCloud() as c:
        yield c


def test_a_zones_offer_is_withdrawn_before_the_zone(services):
    cloud = services
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    c = scenarios.project(cloud, 'C')['id']
    zone = cloud.zone(a, 'a.example.')
    offer = cloud.offer_zone(zone, b)
    # C's offer to A is C's, not A's to withdraw
    to_a = cloud.offer_zone(cloud.zone(c, 'c.example.'), a)
    pc, targets, plan = cascade_for(cloud, a)
    [withdraw] = [s for s in plan.steps if offer['id'] in s]
    [delete_zone] = [s for s in plan.steps if zone['id'] in s]
    assert (withdraw, delete_zone) in plan.edges
    assert not [s for s in plan.steps if to_a['id'] in s]
    pc.execute(plan, targets)
    assert not cloud.accept_zone_transfer(offer['id'], b)
    assert cloud.get('zone_transfer_requests', to_a['id']) is not None
    calls = [(m, p) for m, p, _sudo in cloud.dns_calls if m == 'DELETE']
    assert calls.index(
        ('DELETE', f'/v2/zones/tasks/transfer_requests/{offer["id"]}')
    ) < calls.index(('DELETE', f'/v2/zones/{zone["id"]}'))


def test_a_zone_given_away_before_its_delete_is_kept(services):
    """On A's behalf, B's zone answers 404 and passed for gone: read
    across projects, it is named with its new owner and kept."""
    cloud = services
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    zone = cloud.zone(a, 'a.example.')
    kinds = {dns.Zone.name: dns.Zone()}
    [ref] = kinds[dns.Zone.name].list(cloud.connection(), a)
    offer = cloud.offer_zone(zone, b)
    assert cloud.accept_zone_transfer(offer['id'], b)
    [step] = run_kind(cloud, kinds[dns.Zone.name], [ref]).results.values()
    assert (step.outcome, step.error) == (KEPT, f'owner is now {b}')
    assert cloud.get('zones', zone['id'])['status'] == 'ACTIVE'
    assert ('DELETE', f'/v2/zones/{zone["id"]}') not in {
        (m, p) for m, p, _sudo in cloud.dns_calls
    }


# -- Manila ------------------------------------------------------------------


def test_a_shares_offer_is_withdrawn_before_the_share(services):
    cloud = services
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    share = cloud.share(a)
    offer = cloud.offer_share(share)
    pc, targets, plan = cascade_for(cloud, a)
    [withdraw] = [s for s in plan.steps if offer['id'] in s]
    [delete_share] = [s for s in plan.steps if share['id'] in s]
    assert (withdraw, delete_share) in plan.edges
    pc.execute(plan, targets)
    assert not cloud.accept_share_transfer(offer['id'], b)
    assert cloud.index_of_delete(
        '/share-transfers', offer['id']
    ) < cloud.index_of_delete('/shares', share['id'])


def test_a_share_accepted_by_another_project_while_retried_is_kept(
    services,
):
    """The offer is not in the plan (made after the listing): Manila
    refuses the delete (400 "Invalid share") and the share is kept at
    once; accepted later, it is B's, whole."""
    cloud = services
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    share = cloud.share(a)
    kind = shared_file_system.Share()
    [ref] = kind.list(cloud.connection(), a)
    offer = cloud.offer_share(share)
    [step] = run_kind(cloud, kind, [ref]).results.values()
    assert (step.outcome, step.error) == (
        KEPT,
        'it is awaiting_transfer: offered to another project, and the '
        'offer could not be withdrawn',
    )
    assert cloud.accept_share_transfer(offer['id'], b)
    [step] = run_kind(cloud, kind, [ref]).results.values()
    assert (step.outcome, step.error) == (KEPT, f'owner is now {b}')
    assert cloud.get('shares', share['id'])['project_id'] == b


def test_share_transfers_before_2_77_are_none(services, monkeypatch):
    cloud = services
    a = scenarios.project(cloud, 'A')['id']
    cloud.offer_share(cloud.share(a))
    monkeypatch.setattr(shared_file_system, 'TRANSFER_MICROVERSION', '2.76')
    kind = shared_file_system.ShareTransfer()
    assert kind.list(cloud.connection(), a) == []


# -- Glance ------------------------------------------------------------------


@pytest.mark.parametrize(
    'change,why',
    [
        ({'owner': 'p-b'}, 'owner is now p-b'),
        ({'visibility': 'public'}, 'it is now public: others may use it'),
    ],
)
def test_an_image_given_away_or_published_since_the_plan_is_kept(
    cloud, change, why
):
    a = scenarios.project(cloud, 'A')['id']
    image = scenarios.image(cloud, a)
    kind = image_kinds.Image()
    [ref] = kind.list(cloud.connection(), a)
    image.update(change)
    [step] = run_kind(cloud, kind, [ref]).results.values()
    assert (step.outcome, step.error) == (KEPT, why)
    assert cloud.get('images', image['id']) is not None


# -- the command ---------------------------------------------------------------


def test_the_command_withdraws_the_offer_then_deletes_all(cloud, osc):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    offer = cloud.offer_volume(vol)
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('volumes', vol['id'])
    assert not cloud.exists('projects', a)
    assert not cloud.accept_volume_transfer(offer['id'], b)


def test_the_command_keeps_a_volume_given_away_and_the_project(
    cloud, osc, monkeypatch
):
    """B accepts right after Cinder refused A's delete: the retry finds the
    volume B's, keeps it, and the project stays (exit 1, the reason)."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    check = cloud._check_delete_volume

    def refused_then_accepted(volume):
        if volume['os-vol-tenant-attr:tenant_id'] == a:
            volume['os-vol-tenant-attr:tenant_id'] = b
            raise Conflict(
                400, {'badRequest': {'code': 400, 'message': 'Invalid volume'}}
            )
        check(volume)

    monkeypatch.setattr(cloud, '_check_delete_volume', refused_then_accepted)
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 1
    assert (
        'the run kept what was no longer theirs to delete: '
        f'block_storage.volume vol ({vol["id"]}) in RegionOne: owner is now '
        f'{b}'
    ) in result.stderr
    assert cloud.get('volumes', vol['id'])['os-vol-tenant-attr:tenant_id'] == b
    assert cloud.exists('projects', a)
