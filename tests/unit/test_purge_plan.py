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

"""ServicePurge.resolve and .plan against the fake cloud: which providers,
which consumers, what blocks, and that finding them changes nothing."""

import pytest
import requests

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds.placement import Allocation, ResourceProvider
from osc_cascade.v1.compute_service import blocker_rows, plan_rows
from osc_cascade.workflows.consumers import (
    DELETED_INSTANCE,
    EVACUATED,
    MIGRATING,
    NOT_CONFIRMED,
    ON_HOST,
    UNKNOWN,
)
from osc_cascade.workflows.service_purge import ServicePurge
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakePlacementCloud
from tests.unit.fakes.common import new_uuid
from tests.unit.scenarios import evacuation

NO_WAIT = RetryPolicy(base_delay=0, max_delay=0)


@pytest.fixture
def cloud():
    with FakePlacementCloud() as c:
        yield c


def purger(cloud, **options):
    return ServicePurge(
        cloud.connection(),
        **options,
        clock=FakeClock(),
        retry=NO_WAIT,
    )


def plan_for(cloud, *hosts, **options):
    p = purger(cloud, **options)
    return p.plan(p.resolve(list(hosts)))


def consumers(plan):
    """consumer id -> (class, action, providers) of the plan's rows."""
    return {
        s.target.id: (
            s.target.attrs['class'],
            s.action,
            sorted(s.target.attrs['providers']),
        )
        for s in plan.steps.values()
        if s.target.kind == Allocation.name
    }


def providers(plan):
    return {
        s.target.id
        for s in plan.steps.values()
        if s.target.kind == ResourceProvider.name
    }


def test_evacuated_instance_share_is_planned_and_nothing_changes(cloud):
    s = evacuation(cloud)
    plan = plan_for(cloud, 'compute-a')
    assert consumers(plan) == {s.vm['id']: (EVACUATED, 'delete', [s.rp_a])}
    assert providers(plan) == {s.rp_a}
    rows = plan_rows(plan)
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ('remove', 'placement.allocation', s.vm['id']),
        ('delete', 'compute.service', s.a['id']),
        ('delete', 'placement.resource_provider', s.rp_a),
    ]
    assert cloud.changes == []


def test_nested_tree_is_planned_children_before_parents(cloud):
    cloud.compute('compute-a')
    root = cloud.node_of('compute-a')
    numa0 = cloud.provider('compute-a_NUMA0', parent=root)['uuid']
    numa1 = cloud.provider('compute-a_NUMA1', parent=root)['uuid']
    gpu = cloud.provider('compute-a_pGPU0', parent=numa0)['uuid']
    bandwidth = cloud.provider('compute-a:Open vSwitch agent', parent=root)[
        'uuid'
    ]
    gone = cloud.server('gone', 'compute-a')
    cloud.allocate(gone['id'], {numa0: {'PCPU': 2}, gpu: {'VGPU': 1}})
    cloud.delete_server(gone)
    port = new_uuid()
    cloud.allocate(port, {bandwidth: {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}})

    plan = plan_for(cloud, 'compute-a', force=True)

    assert providers(plan) == {root, numa0, numa1, gpu, bandwidth}
    assert consumers(plan) == {
        gone['id']: (
            DELETED_INSTANCE,
            'delete',
            sorted([root, numa0, gpu]),
        ),
        port: (UNKNOWN, 'delete', [bandwidth]),
    }
    order = [s.split(':')[-1] for s in plan.order()]
    service = order.index(cloud.all('services')[0]['id'])
    # children first; the node's root after the service, whose delete in
    # nova needs it
    assert order.index(gpu) < order.index(numa0) < service
    assert order.index(numa1) < service
    assert order.index(bandwidth) < service
    assert order.index(port) < order.index(bandwidth)
    assert plan.order()[-1] == f'delete:placement.resource_provider:{root}'


