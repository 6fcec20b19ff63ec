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

"""``--purge-allocations`` and Placement's owner traits (issue #29).

nova 34 (service version 73) puts OWNER_NOVA on every provider it creates
(``ResourceTracker._get_traits`` on the compute node's root, the libvirt
driver on its pGPU and memory-encryption children, PCI-in-Placement on its
PCI providers); Cyborg puts OWNER_CYBORG on the GPU and PCI providers it
creates under the compute node (its FPGA and other drivers put none), and
Neutron none on its agents' bandwidth providers. nova's own service delete
deletes the node's whole tree, whoever owns it. Where a tree shows owner
traits, only the root and the providers with OWNER_NOVA are nova's; where
none does (an older nova), the purge is as it was."""

import json
from types import SimpleNamespace

import pytest

from osc_cascade.engine import retry
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.resource import KEEP
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds.placement import Allocation, ResourceProvider
from osc_cascade.workflows.service_purge import ServicePurge
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakePlacementCloud
from tests.unit.fakes.common import new_uuid

NO_WAIT = RetryPolicy(base_delay=0, max_delay=0)


@pytest.fixture
def cloud():
    with FakePlacementCloud() as c:
        yield c


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch):
    monkeypatch.setattr(retry.Clock, 'sleep', lambda self, seconds: None)


def purge(osc, *args):
    return osc('compute', 'service', 'delete', '--purge-allocations', *args)


def purger(cloud):
    return ServicePurge(cloud.connection(), clock=FakeClock(), retry=NO_WAIT)


def plan_for(cloud, host):
    p = purger(cloud)
    return p.plan(p.resolve([host]))


def accelerated(cloud):
    """compute-a as nova 34 reports it, with a pGPU child of nova's, an
    FPGA of Cyborg's, and a deleted instance that held both and the
    root."""
    service = cloud.compute('compute-a', owner_traits=True)
    root = cloud.node_of('compute-a')
    pgpu = cloud.provider('compute-a_pci_0000_81_00_0', parent=root)['uuid']
    cloud.tag(pgpu, 'OWNER_NOVA')
    fpga = cloud.provider('compute-a_Intel_FPGA_0', parent=root)['uuid']
    cloud.tag(fpga, 'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL')
    gone = cloud.server('gone', 'compute-a')
    cloud.allocate(
        gone['id'],
        {pgpu: {'VGPU': 1}, fpga: {'FPGA': 1}},
    )
    cloud.delete_server(gone)
    return SimpleNamespace(
        service=service, root=root, pgpu=pgpu, fpga=fpga, gone=gone['id']
    )


def cyborgs_line(cloud, fpga):
    return (
        f'resource provider compute-a_Intel_FPGA_0 ({fpga}) is Cyborg\'s '
        f'(OWNER_CYBORG): not Nova\'s to delete'
    )


def test_cyborgs_provider_is_kept_and_nothing_is_deleted(cloud, osc):
    a = accelerated(cloud)

    result = purge(osc, '--yes', 'compute-a')

    assert result.code == 1
    assert cyborgs_line(cloud, a.fpga) in result.stderr
    assert 'Nothing was changed' in result.stderr
    assert cloud.changes == []
    assert cloud.exists('resource_providers', a.fpga)
    assert cloud.allocations_of(a.gone)[a.fpga] == {'FPGA': 1}
    assert cloud.exists('services', a.service['id'])


def test_dry_run_shows_the_kept_provider_and_exits_1(cloud, osc):
    a = accelerated(cloud)

    result = purge(osc, '--dry-run', 'compute-a', '-f', 'json')

    assert result.code == 1
    rows = {r['ID']: r for r in json.loads(result.stdout)}
    assert rows[a.fpga]['Action'] == KEEP
    assert rows[a.fpga]['Detail'] == cyborgs_line(cloud, a.fpga)
    assert rows[a.pgpu]['Action'] == 'delete'
    assert cyborgs_line(cloud, a.fpga) in result.stderr
    assert cloud.changes == []


def test_allocations_on_a_kept_provider_are_not_removed(cloud):
    a = accelerated(cloud)

    plan = plan_for(cloud, 'compute-a')

    allocation = next(
        s for s in plan.steps.values() if s.target.kind == Allocation.name
    )
    # only nova's share is the purge's to remove
    assert allocation.target.id == a.gone
    assert allocation.target.attrs['providers'] == sorted([a.root, a.pgpu])
    kept = [s for s in plan.kept() if s.target.kind == ResourceProvider.name]
    assert [(s.target.id, s.params['reason']) for s in kept] == [
        (a.fpga, cyborgs_line(cloud, a.fpga))
    ]


def test_child_without_owner_trait_in_a_tree_that_has_them_is_kept(cloud, osc):
    service = cloud.compute('compute-a', owner_traits=True)
    root = cloud.node_of('compute-a')
    agent = cloud.provider('compute-a:Open vSwitch agent', parent=root)
    bridge = cloud.provider(
        'compute-a:Open vSwitch agent:br-ex', parent=agent['uuid']
    )

    result = purge(osc, '--yes', 'compute-a')

    assert result.code == 1
    for p in (agent, bridge):
        assert (
            f'resource provider {p["name"]} ({p["uuid"]}) has no owner '
            f'trait, where its tree has OWNER_NOVA: not Nova\'s to delete'
        ) in result.stderr
    assert cloud.changes == []
    assert cloud.exists('services', service['id'])


