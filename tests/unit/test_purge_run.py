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

"""ServicePurge.execute against the fake cloud: what is removed, in which
order, with which guards, and what a failure leaves."""

import re

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, FAILED, SKIPPED
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.v1.compute_service import failure_message
from osc_cascade.workflows.service_purge import DISABLED_REASON, ServicePurge
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakePlacementCloud
from tests.unit.fakes.common import new_uuid
from tests.unit.scenarios import evacuation


@pytest.fixture
def cloud():
    with FakePlacementCloud() as c:
        yield c


def run(cloud, *hosts, attempts=8, events=None, **options):
    p = ServicePurge(
        cloud.connection(),
        **options,
        clock=FakeClock(),
        retry=RetryPolicy(max_attempts=attempts, base_delay=0, max_delay=0),
        on_event=events.append if events is not None else None,
    )
    plan = p.plan(p.resolve(list(hosts)))
    return p.execute(plan)


def outcome(result, kind, id_):
    return result.results[f'delete:{kind}:{id_}']


def test_evacuated_instance_keeps_its_allocations_on_the_new_host(cloud):
    s = evacuation(cloud)
    result = run(cloud, 'compute-a')
    assert result.ok
    assert cloud.allocations_of(s.vm['id']) == {
        s.rp_b: {'VCPU': 1, 'MEMORY_MB': 512}
    }
    assert not cloud.exists('resource_providers', s.rp_a)
    assert not cloud.exists('services', s.a['id'])
    assert cloud.exists('resource_providers', s.rp_b)
    assert cloud.exists('services', s.b['id'])
    # nova deletes the node's provider with the service; ours finds it gone
    assert cloud.changes == [
        ('PUT', f'/allocations/{s.vm["id"]}'),
        ('DELETE', f'/v2.1/os-services/{s.a["id"]}'),
        ('DELETE', f'/resource_providers/{s.rp_a}'),
    ]


def test_rewrite_is_guarded_and_every_call_pins_its_microversion(cloud):
    s = evacuation(cloud)
    generation = cloud.get('consumers', s.vm['id'])['generation']
    run(cloud, 'compute-a')
    put = next(r for r in cloud.mocker.request_history if r.method == 'PUT')
    assert put.json() == {
        'allocations': {s.rp_b: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}}},
        'consumer_generation': generation,
        'project_id': cloud.get('consumers', s.vm['id'])['project_id'],
        'user_id': cloud.get('consumers', s.vm['id'])['user_id'],
    }
    assert set(cloud.placement_versions()) == {'placement 1.28'}
    delete = next(
        r
        for r in cloud.mocker.request_history
        if r.method == 'DELETE' and 'os-services' in r.url
    )
    assert delete.headers['OpenStack-API-Version'] == 'compute 2.59'


def test_consumer_only_on_the_tree_is_emptied(cloud):
    cloud.compute('compute-a')
    gone = cloud.server('gone', 'compute-a')
    cloud.delete_server(gone)
    put_before = len(cloud.changes)
    assert run(cloud, 'compute-a').ok
    assert cloud.changes[put_before] == ('PUT', f'/allocations/{gone["id"]}')
    assert not cloud.exists('consumers', gone['id'])


def test_nested_tree_is_deleted_children_first_and_service_last(cloud):
    a = cloud.compute('compute-a')
    root = cloud.node_of('compute-a')
    numa = cloud.provider('compute-a_NUMA0', parent=root)['uuid']
    gpu = cloud.provider('compute-a_pGPU0', parent=numa)['uuid']
    gone = cloud.server('gone', 'compute-a')
    cloud.allocate(gone['id'], {gpu: {'VGPU': 1}})
    cloud.delete_server(gone)

    assert run(cloud, 'compute-a').ok

    order = cloud.index_of_delete
    assert (
        order('/resource_providers', gpu)
        < order('/resource_providers', numa)
        < order('/os-services', a['id'])
    )
    assert not any(
        cloud.exists('resource_providers', p) for p in (root, numa, gpu)
    )


