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

"""The drain (workflows.drain): the project disabled and its quotas frozen
in every service, each change recorded on the project before it is made;
the restore that reverses the record; the release of the quotas."""

import dataclasses
import json
import threading

import pytest

from osc_cascade.engine import resource
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, Event
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds import quota
from osc_cascade.kinds.quota import unified_limits as unified_limits_api
from osc_cascade.kinds.quota.block_storage import BlockStorageQuotaApi
from osc_cascade.kinds.quota.load_balancer import (
    LoadBalancerQuota,
    LoadBalancerQuotaApi,
)
from osc_cascade.kinds.quota.network import NetworkQuotaApi
from osc_cascade.workflows import drain, drain_record, quota_freeze
from osc_cascade.workflows.lowering import Lowering
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import AUTH_URL
from tests.unit.fakes.quota import NOVA_DEFAULT_QUOTAS
from tests.unit.fakes.run import cascade_for, zero_delays
from tests.unit.fakes.shared_file_system import MANILA_DEFAULT_QUOTAS

REGION = 'RegionOne'

#: the fake's service -> the project's own values before the drain
OWN = {
    'nova': {'instances': 50},
    'neutron': {'network': 50},
    'octavia': {'load_balancer': 5},
    'manila': {'shares': 5},
    'barbican': {'secrets': 5},
    'magnum': {'Cluster': 3},
}


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def project(cloud):
    """A project with quotas of its own everywhere (but Cinder) and a
    10 GB volume."""
    pid = scenarios.project(cloud, 'A')['id']
    for service, values in OWN.items():
        cloud.set_quota(service, pid, **values)
    scenarios.volume(cloud, pid, size=10)
    return pid


def drainer(cloud, regions=None):
    conn = cloud.connection()
    return drain.Drain(
        conn,
        regions or Regions(conn),
        retry=zero_delays(),
        clock=FakeClock(),
        now=lambda: '2026-01-01T00:00:00+00:00',
    )


def stored(cloud, pid):
    project = cloud.get('projects', pid)
    return json.loads(project[drain_record.RECORD]), project[
        drain_record.STATE
    ]


def test_the_drain_disables_freezes_and_records(cloud, project):
    record, notes = drainer(cloud).drain(project)

    assert notes == []
    assert cloud.get('projects', project)['enabled'] is False
    assert stored(cloud, project) == (record, drain_record.DRAINED)
    assert record['enabled'] is True
    assert record['started_at'] == '2026-01-01T00:00:00+00:00'
    assert record['started_by']['user_id']
    quotas = record['quotas'][REGION]
    assert {e['state'] for e in quotas.values()} == {drain_record.FROZEN}
    # what each service had of its own before
    assert quotas['compute']['before'] == OWN['nova']
    assert quotas['network']['before'] == OWN['neutron']
    assert quotas['block-storage']['before'] == {}
    assert quotas['load-balancer']['before'] == OWN['octavia']
    assert quotas['key-manager']['before'] == OWN['barbican']
    assert (
        quotas['container-infrastructure-management']['before']
        == (OWN['magnum'])
    )
    # frozen: at zero with force, Cinder at its usage
    assert cloud.quota_of('nova', project)['instances'] == 0
    assert set(cloud.quota_of('neutron', project).values()) == {0}
    assert set(cloud.quota_of('manila', project).values()) == {0}
    assert cloud.quota_of('cinder', project) == {
        'volumes': 1,
        'gigabytes': 10,
        'snapshots': 0,
        'backups': 0,
    }
    assert quotas['block-storage']['frozen']['gigabytes'] == 10
    assert set(cloud.quota_of('octavia', project).values()) == {0}
    assert set(cloud.quota_of('barbican', project).values()) == {0}
    assert cloud.quota_of('magnum', project) == {'Cluster': 0}


