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

"""What Neutron's extensions add: VPNaaS, QoS, subnet pools and address
scopes, port forwardings, segment ranges and local IPs, each with the
edges Neutron's ``...InUse`` answers call for."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.kinds.network import (
    core,
    local_ip,
    port_forwarding,
    qos,
    rbac,
    segment_range,
    subnet_pool,
    vpnaas,
)
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.network_extensions import NEUTRON_EXTRA
from tests.unit.fakes.run import cascade_for
from tests.unit.scenarios import all_services_project

EXTENSION_KINDS = [
    vpnaas.VPNSiteConnection,
    vpnaas.VPNService,
    vpnaas.VPNEndpointGroup,
    vpnaas.VPNIKEPolicy,
    vpnaas.VPNIPsecPolicy,
    qos.QoSPolicy,
    subnet_pool.SubnetPool,
    subnet_pool.AddressScope,
    segment_range.NetworkSegmentRange,
    local_ip.LocalIP,
]
#: the fake's collection of each
COLLECTION = {
    vpnaas.VPNSiteConnection: 'vpn/ipsec-site-connections',
    vpnaas.VPNService: 'vpn/vpnservices',
    vpnaas.VPNEndpointGroup: 'vpn/endpoint-groups',
    vpnaas.VPNIKEPolicy: 'vpn/ikepolicies',
    vpnaas.VPNIPsecPolicy: 'vpn/ipsecpolicies',
    qos.QoSPolicy: 'qos/policies',
    subnet_pool.SubnetPool: 'subnetpools',
    subnet_pool.AddressScope: 'address-scopes',
    segment_range.NetworkSegmentRange: 'network_segment_ranges',
    local_ip.LocalIP: 'local_ips',
}
FIELDS = {
    vpnaas.VPNSiteConnection: {
        'vpnservice_id': None,
        'ikepolicy_id': None,
        'ipsecpolicy_id': None,
    },
    vpnaas.VPNService: {'router_id': None, 'subnet_id': None},
    vpnaas.VPNEndpointGroup: {'type': 'cidr', 'endpoints': []},
    local_ip.LocalIP: {'local_port_id': None, 'network_id': None},
}


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def everything(cloud, external):
    return all_services_project(cloud, 'A', external)


@pytest.mark.parametrize('kind_class', EXTENSION_KINDS, ids=lambda k: k.name)
def test_each_lists_the_projects_own_with_the_project_filter(
    cloud, kind_class
):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    mine = cloud.neutron(
        COLLECTION[kind_class], a, **FIELDS.get(kind_class, {})
    )
    cloud.neutron(COLLECTION[kind_class], b, **FIELDS.get(kind_class, {}))
    refs = kind_class().list(cloud.connection(), a)
    assert [r.id for r in refs] == [mine['id']]
    assert any(
        f'/v2.0/{COLLECTION[kind_class]}?' in p and f'project_id={a}' in p
        for _, p in cloud.requests
    )


def test_without_the_extension_nothing_is_asked(cloud, monkeypatch):
    a = scenarios.project(cloud, 'A')['id']
    cloud.neutron('qos/policies', a)
    monkeypatch.setattr('tests.unit.fakes.network_extensions.EXTENSIONS', [])
    assert qos.QoSPolicy().list(cloud.connection(), a) == []
    assert not [p for _, p in cloud.requests if '/qos/' in p]


def test_vpn_objects_go_from_the_connections_inwards(cloud, everything):
    e = everything
    _pc, _t, plan = cascade_for(cloud, e['project'])
    d = {
        k: step_id('delete', kind, e[k])
        for k, kind in (
            ('site', vpnaas.VPNSiteConnection.name),
            ('vpn', vpnaas.VPNService.name),
            ('ike', vpnaas.VPNIKEPolicy.name),
            ('ipsec', vpnaas.VPNIPsecPolicy.name),
            ('local_group', vpnaas.VPNEndpointGroup.name),
            ('peer_group', vpnaas.VPNEndpointGroup.name),
            ('router', core.Router.name),
            ('subnet', core.Subnet.name),
        )
    }
    for then in ('vpn', 'ike', 'ipsec', 'local_group', 'peer_group'):
        assert (d['site'], d[then]) in plan.edges
    assert (d['vpn'], d['router']) in plan.edges
    router_steps = {
        s
        for s in plan.steps
        if s.startswith(('remove_router_interface:', 'clear_router_gateway:'))
    }
    assert router_steps
    assert {(d['vpn'], s) for s in router_steps} <= plan.edges
    # a subnet endpoint group: before the subnet and its interface
    assert (d['local_group'], d['subnet']) in plan.edges
    assert any(
        (d['local_group'], s) in plan.edges
        for s in router_steps
        if s.startswith('remove_router_interface')
    )


def test_qos_pools_scopes_forwardings_ranges_and_local_ips(cloud, everything):
    e = everything
    _pc, _t, plan = cascade_for(cloud, e['project'])

    def d(kind, key):
        return step_id('delete', kind.name, e[key])

    assert {
        (d(core.Port, 'qos_port'), d(qos.QoSPolicy, 'qos')),
        (d(core.Subnet, 'pool_subnet'), d(subnet_pool.SubnetPool, 'pool')),
        (
            d(subnet_pool.SubnetPool, 'pool'),
            d(subnet_pool.AddressScope, 'scope'),
        ),
        (
            d(port_forwarding.PortForwarding, 'pf'),
            d(core.FloatingIP, 'pf_fip'),
        ),
        (d(port_forwarding.PortForwarding, 'pf'), d(core.Port, 'pf_port')),
        (
            d(core.Network, 'network'),
            d(segment_range.NetworkSegmentRange, 'segment_range'),
        ),
        (d(local_ip.LocalIP, 'local_ip'), d(core.Network, 'network')),
    } <= plan.edges


def test_neutron_accepts_every_delete_in_that_order(cloud, everything):
    # delete_shared: the project's private Mistral workflow, whose members
    # an admin is not shown, goes too (kinds.workflow.MEMBERS_UNSEEN)
    pc, targets, plan = cascade_for(
        cloud, everything['project'], delete_shared=True
    )
    pc.execute(plan, targets)
    assert len(pc.runs) == 1  # no ...InUse, nothing left for a 2nd round
    for collection, _extension in NEUTRON_EXTRA.values():
        assert not [
            o
            for o in cloud.all(collection)
            if o['project_id'] == everything['project']
        ]
    assert not cloud.all('port_forwardings')


def forwarding_refs(cloud, project_id):
    refs = port_forwarding.PortForwarding().list(
        cloud.connection(), project_id
    )
    return sorted((r.id, r.project_id, sorted(r.attrs.items())) for r in refs)


def per_ip_listings(cloud):
    return [p for _, p in cloud.requests if p.endswith('/port_forwardings')]


def test_forwardings_shown_in_the_floating_ips_body_need_no_call_per_ip(
    cloud, everything
):
    found = forwarding_refs(cloud, everything['project'])
    assert found == [
        (
            everything['pf'],
            everything['project'],
            [
                ('floating_ip_id', everything['pf_fip']),
                ('internal_port_id', everything['pf_port']),
            ],
        )
    ]
    assert not per_ip_listings(cloud)


@pytest.mark.parametrize(
    'older',
    ['extension not loaded', 'ids not shown'],
)
def test_forwardings_are_listed_per_ip_where_the_body_may_not_show_all(
    cloud, everything, monkeypatch, older
):
    shown = forwarding_refs(cloud, everything['project'])
    fips = [
        f
        for f in cloud.all('floatingips')
        if f['project_id'] == everything['project']
    ]
    if older == 'extension not loaded':
        monkeypatch.setattr(
            'tests.unit.fakes.network_extensions.EXTENSIONS',
            ['floating-ip-port-forwarding'],
        )
        asked = len(fips)  # every one
    else:  # a Neutron before the body showed each forwarding's id
        monkeypatch.setattr(
            'tests.unit.fakes.network_extensions.EXPOSED_FIELDS',
            ('protocol', 'internal_port', 'external_port'),
        )
        asked = 1  # the one with a forwarding; an empty list proves none
    cloud.requests.clear()
    assert forwarding_refs(cloud, everything['project']) == shown
    assert len(fips) > 1
    assert len(per_ip_listings(cloud)) == asked


def shared_with(cloud, e, object_type, object_id, target):
    """Project A's RBAC share of its object with ``target``."""
    return cloud.add(
        'rbac_policies',
        project_id=e['project'],
        tenant_id=e['project'],
        object_type=object_type,
        object_id=object_id,
        action='access_as_shared',
        target_tenant=target,
    )