def test_generation_conflict_is_read_again_and_keeps_the_other_write(cloud):
    s = evacuation(cloud)
    other_rp = cloud.provider('sharing-pool')['uuid']
    # another client writes the consumer between our read and our write
    cloud.concurrent_writes[s.vm['id']] = [{other_rp: {'DISK_GB': 10}}]
    read = cloud.get('consumers', s.vm['id'])['generation']
    events = []

    result = run(cloud, 'compute-a', events=events)

    assert result.ok
    step = outcome(result, 'placement.allocation', s.vm['id'])
    assert step.attempts == 2
    assert [e.message for e in events if e.kind == 'retry'] == [
        f'attempt 1 failed (ConflictException: 409: Client Error for url: '
        f'http://placement.test/allocations/{s.vm["id"]}, There was a '
        f'conflict when trying to complete your request. consumer '
        f'generation conflict - expected {read + 1} but got {read}); '
        f'retrying in 0s'
    ]
    assert cloud.allocations_of(s.vm['id']) == {
        s.rp_b: {'VCPU': 1, 'MEMORY_MB': 512},
        other_rp: {'DISK_GB': 10},
    }
    assert not cloud.exists('services', s.a['id'])


def test_endless_conflicts_fail_the_consumer_and_skip_the_rest(cloud):
    s = evacuation(cloud)
    cloud.concurrent_writes[s.vm['id']] = [None] * 10

    result = run(cloud, 'compute-a', attempts=3)

    assert not result.ok
    step = outcome(result, 'placement.allocation', s.vm['id'])
    assert step.outcome == FAILED
    assert 'gave up after 3 attempts' in step.error
    assert cloud.changes.count(('PUT', f'/allocations/{s.vm["id"]}')) == 3
    assert (
        outcome(result, 'placement.resource_provider', s.rp_a).outcome
        == SKIPPED
    )
    assert outcome(result, 'compute.service', s.a['id']).outcome == SKIPPED
    assert cloud.exists('resource_providers', s.rp_a)
    assert cloud.exists('services', s.a['id'])
    message = failure_message(result)
    assert '1 step(s) failed, 2 skipped' in message
    assert f'Not deleted: compute service(s) compute-a ({s.a["id"]})' in (
        message
    )


def test_allocation_that_appears_after_the_plan_keeps_the_service(cloud):
    s = evacuation(cloud)
    p = ServicePurge(
        cloud.connection(),
        clock=FakeClock(),
        retry=RetryPolicy(base_delay=0, max_delay=0),
    )
    plan = p.plan(p.resolve(['compute-a']))
    newcomer = new_uuid()
    cloud.allocate(newcomer, {s.rp_a: {'VCPU': 1}})

    result = p.execute(plan)

    # nova would delete the service and ignore Placement's 409: orphan
    service = outcome(result, 'compute.service', s.a['id'])
    assert service.outcome == FAILED
    assert (
        f'has allocations that appeared after the plan (consumers '
        f'{newcomer})' in service.error
    )
    assert cloud.exists('services', s.a['id'])
    assert cloud.exists('resource_providers', s.rp_a)
    assert cloud.allocations_of(newcomer) == {s.rp_a: {'VCPU': 1}}
    assert not [p for m, p in cloud.changes if 'os-services' in p]

    # the cause removed, the same command finishes the job
    cloud._remove('consumers', newcomer)
    assert run(cloud, 'compute-a').ok
    assert not cloud.exists('services', s.a['id'])
    assert not cloud.exists('resource_providers', s.rp_a)


def test_nested_provider_that_comes_back_keeps_the_service(cloud):
    s = evacuation(cloud)
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.respawn.add(numa)

    result = run(cloud, 'compute-a')

    child = outcome(result, 'placement.resource_provider', numa)
    assert child.outcome == FAILED
    assert 'compute-a_NUMA0' in child.error
    assert 'is back after its delete' in child.error
    assert outcome(result, 'compute.service', s.a['id']).outcome == SKIPPED
    assert cloud.exists('services', s.a['id'])


def test_child_created_after_the_plan_keeps_the_service(cloud):
    s = evacuation(cloud)
    p = ServicePurge(
        cloud.connection(),
        clock=FakeClock(),
        retry=RetryPolicy(base_delay=0, max_delay=0),
    )
    plan = p.plan(p.resolve(['compute-a']))
    late = cloud.provider('compute-a_pGPU0', parent=s.rp_a)['uuid']

    result = p.execute(plan)

    service = outcome(result, 'compute.service', s.a['id'])
    assert service.outcome == FAILED
    assert (
        f'compute-a_pGPU0 ({late}) exist after their delete or '
        f'appeared since the plan' in service.error
    )
    assert cloud.exists('services', s.a['id'])