def test_a_provider_marked_both_nova_and_another_owner_is_kept(cloud):
    cloud.compute('compute-a', owner_traits=True)
    root = cloud.node_of('compute-a')
    both = cloud.provider('compute-a_GPU_1', parent=root)['uuid']
    cloud.tag(both, 'OWNER_NOVA', 'OWNER_CYBORG')

    plan = plan_for(cloud, 'compute-a')

    assert [s.params['reason'] for s in plan.kept()] == [
        f'resource provider compute-a_GPU_1 ({both}) is Cyborg\'s '
        f'(OWNER_CYBORG), though also marked OWNER_NOVA: not Nova\'s to '
        f'delete'
    ]


def test_an_owner_trait_set_after_the_plan_refuses_the_run(cloud):
    """The plan shown is read again with the service disabled: a provider
    that became Cyborg's meanwhile refuses, with its line."""
    service = cloud.compute('compute-a', owner_traits=True, status='enabled')
    root = cloud.node_of('compute-a')
    gpu = cloud.provider('compute-a_GPU_0', parent=root)['uuid']
    cloud.tag(gpu, 'OWNER_NOVA')
    p = purger(cloud)
    plan = p.plan(p.resolve(['compute-a']))
    assert not plan.kept()
    cloud.get('resource_providers', gpu)['traits'] = ['OWNER_CYBORG']

    with pytest.raises(CascadeError) as err:
        p.execute(plan)

    assert (
        f'resource provider compute-a_GPU_0 ({gpu}) is Cyborg\'s '
        f'(OWNER_CYBORG): not Nova\'s to delete'
    ) in str(err.value)
    assert 'Nothing was removed' in str(err.value)
    assert cloud.exists('resource_providers', gpu)
    assert cloud.get('services', service['id'])['status'] == 'enabled'


def test_nova_34_tree_of_nova_s_own_providers_is_purged(cloud, osc):
    service = cloud.compute('compute-a', owner_traits=True)
    root = cloud.node_of('compute-a')
    pgpu = cloud.provider('compute-a_pci_0000_81_00_0', parent=root)['uuid']
    cloud.tag(pgpu, 'OWNER_NOVA')
    gone = cloud.server('gone', 'compute-a')
    cloud.allocate(gone['id'], {pgpu: {'VGPU': 1}})
    cloud.delete_server(gone)

    result = purge(osc, '--yes', 'compute-a')

    assert result.code == 0, result.stderr
    assert not cloud.exists('consumers', gone['id'])
    for rp in (root, pgpu):
        assert not cloud.exists('resource_providers', rp)
    assert not cloud.exists('services', service['id'])


def test_older_nova_without_owner_traits_purges_as_before(cloud, osc):
    service = cloud.compute('compute-a')
    root = cloud.node_of('compute-a')
    numa = cloud.provider('compute-a_NUMA0', parent=root)['uuid']
    agent = cloud.provider('compute-a:Open vSwitch agent', parent=root)['uuid']

    result = purge(osc, '--yes', 'compute-a')

    assert result.code == 0, result.stderr
    for rp in (root, numa, agent):
        assert not cloud.exists('resource_providers', rp)
    assert not cloud.exists('services', service['id'])


def test_placement_without_owner_traits_purges_as_before(cloud, osc):
    cloud.without_owner_traits()
    service = cloud.compute('compute-a')
    root = cloud.node_of('compute-a')
    numa = cloud.provider('compute-a_NUMA0', parent=root)['uuid']

    result = purge(osc, '--yes', 'compute-a')

    assert result.code == 0, result.stderr
    assert not cloud.exists('resource_providers', numa)
    assert not cloud.exists('services', service['id'])
    # nothing to filter on: no provider list by trait
    assert not [p for m, p in cloud.requests if 'required=' in p]


def test_traits_cost_one_call_per_owner_trait_whatever_the_providers(cloud):
    nodes = [new_uuid() for _ in range(300)]
    cloud.compute('ironic-1', nodes=nodes, owner_traits=True)

    plan = plan_for(cloud, 'ironic-1')

    assert not plan.kept()
    gets = [p for m, p in cloud.requests if m == 'GET']
    calls = [p for p in gets if 'traits' in p or 'required=' in p]
    assert calls[0] == '/traits?name=startswith:OWNER_'
    # then one list for each owner trait, in parallel
    assert sorted(calls[1:]) == [
        '/resource_providers?required=OWNER_CYBORG',
        '/resource_providers?required=OWNER_NOVA',
    ]


def test_a_root_with_only_another_owners_trait_is_kept(cloud):
    """The compute node's root is nova's by default, not when Placement
    says it is someone else's."""
    cloud.compute('compute-a')
    root = cloud.node_of('compute-a')
    cloud.tag(root, 'OWNER_CYBORG')

    plan = plan_for(cloud, 'compute-a')

    assert [s.params['reason'] for s in plan.kept()] == [
        f"resource provider compute-a ({root}) is Cyborg's (OWNER_CYBORG): "
        f"not Nova's to delete"
    ]