def test_each_change_is_recorded_before_it_is_made(cloud, project):
    drainer(cloud).drain(project)
    changes = [
        (m, 'keystone' if p.startswith('/v3/projects/') else 'service')
        for m, p in cloud.changes
    ]
    writes = [i for i, c in enumerate(changes) if c[1] == 'service']
    # one a service (Cinder had no own row: its PUT makes one), but
    # Keystone, which has no registered unified limits here
    assert len(writes) == len(quota.QUOTA_APIS) - 1
    # the record first (begin), the intents and the disable, the freezes
    # at once, the stage: drained
    assert changes[:2] == [('PATCH', 'keystone')] * 2
    assert writes == list(range(2, 2 + len(writes)))
    assert changes[2 + len(writes) :] == [('PATCH', 'keystone')]


def test_a_freeze_is_made_only_once_its_intent_is_stored(
    cloud, project, monkeypatch
):
    """What the project holds when each service is asked to freeze: the
    intent of that freeze, and the project disabled."""
    seen = {}

    def watched(api_class):
        made = api_class.set

        def set_(self, conn, project_id, values):
            record, state = stored(cloud, project_id)
            entry = record['quotas'][REGION][self.service_type]
            seen[self.service_type] = (
                entry['state'],
                entry['frozen'] == values,
                state,
                cloud.get('projects', project_id)['enabled'],
            )
            return made(self, conn, project_id, values)

        return set_

    for api in quota.QUOTA_APIS:
        monkeypatch.setattr(type(api), 'set', watched(type(api)))
    drainer(cloud).drain(project)

    assert set(seen) == {a.service_type for a in quota.QUOTA_APIS} - {
        'identity'
    }
    assert set(seen.values()) == {
        (drain_record.INTENT, True, drain_record.DRAINING, False)
    }


def test_a_crash_after_an_intent_leaves_a_record_a_later_run_continues(
    cloud, project, monkeypatch
):
    def crash(self, conn, project_id, values):
        raise SystemExit('killed')

    monkeypatch.setattr(NetworkQuotaApi, 'set', crash)
    with pytest.raises(SystemExit):
        drainer(cloud).drain(project)
    record, state = stored(cloud, project)
    assert state == drain_record.DRAINING
    assert record['quotas'][REGION]['network'] == {
        'before': OWN['neutron'],
        'frozen': dict.fromkeys(quota_keys(cloud, project), 0),
        'state': drain_record.INTENT,
    }
    assert cloud.get('projects', project)['enabled'] is False

    monkeypatch.undo()
    record, _notes = drainer(cloud).drain(project)
    # the values before are the recorded ones, not the frozen ones now
    assert record['quotas'][REGION]['compute']['before'] == OWN['nova']
    assert record['quotas'][REGION]['network']['before'] == OWN['neutron']
    assert record['enabled'] is True
    assert set(cloud.quota_of('neutron', project).values()) == {0}


def quota_keys(cloud, project):
    from tests.unit.fakes.quota import NEUTRON_DEFAULT_QUOTAS

    return sorted({**NEUTRON_DEFAULT_QUOTAS, **OWN['neutron']})


def test_the_restore_reverses_exactly_what_the_record_says(cloud, project):
    d = drainer(cloud)
    d.drain(project)

    assert d.restore(project) == []

    assert cloud.get('projects', project)['enabled'] is True
    assert cloud.get('projects', project)[drain_record.RECORD] is None
    assert cloud.get('projects', project)[drain_record.STATE] is None
    assert d.record_of(project) is None
    for service, values in OWN.items():
        assert own_values(cloud, service, project) == values, service
    assert not cloud.has_quota('cinder', project)  # it had none of its own
    # Nova's and Manila's are put back by PUT (their reset takes the
    # per-user rows too): the values the drain froze that were the
    # defaults are put as the defaults
    assert cloud.quota_of('nova', project) == {
        **NOVA_DEFAULT_QUOTAS,
        **OWN['nova'],
    }


def own_values(cloud, service, project):
    """The project's values that differ from the defaults: what the
    quota APIs tell of its own."""
    defaults = {
        'nova': NOVA_DEFAULT_QUOTAS,
        'manila': MANILA_DEFAULT_QUOTAS,
    }.get(service, {})
    return {
        k: v
        for k, v in cloud.quota_of(service, project).items()
        if defaults.get(k) != v
    }