def test_a_qos_policy_another_project_uses_through_a_share_is_kept(
    cloud, everything
):
    """Neutron refuses a policy's delete while any project's port, network
    or floating IP uses it (QosPolicyInUse, seen on the minicloud): the
    kind looked at the project's own users only, so the run deleted the
    rest and stopped there. The projects a policy is shared with (RBAC)
    are read; their user keeps it, and the share that serves it stays
    (Neutron refuses it too: RbacPolicyInUse)."""
    e = everything
    b = scenarios.project(cloud, 'B')['id']
    share = shared_with(cloud, e, 'qos_policy', e['qos'], b)
    theirs, _subnet = scenarios.network(cloud, b, 'theirs', '10.9.0.0/24')
    theirs['qos_policy_id'] = e['qos']
    _pc, _t, plan = cascade_for(cloud, e['project'])
    kept = plan.steps[step_id('keep', qos.QoSPolicy.name, e['qos'])]
    assert kept.params['reason'] == (
        f'network {theirs["id"]} of project {b} uses it'
    )
    assert step_id('keep', rbac.RBACPolicy.name, share['id']) in plan.steps
    # and Neutron cannot filter on a policy: no list asked it to
    assert not [p for _, p in cloud.requests if 'qos_policy_id=' in p]


def test_a_qos_policy_shared_with_nobody_asks_no_other_project(
    cloud, everything
):
    e = everything
    _pc, _t, plan = cascade_for(cloud, e['project'])
    assert step_id('delete', qos.QoSPolicy.name, e['qos']) in plan.steps
    asked = {
        p.split('project_id=')[1].split('&')[0]
        for _, p in cloud.requests
        if p.split('?')[0].endswith(('/ports', '/networks', '/floatingips'))
        and 'project_id=' in p
    }
    assert asked == {e['project']}


