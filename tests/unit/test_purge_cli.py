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

"""`openstack compute service delete --purge-allocations` through the real
OSC shell."""

import json

import pytest
import requests

from osc_cascade.engine import retry
from tests.unit.fakes.clouds import FakePlacementCloud
from tests.unit.fakes.common import PLACEMENT, new_uuid
from tests.unit.scenarios import evacuation


@pytest.fixture
def cloud():
    with FakePlacementCloud() as c:
        yield c


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch):
    monkeypatch.setattr(retry.Clock, 'sleep', lambda self, seconds: None)


def purge(osc, *args, stdin=''):
    return osc(
        'compute',
        'service',
        'delete',
        '--purge-allocations',
        *args,
        stdin=stdin,
    )


def test_help_shows_the_options(osc):
    result = osc('help', 'compute', 'service', 'delete')
    assert result.code == 0
    for option in (
        '--purge-allocations',
        '--force',
        '--dry-run',
        '--yes',
        '--parallel',
        '--timeout',
        '--format',
    ):
        assert option in result.stdout


def test_dry_run_shows_the_plan_as_json_and_changes_nothing(cloud, osc):
    s = evacuation(cloud)
    gone = cloud.server('gone', 'compute-a')
    cloud.delete_server(gone)

    result = purge(osc, '--dry-run', 'compute-a', '-f', 'json')

    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    # nova deletes a node's provider with the service: checked after it
    assert [
        (r['Stage'], r['Action'], r['Kind'], r['ID'], r['Class'])
        for r in rows[2:]
    ] == [
        (2, 'delete', 'compute.service', s.a['id'], 'nova-compute'),
        (3, 'delete', 'placement.resource_provider', s.rp_a, 'compute node'),
    ]
    assert sorted(
        (r['Stage'], r['Action'], r['ID'], r['Name'], r['Class'])
        for r in rows[:2]
    ) == sorted(
        [
            (1, 'remove', gone['id'], '', 'deleted instance'),
            (1, 'remove', s.vm['id'], 'vm1', 'evacuated instance'),
        ]
    )
    assert cloud.changes == []


def test_dry_run_with_blockers_shows_them_and_fails(cloud, osc):
    s = evacuation(cloud)
    stray = new_uuid()
    cloud.allocate(stray, {s.rp_a: {'VCPU': 1}})

    result = purge(osc, '--dry-run', 'compute-a', '-f', 'value')

    assert result.code == 1
    assert f'1 block placement.allocation {stray}  unknown consumer' in (
        result.stdout
    )
    assert 'Nothing was changed: 1 consumer(s)' in result.stderr
    assert cloud.changes == []


def test_purge_deletes_service_and_providers_and_keeps_the_new_host(
    cloud, osc
):
    s = evacuation(cloud)

    result = purge(osc, '--yes', s.a['id'], '-f', 'json')

    assert result.code == 0, result.stderr
    counts = dict(Region='RegionOne', Actions=0, Kept=0, Failed=0, Skipped=0)
    assert json.loads(result.stdout) == [
        {'Kind': 'compute.service', **counts, 'Deleted': 1},
        # this host's share of the allocation removed: a deletion
        {'Kind': 'placement.allocation', **counts, 'Deleted': 1},
        {'Kind': 'placement.resource_provider', **counts, 'Deleted': 1},
    ]
    assert not cloud.exists('services', s.a['id'])
    assert not cloud.exists('resource_providers', s.rp_a)
    assert cloud.allocations_of(s.vm['id']) == {
        s.rp_b: {'VCPU': 1, 'MEMORY_MB': 512}
    }
    # OSC's own delete was handed nothing: one service delete, ours
    assert [p for m, p in cloud.changes if 'os-services' in p] == [
        f'/v2.1/os-services/{s.a["id"]}'
    ]


def test_blockers_are_listed_and_nothing_changes(cloud, osc):
    s = evacuation(cloud)
    stray = new_uuid()
    cloud.allocate(stray, {s.rp_a: {'VCPU': 1}})
    resized = cloud.server('resized', 'compute-b')
    resize = cloud.migration(
        resized,
        'compute-a',
        'compute-b',
        status='finished',
        migration_type='resize',
    )
    cloud.allocate(resize['id'], {s.rp_a: {'VCPU': 2}})

    result = purge(osc, '--yes', 'compute-a', '-f', 'json')

    assert result.code == 1
    rows = {r['Consumer']: r for r in json.loads(result.stdout)}
    assert rows.keys() == {stray, resize['id']}
    assert rows[resize['id']]['Class'] == 'migration not confirmed'
    assert rows[resize['id']]['Providers'] == ['compute-a']
    assert (
        f'openstack server resize confirm {resized["id"]}'
        in rows[resize['id']]['Why, and what to do']
    )
    assert 'Nothing was changed: 2 consumer(s)' in result.stderr
    assert cloud.changes == []