def test_node_provider_that_comes_back_after_nova_is_reported(cloud):
    s = evacuation(cloud)
    cloud.respawn.add(s.rp_a)  # nova-compute still running

    result = run(cloud, 'compute-a')

    assert outcome(result, 'compute.service', s.a['id']).outcome == DONE
    node = outcome(result, 'placement.resource_provider', s.rp_a)
    assert node.outcome == FAILED
    assert 'is nova-compute on compute-a still running' in node.error


def test_node_without_provider_gets_one_for_nova_to_delete(cloud):
    a = cloud.compute('compute-a')
    node = cloud.node_of('compute-a')
    cloud._remove('resource_providers', node)

    assert run(cloud, 'compute-a').ok

    assert ('POST', '/resource_providers') in cloud.changes
    assert not cloud.exists('services', a['id'])
    assert not cloud.exists('resource_providers', node)


def test_passing_placement_error_on_a_provider_delete_is_retried(cloud):
    s = evacuation(cloud)
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.faults.append(('DELETE', rf'/resource_providers/{numa}', 503))
    result = run(cloud, 'compute-a')
    assert result.ok
    assert outcome(result, 'placement.resource_provider', numa).attempts == 2
    assert not cloud.exists('resource_providers', numa)


def test_forced_unconfirmed_resize_purges_but_nova_keeps_the_service(cloud):
    s = evacuation(cloud)
    resize = cloud.migration(
        s.vm,
        'compute-a',
        'compute-b',
        status='finished',
        migration_type='resize',
    )
    cloud.allocate(resize['id'], {s.rp_a: {'VCPU': 2}})

    result = run(cloud, 'compute-a', force=True)

    service = outcome(result, 'compute.service', s.a['id'])
    assert service.outcome == FAILED
    assert 'in-progress migrations' in service.error
    assert cloud.deleted_order().count(f'/v2.1/os-services/{s.a["id"]}') == 1
    assert cloud.allocations_of(resize['id']) == {}
    # nothing orphaned: the node's provider stays with its service
    assert cloud.exists('services', s.a['id'])
    assert cloud.exists('resource_providers', s.rp_a)
    assert (
        outcome(result, 'placement.resource_provider', s.rp_a).outcome
        == SKIPPED
    )


def test_nova_service_delete_404_counts_as_done(cloud):
    s = evacuation(cloud)
    p = ServicePurge(
        cloud.connection(),
        clock=FakeClock(),
        retry=RetryPolicy(base_delay=0, max_delay=0),
    )
    plan = p.plan(p.resolve(['compute-a']))
    cloud._remove('services', s.a['id'])  # deleted meanwhile
    result = p.execute(plan)
    assert result.ok
    assert outcome(result, 'compute.service', s.a['id']).outcome == DONE


def test_blocked_plan_is_not_run(cloud):
    s = evacuation(cloud)
    stray = new_uuid()
    cloud.allocate(stray, {s.rp_a: {'VCPU': 1}})
    p = ServicePurge(cloud.connection(), clock=FakeClock())
    plan = p.plan(p.resolve(['compute-a']))
    with pytest.raises(
        CascadeError,
        match=r'Nothing was changed: 1 '
        r'consumer\(s\)',
    ):
        p.execute(plan)
    assert cloud.changes == []


def test_forced_unknown_consumer_is_deleted_everywhere_it_is_here(cloud):
    s = evacuation(cloud)
    stray = new_uuid()
    cloud.allocate(stray, {s.rp_a: {'VCPU': 1, 'MEMORY_MB': 256}})
    assert run(cloud, 'compute-a', force=True).ok
    assert not cloud.exists('consumers', stray)
    assert not cloud.exists('resource_providers', s.rp_a)