def test_ironic_service_with_300_nodes_reads_lists_not_each_node(cloud):
    cloud.page_size = 100
    nodes = [new_uuid() for _ in range(300)]
    cloud.compute('ironic-1', nodes=nodes)
    cloud.compute('ironic-2', nodes=[new_uuid() for _ in range(5)])
    ironic_nodes = [
        h['id']
        for h in cloud.all('hypervisors')
        if h['service']['host'] == 'ironic-1'
    ]
    gone = cloud.server('baremetal', None, allocate=False)
    cloud.allocate(gone['id'], {ironic_nodes[42]: {'CUSTOM_BAREMETAL': 1}})
    cloud.delete_server(gone)

    plan = plan_for(cloud, 'ironic-1')

    assert providers(plan) == set(ironic_nodes)
    assert consumers(plan) == {
        gone['id']: (DELETED_INSTANCE, 'delete', [ironic_nodes[42]])
    }
    gets = [p for m, p in cloud.requests if m == 'GET']
    # 305 hypervisors in pages of 100
    assert len([p for p in gets if '/os-hypervisors' in p]) == 4
    assert gets.count('/resource_providers') == 1
    assert not [p for p in gets if 'in_tree' in p]
    # allocations have no list across providers: one read per provider
    assert len([p for p in gets if p.endswith('/allocations')]) == 300


def test_other_hosts_and_their_consumers_are_not_planned(cloud):
    s = evacuation(cloud)
    cloud.compute('compute-c')
    other = cloud.server('other', 'compute-c')
    plan = plan_for(cloud, 'compute-a')
    assert s.rp_b not in providers(plan)
    assert cloud.node_of('compute-c') not in providers(plan)
    assert other['id'] not in consumers(plan)
    assert {
        s.target.id
        for s in plan.steps.values()
        if s.target.kind == 'compute.service'
    } == {s.a['id']}


def test_orphan_named_like_the_host_is_purged_with_a_note(cloud):
    # a reinstalled host: nova's node has a new UUID, the old provider of
    # the same name (orphaned by an earlier delete) still holds a leak
    cloud.compute('compute-a')
    new_node = cloud.node_of('compute-a')
    cloud._remove('resource_providers', new_node)
    orphan = cloud.provider('compute-a')['uuid']
    leak = new_uuid()
    cloud.allocate(leak, {orphan: {'VCPU': 1}})
    plan = plan_for(cloud, 'compute-a', force=True)
    assert providers(plan) == {orphan, new_node}
    assert leak in consumers(plan)
    assert any(orphan in note and 'orphan' in note for note in plan.notes)
    assert any(
        new_node in note and 'has no resource provider' in note
        for note in plan.notes
    )
    order = plan.order()
    # the orphan goes first: its name is free for nova's new provider
    assert order.index(f'delete:placement.resource_provider:{orphan}') < (
        order.index(f'delete:compute.service:{cloud.all("services")[0]["id"]}')
    )


def test_consumer_on_two_services_trees_is_one_rewrite(cloud):
    cloud.compute('compute-a')
    cloud.compute('compute-b')
    rp_a, rp_b = cloud.node_of('compute-a'), cloud.node_of('compute-b')
    gone = cloud.server('gone', 'compute-a')
    cloud.allocate(gone['id'], {rp_b: {'VCPU': 1}})
    cloud.delete_server(gone)
    plan = plan_for(cloud, 'compute-a', 'compute-b')
    assert consumers(plan) == {
        gone['id']: (
            DELETED_INSTANCE,
            'delete',
            sorted([rp_a, rp_b]),
        )
    }
    assert providers(plan) == {rp_a, rp_b}


def test_instance_on_host_blocks_even_without_allocations(cloud):
    cloud.compute('compute-a')
    vm = cloud.server('pinned', 'compute-a', allocate=False)
    plan = plan_for(cloud, 'compute-a', force=True)
    assert consumers(plan) == {vm['id']: (ON_HOST, 'keep', [])}
    rows = blocker_rows(plan)
    assert rows[0][:3] == (vm['id'], ON_HOST, [])
    assert 'pinned' in rows[0][3]


def test_unfinished_migration_without_allocations_here_blocks(cloud):
    s = evacuation(cloud)
    other = cloud.server('other', 'compute-b', allocate=False)
    resize = cloud.migration(
        other,
        'compute-b',
        'compute-a',
        status='post-migrating',
        migration_type='resize',
    )
    plan = plan_for(cloud, 'compute-a')
    assert consumers(plan)[resize['id']] == (MIGRATING, 'keep', [])
    assert consumers(plan)[s.vm['id']][0] == EVACUATED