def test_force_purges_what_blocked(cloud, osc):
    s = evacuation(cloud)
    stray = new_uuid()
    cloud.allocate(stray, {s.rp_a: {'VCPU': 1}})

    result = purge(osc, '--yes', '--force', 'compute-a')

    assert result.code == 0, result.stderr
    assert not cloud.exists('consumers', stray)
    assert not cloud.exists('services', s.a['id'])


def test_instance_on_the_host_refuses_even_with_force(cloud, osc):
    a = cloud.compute('compute-a')
    vm = cloud.server('busy', 'compute-a')

    result = purge(osc, '--yes', '--force', 'compute-a')

    assert result.code == 1
    assert vm['id'] in result.stdout and 'instance on host' in result.stdout
    assert cloud.exists('services', a['id'])
    assert cloud.changes == []


def test_several_services_in_one_command(cloud, osc):
    a = cloud.compute('compute-a')
    c = cloud.compute('compute-c')
    result = purge(osc, '--yes', 'compute-a', c['id'])
    assert result.code == 0, result.stderr
    assert not cloud.exists('services', a['id'])
    assert not cloud.exists('services', c['id'])


def test_without_a_terminal_and_yes_nothing_is_deleted(cloud, osc):
    s = evacuation(cloud)
    result = purge(osc, 'compute-a')
    assert result.code == 1
    assert 'Pass --yes to confirm' in result.stderr
    assert cloud.exists('services', s.a['id'])
    assert cloud.changes == []


@pytest.mark.parametrize('option', ['--dry-run', '--force', '--yes'])
def test_purge_options_need_purge_allocations(cloud, osc, option):
    s = evacuation(cloud)
    result = osc('compute', 'service', 'delete', option, s.a['id'])
    assert result.code == 1
    assert f'{option} needs --purge-allocations' in result.stderr
    assert cloud.changes == []


def test_without_the_option_osc_deletes_and_nova_orphans_the_provider(
    cloud, osc
):
    # the gap this plugin closes, as nova 34 behaves
    s = evacuation(cloud)
    stray = new_uuid()
    cloud.allocate(stray, {s.rp_a: {'VCPU': 1}})
    result = osc(
        '--os-compute-api-version',
        '2.53',
        'compute',
        'service',
        'delete',
        s.a['id'],
    )
    assert result.code == 0, result.stderr
    assert not cloud.exists('services', s.a['id'])
    assert cloud.exists('resource_providers', s.rp_a)


def test_a_pinned_old_compute_api_version_does_not_matter(cloud, osc):
    s = evacuation(cloud)
    result = osc(
        '--os-compute-api-version',
        '2.1',
        'compute',
        'service',
        'delete',
        '--purge-allocations',
        '--yes',
        'compute-a',
    )
    assert result.code == 0, result.stderr
    assert not cloud.exists('services', s.a['id'])


def test_placement_403_is_a_clear_error(cloud, osc):
    evacuation(cloud)
    cloud.forbidden.add(r'/allocations$')
    result = purge(osc, '--yes', 'compute-a')
    assert result.code == 1
    assert (
        'was refused (HTTP 403): --purge-allocations needs the admin '
        'role. Nothing was changed.'
    ) in result.stderr
    assert cloud.changes == []


def test_nova_503_is_a_clear_error(cloud, osc):
    evacuation(cloud)
    cloud.faults += [('GET', r'/os-migrations', 503)] * 4
    result = purge(osc, '--yes', 'compute-a')
    assert result.code == 1
    assert (
        'listing the migrations from or to compute-a failed, so nothing '
        'was changed'
    ) in result.stderr
    assert cloud.changes == []


def test_placement_timeout_is_a_clear_error(cloud, osc):
    evacuation(cloud)
    cloud.mocker.get(
        PLACEMENT + '/resource_providers',
        exc=requests.exceptions.ConnectTimeout,
    )
    result = purge(osc, '--yes', 'compute-a')
    assert result.code == 1
    assert 'listing resource providers failed, so nothing was changed' in (
        result.stderr
    )
    assert cloud.changes == []