def test_ended_migration_left_on_the_source_is_removed(cloud):
    # a confirmed cold migration whose source clean-up never ran
    cloud.compute('compute-a')
    cloud.compute('compute-b', state='up', forced_down=False)
    vm = cloud.server('moved', 'compute-b')
    old = cloud.migration(
        vm,
        'compute-a',
        'compute-b',
        status='confirmed',
        migration_type='migration',
    )
    rp_a = cloud.node_of('compute-a')
    cloud.allocate(old['id'], {rp_a: {'VCPU': 1}})
    assert run(cloud, 'compute-a').ok
    assert not cloud.exists('consumers', old['id'])
    assert cloud.allocations_of(vm['id']) == {
        cloud.node_of('compute-b'): {'VCPU': 1, 'MEMORY_MB': 512}
    }


def test_ironic_service_with_300_nodes_is_purged(cloud):
    cloud.page_size = 100
    service = cloud.compute('ironic-1', nodes=[new_uuid() for _ in range(300)])
    nodes = [h['id'] for h in cloud.all('hypervisors')]
    for node in nodes[:30]:
        gone = cloud.server('baremetal', None, allocate=False)
        cloud.allocate(gone['id'], {node: {'CUSTOM_BAREMETAL': 1}})
        cloud.delete_server(gone)

    result = run(cloud, 'ironic-1', parallel=20)

    assert result.ok
    assert not any(cloud.exists('resource_providers', n) for n in nodes)
    assert not cloud.all('consumers')
    deletes = cloud.deleted_order()
    assert deletes[0] == f'/v2.1/os-services/{service["id"]}'
    assert len(deletes) == 301


# -- the service disabled for the purge --------------------------------------


def purge_of(cloud, events=None):
    return ServicePurge(
        cloud.connection(),
        clock=FakeClock(),
        retry=RetryPolicy(base_delay=0, max_delay=0),
        on_event=events.append if events is not None else None,
    )


def enabled_evacuation(cloud):
    s = evacuation(cloud)
    s.a.update(status='enabled', disabled_reason=None)
    return s


def service_writes(cloud):
    """The status updates of compute services, with their body."""
    return [
        (r.url.split('/v2.1')[1], r.json())
        for r in cloud.mocker.request_history
        if r.method == 'PUT' and '/os-services/' in r.url
    ]


def test_enabled_service_is_disabled_before_any_allocation_is_removed(cloud):
    s = enabled_evacuation(cloud)
    result = run(cloud, 'compute-a')
    assert result.ok
    assert cloud.changes == [
        ('PUT', f'/v2.1/os-services/{s.a["id"]}'),
        ('PUT', f'/allocations/{s.vm["id"]}'),
        ('DELETE', f'/v2.1/os-services/{s.a["id"]}'),
        ('DELETE', f'/resource_providers/{s.rp_a}'),
    ]
    assert service_writes(cloud) == [
        (
            f'/os-services/{s.a["id"]}',
            {'status': 'disabled', 'disabled_reason': DISABLED_REASON},
        )
    ]
    update = next(r for r in cloud.mocker.request_history if r.method == 'PUT')
    assert update.headers['OpenStack-API-Version'] == 'compute 2.59'
    assert 'osc-cascade' in DISABLED_REASON
    assert not cloud.exists('services', s.a['id'])


def test_plan_changes_nothing_and_says_the_service_would_be_disabled(cloud):
    s = enabled_evacuation(cloud)
    p = purge_of(cloud)
    plan = p.plan(p.resolve(['compute-a']))
    assert any(
        f'compute service compute-a ({s.a["id"]}) is enabled: the purge '
        f'disables it first' in n
        for n in plan.notes
    )
    assert cloud.changes == []
    assert s.a['status'] == 'enabled'


def test_service_is_enabled_again_after_a_refusal(cloud):
    s = enabled_evacuation(cloud)
    notes = []
    p = purge_of(cloud)
    p.notify = notes.append
    plan = p.plan(p.resolve(['compute-a']))
    # the scheduler places an instance there before the purge disables it
    late = cloud.server('late', 'compute-a')

    with pytest.raises(CascadeError) as err:
        p.execute(plan)

    assert str(err.value) == (
        f'Nothing was removed: with the service(s) disabled, 1 consumer(s) '
        f'block the purge: {late["id"]} (instance on host). compute service '
        f'compute-a ({s.a["id"]}) was enabled again: the purge did not '
        f'delete it.'
    )
    assert [body for _, body in service_writes(cloud)] == [
        {'status': 'disabled', 'disabled_reason': DISABLED_REASON},
        {'status': 'enabled'},
    ]
    assert (s.a['status'], s.a['disabled_reason']) == ('enabled', None)
    assert not [p for m, p in cloud.changes if 'allocations' in p]
    assert cloud.allocations_of(s.vm['id']).keys() == {s.rp_a, s.rp_b}
    assert notes[0].startswith('disabled compute service compute-a')