def test_a_project_disabled_before_the_drain_stays_disabled(cloud):
    pid = scenarios.project(cloud, 'A', enabled=False)['id']
    d = drainer(cloud)
    record, _notes = d.drain(pid)
    assert record['enabled'] is False
    d.restore(pid)
    assert cloud.get('projects', pid)['enabled'] is False


def test_a_restore_says_what_did_not_come_back(cloud, project):
    d = drainer(cloud)
    d.drain(project)
    cloud.ignored_quotas.add(('nova', 'instances'))
    [note] = d.restore(project)
    assert note.startswith(
        "quotas of compute in RegionOne are {'instances': 0} after the "
        "restore, not {'instances': 50}"
    )


def test_no_record_no_restore(cloud, project):
    with pytest.raises(CascadeError, match='has no drain record'):
        drainer(cloud).restore(project)


def test_a_value_that_did_not_take_is_a_note(cloud, project):
    cloud.ignored_quotas.add(('nova', 'instances'))
    record, notes = drainer(cloud).drain(project)
    assert notes == [
        'quotas of compute in RegionOne did not take: instances is 50 '
        '(the verification rounds catch what is created)'
    ]
    assert record['quotas'][REGION]['compute']['missed'] == {'instances': 50}


def test_a_refused_freeze_is_a_note_and_the_drain_goes_on(cloud, project):
    cloud.faults.append(('PUT', r'/lbaas/quotas/', 400))
    record, [note] = drainer(cloud).drain(project)
    assert note.startswith(
        'quotas of load-balancer in RegionOne not frozen: freezing'
    )
    assert (
        record['quotas'][REGION]['load-balancer']['state']
        == drain_record.FAILED
    )
    assert cloud.quota_of('magnum', project) == {'Cluster': 0}


def test_an_unreadable_quota_is_a_note_and_not_recorded(cloud, project):
    cloud.faults.append(('GET', r'/v2\.1/os-quota-sets/', 400))
    record, [note] = drainer(cloud).drain(project)
    assert note.startswith('quotas of compute in RegionOne not frozen: read')
    assert 'compute' not in record['quotas'][REGION]
    assert cloud.quota_of('nova', project) == OWN['nova']
    # nothing recorded, nothing restored or released there
    d = drainer(cloud)
    assert d.release_quotas(project, record) == []
    assert cloud.quota_of('nova', project) == OWN['nova']


def test_a_rerun_that_cannot_read_keeps_the_recorded_entry(cloud, project):
    d = drainer(cloud)
    d.drain(project)
    cloud.faults.append(('GET', r'/v2\.1/os-quota-sets/', 400))
    record, [note] = d.drain(project)
    assert 'compute in RegionOne not frozen' in note
    assert record['quotas'][REGION]['compute']['before'] == OWN['nova']
    d.restore(project)
    assert own_values(cloud, 'nova', project) == OWN['nova']


def test_a_neutron_refusal_other_than_force_is_a_note(cloud, project):
    cloud.faults.append(('PUT', r'/v2\.0/quotas/', 400))
    record, [note] = drainer(cloud).drain(project)
    assert note.startswith('quotas of network in RegionOne not frozen')
    assert record['quotas'][REGION]['network']['state'] == drain_record.FAILED


def test_an_old_neutron_without_force_is_frozen_all_the_same(cloud, project):
    cloud.neutron_force = False
    _record, notes = drainer(cloud).drain(project)
    assert notes == []
    assert set(cloud.quota_of('neutron', project).values()) == {0}


def test_cinder_is_never_asked_below_usage(cloud, project):
    _record, notes = drainer(cloud).drain(project)
    assert notes == []
    puts = [p for m, p in cloud.changes if m == 'PUT' and 'cinder' not in p]
    assert puts  # and Cinder's fake refuses below usage or with force
    assert cloud.quota_of('cinder', project)['volumes'] == 1