def test_failure_during_the_run_says_what_was_left(cloud, osc):
    s = evacuation(cloud)
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.respawn.add(numa)  # nova-compute still running

    result = purge(osc, '--yes', 'compute-a', '-f', 'value')

    assert result.code == 1
    # kind, region, deleted, actions, kept, failed, skipped
    assert 'placement.resource_provider RegionOne 0 0 0 1 1' in result.stdout
    assert 'compute.service RegionOne 0 0 0 0 1' in result.stdout
    assert 'The purge did not finish: 1 step(s) failed, 2 skipped' in (
        result.stderr
    )
    assert 'is nova-compute on compute-a still running' in result.stderr
    assert f'Not deleted: compute service(s) compute-a ({s.a["id"]})' in (
        result.stderr
    )
    assert cloud.exists('services', s.a['id'])


def test_unknown_service_is_a_clear_error(cloud, osc):
    evacuation(cloud)
    result = purge(osc, '--yes', '12')
    assert result.code == 1
    assert "No nova-compute service with ID or host '12'" in result.stderr
    assert cloud.changes == []


def test_dry_run_says_an_enabled_service_would_be_disabled(cloud, osc):
    s = evacuation(cloud)
    s.a['status'] = 'enabled'
    result = purge(osc, '--dry-run', 'compute-a', '-f', 'json')
    assert result.code == 0, result.stderr
    assert (
        f'note: compute service compute-a ({s.a["id"]}) is enabled: the '
        f'purge disables it first'
    ) in result.stderr
    assert cloud.changes == []
    assert s.a['status'] == 'enabled'


def test_enabled_service_is_disabled_then_purged(cloud, osc):
    s = evacuation(cloud)
    s.a['status'] = 'enabled'
    result = purge(osc, '--yes', 'compute-a')
    assert result.code == 0, result.stderr
    assert f'disabled compute service compute-a ({s.a["id"]})' in (
        result.stderr
    )
    assert cloud.changes[0] == ('PUT', f'/v2.1/os-services/{s.a["id"]}')
    assert not cloud.exists('services', s.a['id'])


def test_prompt_says_the_service_is_disabled_first(cloud, osc):
    s = evacuation(cloud)
    s.a['status'] = 'enabled'
    result = osc(
        'compute',
        'service',
        'delete',
        '--purge-allocations',
        'compute-a',
        stdin='n\n',
        tty=True,
    )
    assert result.code == 1
    assert '  first disable compute-a (enabled again if' in result.stderr
    assert cloud.changes == []


def test_blocked_enabled_service_is_never_touched(cloud, osc):
    a = cloud.compute('compute-a', status='enabled', state='up')
    cloud.server('busy', 'compute-a')
    result = purge(osc, '--yes', 'compute-a')
    assert result.code == 1
    assert cloud.changes == []
    assert a['status'] == 'enabled'


def test_failure_enables_the_service_again_and_says_so(cloud, osc):
    s = evacuation(cloud)
    s.a['status'] = 'enabled'
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.respawn.add(numa)

    result = purge(osc, '--yes', 'compute-a')

    assert result.code == 1
    assert (
        f'compute service compute-a ({s.a["id"]}) was enabled again: the '
        f'purge did not delete it.'
    ) in result.stderr
    assert 'The purge did not finish' in result.stderr
    assert (s.a['status'], s.a['disabled_reason']) == ('enabled', None)


def test_the_service_is_purged_in_the_region_it_lives_in(osc):
    with FakePlacementCloud() as one:
        two = one.add_region('RegionTwo', ['compute', 'placement'])
        one.compute('only-here')
        service = two.compute('edge-1')
        result = purge(osc, '--yes', 'edge-1')
        assert result.code == 0, result.stderr
        assert not two.exists('services', service['id'])
        assert two.all('resource_providers') == []
        assert not [c for c in one.changes if c[0] == 'DELETE']


def test_a_host_in_two_regions_is_refused_with_both_named(osc):
    with FakePlacementCloud() as one:
        two = one.add_region('RegionTwo', ['compute', 'placement'])
        one.compute('twin')
        two.compute('twin')
        result = purge(osc, '--yes', 'twin')
        assert result.code == 1
        assert result.stderr.strip().endswith(
            "Compute service 'twin' is in more than one region: RegionOne, "
            'RegionTwo. Name the region with --region.'
        )
        assert not [c for c in one.changes + two.changes if c[0] != 'POST']
        narrowed = purge(osc, '--yes', '--region', 'RegionTwo', 'twin')
        assert narrowed.code == 0, narrowed.stderr
        assert [s['host'] for s in one.all('services')] == ['twin']
        assert two.all('services') == []