def test_forced_unfinished_migration_notes_that_nova_keeps_the_service(cloud):
    s = evacuation(cloud)
    resize = cloud.migration(
        s.vm,
        'compute-a',
        'compute-b',
        status='finished',
        migration_type='resize',
    )
    cloud.allocate(resize['id'], {s.rp_a: {'VCPU': 2}})
    plan = plan_for(cloud, 'compute-a', force=True)
    assert consumers(plan)[resize['id']] == (
        NOT_CONFIRMED,
        'delete',
        [s.rp_a],
    )
    assert any(
        'nova refuses to delete the service of compute-a' in n
        and resize['id'] in n
        for n in plan.notes
    )


def test_service_that_is_up_gets_a_note(cloud):
    cloud.compute('compute-a', state='up', forced_down=False)
    plan = plan_for(cloud, 'compute-a')
    assert any(
        'nova-compute on compute-a is up: stop it first' in n
        for n in plan.notes
    )


def test_service_without_providers_plans_only_the_service(cloud):
    a = cloud.compute('compute-a', nodes=[])
    plan = plan_for(cloud, 'compute-a')
    assert [s.target.id for s in plan.steps.values()] == [a['id']]


# -- which service -------------------------------------------------------


def test_resolve_by_uuid_or_host(cloud):
    a = cloud.compute('compute-a')
    p = purger(cloud)
    assert [s.id for s in p.resolve([a['id'], 'compute-a'])] == [
        a['id'],
        a['id'],
    ]


def test_resolve_refuses_unknown_ambiguous_and_other_binaries(cloud):
    cloud.compute('compute-a')
    twins = [cloud.compute('twin'), cloud.compute('twin')]
    scheduler = cloud.compute('control', binary='nova-scheduler', nodes=[])
    p = purger(cloud)
    with pytest.raises(
        CascadeError, match="No nova-compute service with ID or host '7'"
    ):
        p.resolve(['7'])
    with pytest.raises(CascadeError, match='More than one') as exc:
        p.resolve(['twin'])
    assert all(t['id'] in str(exc.value) for t in twins)
    with pytest.raises(CascadeError, match='is nova-scheduler on control'):
        p.resolve([scheduler['id']])


def test_compute_api_without_migration_uuids_is_refused():
    with FakePlacementCloud(nova_max_version='2.52') as old:
        old.compute('compute-a')
        with pytest.raises(
            CascadeError, match=r'compute API microversion 2.59 or later'
        ):
            purger(old).resolve(['compute-a'])
        assert old.changes == []


def test_cloud_without_placement_is_refused():
    services = ['identity', 'compute', 'network', 'block-storage', 'image']
    with FakePlacementCloud(services) as cloud:
        cloud.compute('compute-a')
        with pytest.raises(CascadeError, match='needs Placement'):
            purger(cloud).resolve(['compute-a'])


# -- errors while finding: one clear line, nothing changed ----------------


def test_placement_403_is_one_clear_line(cloud):
    evacuation(cloud)
    cloud.forbidden.add(r'/resource_providers$')
    with pytest.raises(CascadeError) as exc:
        plan_for(cloud, 'compute-a')
    message = str(exc.value)
    assert message.startswith(
        'listing resource providers was refused '
        '(HTTP 403): --purge-allocations needs the '
        'admin role. Nothing was changed.'
    )
    assert '\n' not in message
    assert cloud.changes == []


def test_nova_503_is_retried_then_reported(cloud):
    evacuation(cloud)
    cloud.faults += [('GET', r'/os-hypervisors', 503)] * 4
    with pytest.raises(
        CascadeError,
        match='listing hypervisors failed, so nothing was changed',
    ):
        plan_for(cloud, 'compute-a')
    assert len([p for m, p in cloud.requests if 'os-hypervisors' in p]) == 4
    assert cloud.changes == []


def test_a_passing_503_is_retried(cloud):
    s = evacuation(cloud)
    cloud.faults += [('GET', rf'/resource_providers/{s.rp_a}/alloc', 503)]
    plan = plan_for(cloud, 'compute-a')
    assert s.vm['id'] in consumers(plan)


def test_placement_timeout_is_reported(cloud):
    s = evacuation(cloud)
    cloud.mocker.get(
        f'http://placement.test/resource_providers/{s.rp_a}/allocations',
        exc=requests.exceptions.ConnectTimeout,
    )
    with pytest.raises(
        CascadeError,
        match=f'reading the allocations of '
        f'resource provider {s.rp_a} '
        f'failed, so nothing was '
        f'changed',
    ):
        plan_for(cloud, 'compute-a')
    assert cloud.changes == []