def test_every_region_of_a_service_is_frozen_and_recorded(cloud, project):
    conn = cloud.connection()

    class TwoRegions(Regions):
        def __init__(self, conn):
            super().__init__(conn)
            self.catalog = ['RegionOne', 'RegionTwo']

        def of_service(self, service_type, among=()):
            return list(among or self.catalog)

        def connection(self, region):
            return conn

    record, _notes = drainer(cloud, TwoRegions(conn)).drain(project)
    assert sorted(record['quotas']) == ['RegionOne', 'RegionTwo']
    # RegionTwo (the same fake) was read after RegionOne froze it, but
    # its own values are read from its own service
    assert record['quotas']['RegionOne']['compute']['before'] == OWN['nova']


def test_the_release_resets_every_recorded_quota(cloud, project):
    d = drainer(cloud)
    record, _notes = d.drain(project)
    assert d.release_quotas(project, record) == []
    for service in [*OWN, 'cinder']:
        assert not cloud.quota_of(service, project), service


def test_a_failed_release_names_the_purge_that_resets_them(cloud, project):
    d = drainer(cloud)
    record, _notes = d.drain(project)
    cloud.faults.append(('DELETE', r'/v2\.1/os-quota-sets/', 403))
    [note] = d.release_quotas(project, record)
    assert 'resetting the quotas of compute in RegionOne' in note
    # not the orphan search: Nova and Cinder list no quota sets
    assert f'`openstack orphan purge --project {project}`' in note
    assert 'orphan list' not in note
    assert cloud.quota_of('nova', project)['instances'] == 0


def test_a_release_answered_404_is_done(cloud, project):
    # Manila answers 404 to the reset of a project with no rows of its own
    d = drainer(cloud)
    record, _notes = d.drain(project)
    cloud.faults.append(('DELETE', r'/v2\.1/os-quota-sets/', 404))
    assert d.release_quotas(project, record) == []


def unified_limits(cloud, pid):
    """Two registered limits, and the project's own limit of one."""
    cloud.add(
        'registered_limits',
        service_id='nova',
        region_id=REGION,
        resource_name='servers',
        default_limit=10,
    )
    cloud.add(
        'registered_limits',
        service_id='glance',
        resource_name='image_count_total',
        default_limit=100,
    )
    cloud.add(
        'limits',
        service_id='nova',
        region_id=REGION,
        project_id=pid,
        resource_name='servers',
        resource_limit=20,
    )


def project_limits(cloud, pid):
    return {
        f'{x["service_id"]}:{x.get("region_id") or ""}:'
        f'{x["resource_name"]}': x['resource_limit']
        for x in cloud.all('limits')
        if x['project_id'] == pid
    }


def test_a_unified_limit_raised_is_patched_with_its_value_alone(
    cloud, project
):
    # through the SDK's update_limit: Keystone's limit_update schema
    # refuses any key but resource_limit and description (the fake too)
    unified_limits(cloud, project)
    api = unified_limits_api.UnifiedLimitsApi()
    api.set(cloud.connection(), project, {f'nova:{REGION}:servers': 25})
    assert project_limits(cloud, project)[f'nova:{REGION}:servers'] == 25
    assert ('PATCH', f"/v3/limits/{cloud.all('limits')[0]['id']}") in (
        cloud.requests
    )


def test_unified_limits_are_frozen_and_restored(cloud, project):
    unified_limits(cloud, project)
    d = drainer(cloud)
    record, notes = d.drain(project)
    assert notes == []
    entry = record['quotas'][REGION]['identity']
    assert entry['before'] == {f'nova:{REGION}:servers': 20}
    assert entry['state'] == drain_record.FROZEN
    # the project's own limit lowered, one for the other registered made
    assert project_limits(cloud, project) == {
        f'nova:{REGION}:servers': 0,
        'glance::image_count_total': 0,
    }
    assert d.restore(project) == []
    assert project_limits(cloud, project) == {f'nova:{REGION}:servers': 20}


def test_unified_limits_are_released_with_the_other_quotas(cloud, project):
    unified_limits(cloud, project)
    d = drainer(cloud)
    record, _ = d.drain(project)
    assert d.release_quotas(project, record) == []
    assert project_limits(cloud, project) == {}