def test_the_fake_refuses_a_pool_with_subnets_and_a_group_in_use_as_400(
    cloud, everything
):
    """Neutron 29 answers both with 400, not 409 (minicloud): a run does
    not retry them, so the order must be right the first time."""
    e = everything
    conn = cloud.connection()
    with pytest.raises(sdk_exc.BadRequestException, match='in use'):
        conn.network.delete_subnet_pool(e['pool'])
    site = cloud.all('ipsec_site_connections')[0]
    with pytest.raises(sdk_exc.BadRequestException, match='in use'):
        conn.network.delete_vpn_endpoint_group(site['local_ep_group_id'])


def test_a_subnet_pool_another_project_took_a_subnet_from_is_kept(
    cloud, everything
):
    """Neutron refuses the pool's delete while any project's subnet came
    from it (400: the run does not even retry), and the edge from a subnet
    outside the plan was dropped: the run would delete the rest and fail
    there. Another project's subnet keeps it, with its reason, and the
    share that serves it (RbacPolicyInUse otherwise, minicloud)."""
    e = everything
    b = scenarios.project(cloud, 'B')['id']
    _net, theirs = scenarios.network(cloud, b, 'theirs', '10.9.0.0/24')
    theirs['subnetpool_id'] = e['pool']
    share = shared_with(cloud, e, 'subnetpool', e['pool'], b)
    _pc, _t, plan = cascade_for(cloud, e['project'])
    kept = plan.steps[step_id('keep', subnet_pool.SubnetPool.name, e['pool'])]
    assert kept.params['reason'] == (
        f'subnet {theirs["id"]} of project {b} was allocated from it'
    )
    assert step_id('keep', rbac.RBACPolicy.name, share['id']) in plan.steps


def test_a_forwarding_to_another_projects_port_keeps_it_and_its_ip(
    cloud, everything
):
    """Neutron checks no project between a forwarding's floating IP and its
    internal port (seen on the minicloud: an admin forwards project A's
    floating IP to B's port). Before, A's cascade deleted the forwarding
    and the floating IP, cutting B's traffic; now the forwarding is kept
    with its reason, the floating IP stays, and A is not deleted."""
    e = everything
    b = scenarios.project(cloud, 'B')['id']
    net_b, subnet_b = scenarios.network(cloud, b, cidr='10.9.0.0/24')
    theirs = scenarios.port(cloud, b, net_b, subnet_b, 'theirs')
    cloud.get('port_forwardings', e['pf'])['internal_port_id'] = theirs['id']
    pc, targets, plan = cascade_for(cloud, e['project'])
    kept = plan.steps[
        step_id('keep', port_forwarding.PortForwarding.name, e['pf'])
    ]
    assert kept.params['reason'] == (
        f'it forwards to port {theirs["id"]} of project {b}: deleting it '
        f"would cut that project's traffic"
    )
    with pytest.raises(CascadeError, match=theirs['id']):
        pc.execute(plan, targets)
    assert cloud.get('port_forwardings', e['pf'])
    assert cloud.get('floatingips', e['pf_fip'])
    assert cloud.get('projects', e['project'])
    # the project's own forwardings: one GET a port, none per project
    assert forwarding_refs(cloud, b) == []


def test_an_address_scope_another_projects_pool_is_in_is_kept(
    cloud, everything
):
    """Project B's subnet pool in A's address scope (shared with B):
    Neutron refuses the scope's delete (AddressScopeInUse), and the kind
    did not look: the plan deleted the scope and its share. Now the scope
    is kept with its reason, and the share that serves it."""
    e = everything
    b = scenarios.project(cloud, 'B')['id']
    share = shared_with(cloud, e, 'address_scope', e['scope'], b)
    theirs = cloud.neutron(
        'subnetpools', b, name='theirs', address_scope_id=e['scope']
    )
    _pc, _t, plan = cascade_for(cloud, e['project'])
    kept = plan.steps[
        step_id('keep', subnet_pool.AddressScope.name, e['scope'])
    ]
    assert kept.params['reason'] == (
        f'subnet pool {theirs["id"]} of project {b} is in it'
    )
    assert step_id('keep', rbac.RBACPolicy.name, share['id']) in plan.steps
    # the project's own pool in it still goes, before it
    assert step_id('delete', subnet_pool.SubnetPool.name, e['pool']) in (
        plan.steps
    )
