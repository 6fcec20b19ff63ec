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

"""The restore gives back exactly what the drain took, and loses nothing
on the way (issue 29, items 5 and 6): what did not come back stays in the
record for a second restore; what the drain never changed (Nova's and
Manila's per-user quotas, Manila's per-share-type ones) is never taken."""

import json

import pytest

from osc_cascade.engine.regions import Regions
from osc_cascade.workflows import drain, drain_record, sweep
from osc_cascade.workflows.cascade import ProjectCascade
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import zero_delays

REGION = 'RegionOne'


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def drainer(cloud):
    conn = cloud.connection()
    return drain.Drain(
        conn,
        Regions(conn),
        retry=zero_delays(),
        clock=FakeClock(),
        now=lambda: '2026-01-01T00:00:00+00:00',
    )


def record_of(cloud, pid):
    text = cloud.get('projects', pid).get(drain_record.RECORD)
    return json.loads(text) if text else None


def test_a_quota_that_reads_back_otherwise_stays_in_the_record(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    d = drainer(cloud)
    d.drain(pid)
    cloud.ignored_quotas.add(('nova', 'instances'))

    [note] = d.restore(pid)

    assert note.startswith('quotas of compute in RegionOne are ')
    record = record_of(cloud, pid)
    # what came back left the record; what did not is the whole of it
    assert list(record['quotas'][REGION]) == ['compute']
    assert record['quotas'][REGION]['compute']['before'] == {'instances': 50}
    assert record['stage'] == drain_record.RESTORING
    assert drain_record.DRAINED_AT not in record
    assert cloud.get('projects', pid)['enabled'] is True

    cloud.ignored_quotas.clear()
    assert d.restore(pid) == []
    assert record_of(cloud, pid) is None
    assert cloud.quota_of('nova', pid)['instances'] == 50


def test_the_sweep_leaves_a_record_a_restore_left_alone(cloud):
    # a project disabled before the drain stays disabled after the
    # restore: with what did not come back in its record, it is listed
    # with the drained projects, and is not one
    pid = scenarios.project(cloud, 'A', enabled=False)['id']
    cloud.set_quota('nova', pid, instances=50)
    d = drainer(cloud)
    d.drain(pid)
    cloud.ignored_quotas.add(('nova', 'instances'))
    assert len(d.restore(pid)) == 1

    workflow = ProjectCascade(
        cloud.connection(), clock=FakeClock(), retry=zero_delays()
    )
    due, [note] = sweep.due(workflow, 0)

    assert due == []
    assert 'a restore gave back part of its drain record' in note
    # drained again, it is a drain of its own: its age counts from now
    cloud.ignored_quotas.clear()
    drain.Drain(
        cloud.connection(),
        Regions(cloud.connection()),
        retry=zero_delays(),
        clock=FakeClock(),
        now=lambda: '2030-01-01T00:00:00+00:00',
    ).drain(pid)
    record = record_of(cloud, pid)
    assert record[drain_record.DRAINED_AT] == '2030-01-01T00:00:00+00:00'
    assert record['started_at'] == '2030-01-01T00:00:00+00:00'
    assert record['quotas'][REGION]['compute']['before'] == {'instances': 50}


def test_a_restore_keeps_novas_per_user_quotas(cloud):
    # issue 29 item 6: Nova's DELETE of a project's quota set destroys
    # its per-user rows too (Quotas.destroy_all_by_project); the drain
    # never changed them, so the restore must not take them
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_user_quota('nova', pid, 'u-1', instances=5, cores=8)
    d = drainer(cloud)
    d.drain(pid)

    assert d.restore(pid) == []

    assert cloud.user_quota_of('nova', pid, 'u-1') == {
        'instances': 5,
        'cores': 8,
    }
    compute = d.apis[0]
    assert compute.own(cloud.connection(), pid) == {'instances': 50}
    assert record_of(cloud, pid) is None


def test_a_restore_keeps_manilas_per_user_and_share_type_quotas(cloud):
    # Manila's DELETE takes the per-user rows (quota_destroy_all_by_
    # project: the project's quotas, per-user quotas, usages and
    # reservations), not the per-share-type ones
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('manila', pid, shares=40)
    cloud.set_user_quota('manila', pid, 'u-1', shares=4)
    cloud.set_user_quota('manila', pid, 'share_type:gold', shares=7)
    d = drainer(cloud)
    d.drain(pid)

    assert d.restore(pid) == []

    assert cloud.user_quota_of('manila', pid, 'u-1') == {'shares': 4}
    assert cloud.user_quota_of('manila', pid, 'share_type:gold') == {
        'shares': 7
    }
    [manila] = [a for a in d.apis if a.service_type == 'shared-file-system']
    assert manila.own(cloud.connection(), pid) == {'shares': 40}


def test_the_fake_resets_as_nova_and_manila_do(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    conn = cloud.connection()
    for service in ('nova', 'manila'):
        cloud.set_quota(service, pid, instances=1)
        cloud.set_user_quota(service, pid, 'u-1', instances=2)
        cloud.set_user_quota(service, pid, 'share_type:gold', instances=3)
    assert (
        conn.compute.get(
            f'/os-quota-sets/{pid}', params={'user_id': 'u-1'}
        ).json()['quota_set']['instances']
        == 2
    )
    conn.compute.delete(f'/os-quota-sets/{pid}')
    conn.compute.delete(f'/os-quota-sets/{pid}', params={'user_id': 'x'})
    assert not cloud.has_quota('nova', pid)
    assert cloud.user_quota_of('nova', pid, 'u-1') == {}
    from osc_cascade.kinds import shared_file_system

    manila = shared_file_system.manila(conn)
    manila.delete(f'/quota-sets/{pid}', microversion='2.7')
    assert not cloud.has_quota('manila', pid)
    assert cloud.user_quota_of('manila', pid, 'u-1') == {}
    assert cloud.user_quota_of('manila', pid, 'share_type:gold') == {
        'instances': 3
    }


def test_a_drain_after_an_incomplete_restore_records_what_it_finds(cloud):
    # disabled before the first drain, enabled by hand after the restore
    # that left a quota in the record: the next drain took "enabled"
    pid = scenarios.project(cloud, 'A', enabled=False)['id']
    cloud.set_quota('nova', pid, instances=50)
    d = drainer(cloud)
    d.drain(pid)
    cloud.ignored_quotas.add(('nova', 'instances'))
    assert len(d.restore(pid)) == 1
    cloud.ignored_quotas.clear()
    cloud.get('projects', pid)['enabled'] = True

    d.drain(pid)
    assert d.restore(pid) == []

    assert cloud.get('projects', pid)['enabled'] is True
    assert cloud.quota_of('nova', pid)['instances'] == 50


def test_a_quota_restore_that_fails_stays_in_the_record(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('neutron', pid, network=50)
    d = drainer(cloud)
    d.drain(pid)
    cloud.faults.append(('DELETE', r'/v2\.0/quotas/', 400))

    [note] = d.restore(pid)

    assert note.startswith('restoring the quotas of network in RegionOne ')
    assert list(record_of(cloud, pid)['quotas'][REGION]) == ['network']
    assert d.restore(pid) == []
    assert cloud.quota_of('neutron', pid)['network'] == 50


def test_a_record_entry_no_quota_api_knows_is_kept_and_said(cloud):
    # a record written by another version: what this one cannot restore
    # is no silent exit 0
    pid = scenarios.project(cloud, 'A')['id']
    d = drainer(cloud)
    d.drain(pid)
    record = record_of(cloud, pid)
    record['quotas'][REGION]['future-service'] = {'before': {'x': 1}}
    cloud.get('projects', pid)[drain_record.RECORD] = json.dumps(record)

    [note] = d.restore(pid)

    assert note == (
        'quotas of future-service in RegionOne: no quota API of this '
        'version restores them (kept in the drain record)'
    )
    assert list(record_of(cloud, pid)['quotas'][REGION]) == ['future-service']