class OneKeystoneInTwoRegions(Regions):
    """Keystone, one for every region, with an endpoint of its own in
    RegionOne and RegionTwo of the catalog (both answered by the same
    fake); every other service in RegionOne."""

    def __init__(self, conn):
        super().__init__(conn)
        self.catalog = ['RegionOne', 'RegionTwo']

    def of_service(self, service_type, among=()):
        found = self.catalog if service_type == 'identity' else [REGION]
        return [r for r in found if r in (among or self.catalog)]

    def connection(self, region):
        return self.conn


def limit_changes(cloud):
    return [(m, p) for m, p in cloud.changes if '/limits' in p]


def test_unified_limits_are_frozen_once_against_the_one_keystone(
    cloud, project
):
    # issue 29: Keystone is one for every region, its limits are per
    # project, service, region and resource; a freeze per region of the
    # catalog posted them twice (Keystone: 409 Duplicate entry)
    unified_limits(cloud, project)
    d = drainer(cloud, OneKeystoneInTwoRegions(cloud.connection()))
    record, notes = d.drain(project)

    assert notes == []
    frozen = {
        f'nova:{REGION}:servers': 0,
        'glance::image_count_total': 0,
    }
    assert project_limits(cloud, project) == frozen
    # one POST of the limits, its own deleted first (Keystone's PATCH
    # takes no 0)
    assert sorted(m for m, _p in limit_changes(cloud)) == ['DELETE', 'POST']
    # recorded once, in the catalog's first region
    assert [r for r, e in record['quotas'].items() if 'identity' in e] == [
        REGION
    ]
    assert record['quotas'][REGION]['identity']['frozen'] == frozen

    cloud.changes.clear()
    assert d.restore(project) == []
    assert project_limits(cloud, project) == {f'nova:{REGION}:servers': 20}
    # each limit deleted once, the project's own put back once
    assert sorted(m for m, _p in limit_changes(cloud)) == [
        'DELETE',
        'DELETE',
        'POST',
    ]

    record, _notes = d.drain(project)
    cloud.changes.clear()
    assert d.release_quotas(project, record) == []
    assert project_limits(cloud, project) == {}
    assert sorted(m for m, _p in limit_changes(cloud)) == ['DELETE'] * 2


def test_the_late_release_resets_unified_limits_once(cloud, project):
    from osc_cascade.workflows import late_release

    unified_limits(cloud, project)
    regions = OneKeystoneInTwoRegions(cloud.connection())
    drainer(cloud, regions).drain(project)
    cloud._remove('projects', project)  # Keystone's delete leaves them here
    cloud.changes.clear()
    cloud.requests.clear()

    late_release.QuotaRelease(
        regions.conn, regions, retry=zero_delays(), clock=FakeClock()
    )(project)

    assert project_limits(cloud, project) == {}
    assert sorted(m for m, _p in limit_changes(cloud)) == ['DELETE'] * 2
    # Keystone asked once for the project's limits, not once per region
    listed = [p for m, p in cloud.requests if m == 'GET' and '/limits' in p]
    assert len(listed) == 1, listed


def test_a_keystone_without_unified_limits_has_nothing_to_freeze(
    cloud, project
):
    cloud.mocker.get(AUTH_URL + '/registered_limits', status_code=404)
    record, notes = drainer(cloud).drain(project)
    assert notes == []
    assert 'identity' not in record['quotas'][REGION]


def test_a_record_that_is_not_json_is_refused(cloud, project):
    cloud.get('projects', project)[drain_record.RECORD] = '{broken'
    with pytest.raises(CascadeError, match='is not JSON'):
        drainer(cloud).record_of(project)
    cloud.get('projects', project)[drain_record.RECORD] = '[1]'
    assert drainer(cloud).record_of(project) is None


def test_the_stage_is_marked_on_the_project(cloud, project):
    d = drainer(cloud)
    d.mark(project, drain_record.DELETING)  # no record: nothing to mark
    assert drain_record.STATE not in cloud.get('projects', project)
    d.drain(project)
    d.mark(project, 'failed at deleting: boom')
    record, state = stored(cloud, project)
    assert state == record['stage'] == 'failed at deleting: boom'