def test_anything_the_plan_shown_did_not_hold_refuses(cloud):
    s = enabled_evacuation(cloud)
    p = purge_of(cloud)
    plan = p.plan(p.resolve(['compute-a']))
    gone = cloud.server('gone', 'compute-a')
    cloud.delete_server(gone)  # its allocation stays: nothing blocks

    with pytest.raises(CascadeError, match='changed since the plan'):
        p.execute(plan)

    assert s.a['status'] == 'enabled'
    assert cloud.allocations_of(gone['id'])  # not removed


def test_service_is_enabled_again_after_a_failure(cloud):
    s = enabled_evacuation(cloud)
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.respawn.add(numa)  # nova-compute still running

    result = run(cloud, 'compute-a')

    assert outcome(result, 'compute.service', s.a['id']).outcome == SKIPPED
    assert cloud.exists('services', s.a['id'])
    assert (s.a['status'], s.a['disabled_reason']) == ('enabled', None)
    assert [body['status'] for _, body in service_writes(cloud)] == [
        'disabled',
        'enabled',
    ]
    # disabled before the first removal, enabled after the last step
    puts = [p for m, p in cloud.changes if m == 'PUT']
    assert puts[0] == f'/v2.1/os-services/{s.a["id"]}'
    assert puts[-1] == f'/v2.1/os-services/{s.a["id"]}'


def test_service_disabled_before_stays_disabled_after_a_failure(cloud):
    s = evacuation(cloud)
    s.a['disabled_reason'] = 'ops: failed PSU'
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.respawn.add(numa)

    result = run(cloud, 'compute-a')

    assert not result.ok
    assert service_writes(cloud) == []
    assert (s.a['status'], s.a['disabled_reason']) == (
        'disabled',
        'ops: failed PSU',
    )


def test_service_whose_status_changed_meanwhile_is_left_as_it_is(cloud):
    s = enabled_evacuation(cloud)
    numa = cloud.provider('compute-a_NUMA0', parent=s.rp_a)['uuid']
    cloud.respawn.add(numa)
    events = []

    def operator_steps_in(event):
        events.append(event)
        s.a['disabled_reason'] = 'ops: RAM errors'

    p = purge_of(cloud)
    p.on_event = operator_steps_in
    notes = []
    p.notify = notes.append
    result = p.execute(p.plan(p.resolve(['compute-a'])))

    assert not result.ok and events
    assert (s.a['status'], s.a['disabled_reason']) == (
        'disabled',
        'ops: RAM errors',
    )
    assert [body['status'] for _, body in service_writes(cloud)] == [
        'disabled'
    ]
    assert any('was not enabled again' in n for n in notes)


def test_a_refused_disable_changes_nothing(cloud):
    s = enabled_evacuation(cloud)
    cloud.forbidden.add(rf'/os-services/{s.a["id"]}$')
    p = purge_of(cloud)
    with pytest.raises(CascadeError) as refused:
        p.execute(p.plan(p.resolve([s.a['id']])))
    assert re.search(
        r'disabling compute service compute-a .* was refused \(HTTP 403\)'
        r'.*Nothing was removed',
        str(refused.value),
    )
    assert s.a['status'] == 'enabled'
    assert [m for m, _ in cloud.changes] == ['PUT']  # the refused one


def test_of_two_services_the_one_disabled_goes_back_if_the_next_fails(
    cloud,
):
    a = cloud.compute('compute-a', status='enabled')
    c = cloud.compute('compute-c', status='enabled')
    cloud.forbidden.add(rf'/os-services/{c["id"]}$')
    p = purge_of(cloud)
    plan = p.plan(p.resolve(['compute-a', 'compute-c']))
    with pytest.raises(CascadeError) as err:
        p.execute(plan)
    assert 'compute-a' in str(err.value) and 'enabled again' in str(err.value)
    assert (a['status'], c['status']) == ('enabled', 'enabled')