def test_a_missing_project_is_refused(cloud):
    with pytest.raises(CascadeError, match='does not exist'):
        drainer(cloud).drain('nope')


def test_a_disable_that_does_not_take_is_refused(cloud, project):
    cloud.mocker.patch(
        f'{AUTH_URL}/projects/{project}', json={'project': {'id': project}}
    )
    with pytest.raises(CascadeError, match='still enabled after the drain'):
        drainer(cloud).drain(project)


def test_an_octavia_row_the_release_reset_is_no_orphan(cloud):
    # Octavia keeps the row the freeze made, and lists its unset limits as
    # the defaults (-1): no quota of the project's own, no orphan, and no
    # "own" value a later drain would record
    from osc_cascade import kinds as kinds_mod

    pid = scenarios.project(cloud, 'B')['id']
    d = drainer(cloud)
    record, _notes = d.drain(pid)
    assert record['quotas'][REGION]['load-balancer']['before'] == {}
    assert d.release_quotas(pid, record) == []
    conn = cloud.connection()
    assert LoadBalancerQuotaApi().own(conn, pid) == {}
    kind = kinds_mod.build()[LoadBalancerQuota.name]
    assert kind.list(conn, pid) == []
    assert kind.list(conn, None) == []


# -- Cinder's freeze lowered as the deletes progress ----------------------


def deleted(cloud, pid, volume):
    """A volume gone from the fake, and the executor's event of it."""
    cloud._remove('volumes', volume['id'])
    ref = ResourceRef(
        kind='block_storage.volume',
        id=volume['id'],
        project_id=pid,
        region=REGION,
    )
    return Event(DONE, resource.delete(ref))


class Lowerings:
    """``Freezes.lower`` counted, and held at a gate when one is set."""

    def __init__(self, monkeypatch):
        self.calls = 0
        self.done = threading.Semaphore(0)
        self.gate: threading.Event | None = None
        self.entered = threading.Event()
        real = quota_freeze.Freezes.lower

        def lower(drainer_, *args):
            self.entered.set()
            if self.gate is not None:
                assert self.gate.wait(5)
            try:
                return real(drainer_, *args)
            finally:
                self.calls += 1
                self.done.release()

        monkeypatch.setattr(quota_freeze.Freezes, 'lower', lower)

    def wait(self):
        assert self.done.acquire(timeout=5), 'no lowering ran'


def test_cinders_freeze_follows_each_delete_down_to_zero(cloud, monkeypatch):
    pid = scenarios.project(cloud, 'A')['id']
    one, two = (scenarios.volume(cloud, pid, n, size=10) for n in 'ab')
    d = drainer(cloud)
    record, _ = d.drain(pid)
    assert cloud.quota_of('cinder', pid)['volumes'] == 2
    lowerings = Lowerings(monkeypatch)
    forwarded = []
    lowering = Lowering(d, {pid: record}, forwarded.append)

    lowering.notice(deleted(cloud, pid, one))
    lowerings.wait()
    assert cloud.quota_of('cinder', pid)['volumes'] == 1
    assert cloud.quota_of('cinder', pid)['gigabytes'] == 10
    lowering.notice(deleted(cloud, pid, two))
    lowerings.wait()
    assert cloud.quota_of('cinder', pid)['volumes'] == 0

    assert lowering.close() == []
    assert set(cloud.quota_of('cinder', pid).values()) == {0}
    entry = record['quotas'][REGION]['block-storage']
    assert set(entry['frozen'].values()) == {0}
    assert 'missed' not in entry
    assert len(forwarded) == 2  # the progress still gets every event


def test_deletes_done_during_a_lowering_share_the_next_one(cloud, monkeypatch):
    pid = scenarios.project(cloud, 'A')['id']
    volumes = [scenarios.volume(cloud, pid, f'v{i}', size=1) for i in range(4)]
    d = drainer(cloud)
    record, _ = d.drain(pid)
    lowerings = Lowerings(monkeypatch)
    lowerings.gate = threading.Event()
    lowering = Lowering(d, {pid: record})

    lowering.notice(deleted(cloud, pid, volumes[0]))
    assert lowerings.entered.wait(5)
    # three more deletes land while the first lowering is under way
    for volume in volumes[1:]:
        lowering.notice(deleted(cloud, pid, volume))
    lowerings.gate.set()
    lowerings.wait()
    lowerings.wait()
    assert lowerings.calls == 2  # not 4: one more covers the three
    assert cloud.quota_of('cinder', pid)['volumes'] == 0
    assert lowering.close() == []
    assert lowerings.calls == 3  # close's own, which finds nothing to lower


def test_what_cinder_still_counts_stays_frozen_and_is_a_note(
    cloud, monkeypatch
):
    pid = scenarios.project(cloud, 'A')['id']
    gone = scenarios.volume(cloud, pid, 'gone', size=5)
    scenarios.volume(cloud, pid, 'stays', size=3)
    d = drainer(cloud)
    record, _ = d.drain(pid)
    lowering = Lowering(d, {pid: record})
    lowering.notice(deleted(cloud, pid, gone))
    [note] = lowering.close()
    assert cloud.quota_of('cinder', pid)['volumes'] == 1
    assert cloud.quota_of('cinder', pid)['gigabytes'] == 3
    assert f'quotas of block-storage in {REGION} of project {pid} stay at' in (
        note
    )
    assert 'gigabytes=3' in note
    assert 'volumes=1' in note
    assert 'the verification rounds and --settle catch' in note


def test_a_lowering_is_never_a_raise_and_never_below_usage(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    scenarios.volume(cloud, pid, 'a', size=4)
    d = drainer(cloud)
    api = BlockStorageQuotaApi()
    # a limit already below the usage is left alone (Cinder would refuse
    # to raise nothing); one above it comes down to it
    limits, missed = d.freezes.lower(
        pid, REGION, api, {'volumes': 0, 'gigabytes': 9}
    )
    assert limits == {'volumes': 0, 'gigabytes': 4}
    assert missed == {}
    assert cloud.quota_of('cinder', pid)['gigabytes'] == 4


def test_other_events_lower_nothing(cloud, monkeypatch):
    pid = scenarios.project(cloud, 'A')['id']
    scenarios.volume(cloud, pid, 'a', size=1)
    d = drainer(cloud)
    record, _ = d.drain(pid)
    lowerings = Lowerings(monkeypatch)
    lowering = Lowering(d, {pid: record})
    network = ResourceRef(
        kind='network.network', id='n', project_id=pid, region=REGION
    )
    volume = ResourceRef(
        kind='block_storage.volume', id='v', project_id=pid, region=REGION
    )
    lowering.notice(Event(DONE, resource.delete(network)))
    lowering.notice(Event('failed', resource.delete(volume)))
    elsewhere = dataclasses.replace(volume, project_id='x')
    lowering.notice(Event(DONE, resource.delete(elsewhere)))
    assert lowering._thread is None
    lowering.close()
    assert lowerings.calls == 1  # close's alone


def test_the_plan_says_what_the_freeze_cannot_cover(cloud):
    note = drainer(cloud).unfrozen(
        ['compute', 'identity', 'block-storage', 'image', 'object-store']
    )
    assert note == [
        'the drain freezes no quota of image (Glance limits a project only '
        'through Keystone unified limits, frozen only where Keystone has '
        'them registered), '
        "object-store (Swift's account quota checks object PUTs only, not "
        "containers nor a reseller admin's PUTs): what a token that a "
        'service validated before the drain creates there is deleted by the '
        'verification rounds while the cascade runs, and once the project is '
        "gone by --settle or the later purge (the reaper's, `openstack "
        "orphan purge --project`)"
    ]
    # a service the catalog does not have says nothing
    assert drainer(cloud).unfrozen(['compute', 'no-such-service']) == []


def test_the_cascade_plan_carries_the_note(cloud, project):
    _pc, _targets, plan = cascade_for(cloud, project)
    [note] = [n for n in plan.notes if n.startswith('the drain freezes no')]
    assert 'object-store (' in note
    assert 'compute' not in note
