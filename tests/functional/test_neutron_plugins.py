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

"""The kinds of Neutron's service plugins on the real minicloud (QoS,
trunks, port forwarding, local IPs, segment ranges, metering, logging,
FWaaS v2, VPNaaS, BGP VPN, subnet pools and address scopes): each made
through the API as a user (or, where Neutron lets only an admin, an
admin) makes it, seen in the dry run, deleted by the cascade and gone
afterwards; and what another project uses is kept, with its reason.

The plugins run without agents (tools/README.rst, Neutron): their objects
live in the database, which is all a kind lists and deletes. FWaaS v2
makes a project's default firewall group at any list naming the project:
the cascade deletes it with the rest and makes no new one. Each test
deletes what it made for another project in ``finally``; the projects go
with the fixture (or the module's clean-up, conftest).
"""

from __future__ import annotations

import contextlib

import openstack
import pytest

from tests.functional import test_more_kinds, topology
from tests.functional.conftest import needs
from tests.functional.test_cascade_cross_project import refused
from tests.functional.test_more_kinds import cascade
from tests.functional.topology import unique

pytestmark = pytest.mark.functional

#: project A, to cascade, and B, the other project (both go at the end)
projects = test_more_kinds.projects


def kept_with_its_share(cli, project_id, kept, share_id, reason):
    """The dry run keeps the resource and the RBAC share that serves it
    (and nothing else); the run refuses with the reason, changing
    nothing."""
    dry = cli(
        'project', 'delete', '--cascade', '--dry-run', project_id, '-f', 'json'
    )
    keeps = {(r['Kind'], r['ID']) for r in dry.json() if r['Action'] == 'keep'}
    assert keeps == {kept, ('network.rbac_policy', share_id)}, dry.stdout
    run = cli('project', 'delete', '--cascade', '--yes', project_id)
    assert run.code == 1, run.stdout + run.stderr
    assert 'Nothing was changed' in run.stderr, run.stderr
    assert reason in run.stderr, run.stderr


def shared_with(admin, a, b, object_type, object_id):
    """A's RBAC share of its object with B."""
    return admin.network.create_rbac_policy(
        object_type=object_type,
        object_id=object_id,
        action='access_as_shared',
        target_project_id=b.id,
        project_id=a.id,
    )


def extension(admin, alias):
    needs(
        admin.network.find_extension(alias),
        f'neutron has no {alias} extension',
    )


def gone(find, *ids):
    return all(find(i) is None for i in ids)


def network_of(conn, cidr='10.40.0.0/24'):
    net = conn.network.create_network(name=unique('net'))
    subnet = conn.network.create_subnet(
        network_id=net.id, ip_version=4, cidr=cidr, name=unique('sub')
    )
    return net, subnet


def routed(admin, conn, cidr='10.41.0.0/24'):
    """A network behind a router with a gateway on ``public``."""
    net, subnet = network_of(conn, cidr)
    router = conn.network.create_router(
        name=unique('r'),
        external_gateway_info={
            'network_id': topology.public_network(admin).id
        },
    )
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    return net, subnet, router


def test_a_qos_policy_and_its_rules_go_with_its_network(admin, projects, cli):
    extension(admin, 'qos')
    a, _b = projects
    net_a = topology.scoped(admin, a).network
    policy = net_a.create_qos_policy(name=unique('qos'))
    rule = net_a.create_qos_bandwidth_limit_rule(policy, max_kbps=1000)
    net = net_a.create_network(name=unique('net'), qos_policy_id=policy.id)
    planned = cascade(cli, a.id)
    assert ('network.qos_policy', policy.id) in planned
    assert gone(admin.network.find_qos_policy, policy.id)
    assert gone(admin.network.find_network, net.id)
    assert rule.id
    assert admin.identity.find_project(a.id) is None


def test_a_shared_qos_policy_another_project_uses_is_kept(
    admin, projects, cli
):
    extension(admin, 'qos')
    a, b = projects
    policy = topology.scoped(admin, a).network.create_qos_policy(
        name=unique('qos')
    )
    share = shared_with(admin, a, b, 'qos_policy', policy.id)
    theirs = topology.scoped(admin, b).network.create_network(
        name=unique('theirs'), qos_policy_id=policy.id
    )
    try:
        kept_with_its_share(
            cli,
            a.id,
            ('network.qos_policy', policy.id),
            share.id,
            f'network {theirs.id} of project {b.id} uses it',
        )
        assert admin.network.get_qos_policy(policy.id)
        assert admin.network.get_rbac_policy(share.id)
    finally:
        admin.network.delete_network(theirs, ignore_missing=True)


def test_a_trunk_goes_with_its_ports(admin, projects, cli):
    a, _b = projects
    net_a = topology.scoped(admin, a).network
    net, _subnet = network_of(topology.scoped(admin, a))
    parent = net_a.create_port(network_id=net.id)
    child = net_a.create_port(network_id=net.id)
    trunk = net_a.create_trunk(
        port_id=parent.id,
        sub_ports=[
            {
                'port_id': child.id,
                'segmentation_type': 'vlan',
                'segmentation_id': 101,
            }
        ],
    )
    planned = cascade(cli, a.id)
    assert ('network.trunk', trunk.id) in planned
    assert gone(admin.network.find_trunk, trunk.id)
    assert gone(admin.network.find_port, parent.id, child.id)


def test_a_port_forwarding_goes_before_its_floating_ip(admin, projects, cli):
    extension(admin, 'floating-ip-port-forwarding')
    a, _b = projects
    conn = topology.scoped(admin, a)
    net, subnet, router = routed(admin, conn)
    port = conn.network.create_port(
        network_id=net.id, fixed_ips=[{'subnet_id': subnet.id}]
    )
    fip = conn.network.create_ip(
        floating_network_id=topology.public_network(admin).id
    )
    pf = forward_ssh(conn, fip, port)
    planned = cascade(cli, a.id)
    assert ('network.port_forwarding', pf.id) in planned
    assert gone(admin.network.find_ip, fip.id)
    assert gone(admin.network.find_router, router.id)
    assert gone(admin.network.find_port, port.id)


def unique_port():
    import random

    return random.randint(20000, 60000)


def forward_ssh(conn, fip, port):
    """A forwarding of a random port of ``fip`` to ``port``'s 22."""
    return conn.network.create_port_forwarding(
        floatingip_id=fip.id,
        internal_port_id=port.id,
        internal_ip_address=port.fixed_ips[0]['ip_address'],
        internal_port=22,
        external_port=unique_port(),
        protocol='tcp',
    )


def test_a_local_ip_goes_with_its_port(admin, projects, cli):
    extension(admin, 'local_ip')
    a, _b = projects
    conn = topology.scoped(admin, a)
    net, _subnet = network_of(conn)
    local = conn.network.create_local_ip(network_id=net.id)
    planned = cascade(cli, a.id)
    assert ('network.local_ip', local.id) in planned
    assert gone(admin.network.find_local_ip, local.id)
    assert gone(admin.network.find_port, local.local_port_id)
    assert gone(admin.network.find_network, net.id)


def test_a_segment_range_goes_after_the_projects_networks(
    admin, projects, cli
):
    extension(admin, 'network-segment-range')
    a, _b = projects
    low = unique_port() % 400 + 500  # vni_ranges = 1:1000 (ml2_conf.ini)
    seg_range = admin.network.create_network_segment_range(
        name=unique('range'),
        network_type='vxlan',
        minimum=low,
        maximum=low + 2,
        shared=False,
        project_id=a.id,
    )
    net, _subnet = network_of(topology.scoped(admin, a))
    planned = cascade(cli, a.id)
    assert ('network.segment_range', seg_range.id) in planned
    assert gone(admin.network.find_network_segment_range, seg_range.id)
    assert gone(admin.network.find_network, net.id)


def test_a_metering_label_goes_with_its_rules(admin, projects, cli):
    extension(admin, 'metering')
    a, _b = projects
    label = admin.network.create_metering_label(
        name=unique('meter'), project_id=a.id
    )
    rule = admin.network.create_metering_label_rule(
        metering_label_id=label.id,
        direction='ingress',
        remote_ip_prefix='10.0.0.0/8',
    )
    planned = cascade(cli, a.id)
    assert ('network.metering_label', label.id) in planned
    assert gone(admin.network.find_metering_label, label.id)
    assert gone(admin.network.find_metering_label_rule, rule.id)


def test_a_network_log_goes_before_its_security_group(admin, projects, cli):
    extension(admin, 'logging')
    a, _b = projects
    conn = topology.scoped(admin, a)
    group = conn.network.create_security_group(name=unique('logged'))
    log = conn.network.post(
        '/log/logs',
        json={
            'log': {
                'name': unique('log'),
                'resource_type': 'security_group',
                'resource_id': group.id,
                'event': 'ALL',
            }
        },
    )
    assert log.status_code == 201, log.text
    log_id = log.json()['log']['id']
    planned = cascade(cli, a.id)
    assert ('network.log', log_id) in planned
    assert admin.network.get(f'/log/logs/{log_id}').status_code == 404
    assert gone(admin.network.find_security_group, group.id)


def project_firewall(admin, project_id):
    """The project's firewall objects, by an unfiltered admin list (a list
    naming the project would make its default group)."""
    return [
        (o.name, o.id)
        for lister in (
            admin.network.firewall_groups,
            admin.network.firewall_policies,
            admin.network.firewall_rules,
        )
        for o in lister()
        if o.project_id == project_id
    ]


def test_fwaas_groups_policies_and_rules_go(admin, projects, cli):
    extension(admin, 'fwaas_v2')
    a, _b = projects
    conn = topology.scoped(admin, a)
    _net, subnet, router = routed(admin, conn, '10.42.0.0/24')
    iface = next(
        p
        for p in conn.network.ports(device_id=router.id)
        if p.device_owner == 'network:router_interface'
    )
    rule = conn.network.create_firewall_rule(
        name=unique('fwr'), protocol='tcp', action='allow'
    )
    policy = conn.network.create_firewall_policy(
        name=unique('fwp'), firewall_rules=[rule.id]
    )
    # With no agent, a group with both ports and a policy stays
    # PENDING_CREATE, and neutron-fwaas refuses its update and delete
    # (FirewallGroupInPendingState): one group has the port, one the policy
    on_port = conn.network.create_firewall_group(
        name=unique('fwg'), ports=[iface.id]
    )
    group = conn.network.create_firewall_group(
        name=unique('fwg'), ingress_firewall_policy_id=policy.id
    )
    # neutron-fwaas made the default group with the first group
    defaults = [
        (name, id_)
        for name, id_ in project_firewall(admin, a.id)
        if name.startswith('default')
    ]
    assert sorted(n for n, _ in defaults) == sorted(
        [
            'default',
            'default egress',
            'default ingress',
            *(
                f'default {w} ipv{v}'
                for w in ('ingress', 'egress')
                for v in (4, 6)
            ),
        ]
    )
    planned = cascade(cli, a.id)
    for kind, id_ in (
        ('network.firewall_group', on_port.id),
        ('network.firewall_group', group.id),
        ('network.firewall_policy', policy.id),
        ('network.firewall_rule', rule.id),
    ):
        assert (kind, id_) in planned
    assert {id_ for _, id_ in defaults} <= {id_ for _, id_ in planned}
    # the cascade ended, and made no default group again
    assert project_firewall(admin, a.id) == []
    assert admin.identity.find_project(a.id) is None
    assert gone(admin.network.find_firewall_group, group.id)
    assert gone(admin.network.find_firewall_policy, policy.id)
    assert gone(admin.network.find_firewall_rule, rule.id)
    assert gone(admin.network.find_router, router.id)
    assert subnet.id


def test_a_shared_firewall_rule_another_projects_policy_holds_is_kept(
    admin, projects, cli
):
    extension(admin, 'fwaas_v2')
    a, b = projects
    rule = admin.network.create_firewall_rule(
        name=unique('fwr'),
        protocol='tcp',
        action='allow',
        shared=True,
        project_id=a.id,
    )
    theirs = topology.scoped(admin, b).network.create_firewall_policy(
        name=unique('theirs'), firewall_rules=[rule.id]
    )
    try:
        refused(
            cli,
            a.id,
            'network.firewall_rule',
            rule.id,
            f'firewall policy {theirs.id} of project {b.id} holds it',
        )
        assert admin.network.get_firewall_rule(rule.id)
    finally:
        admin.network.delete_firewall_policy(theirs, ignore_missing=True)


def test_a_vpn_goes_from_its_connections_inwards(admin, projects, cli):
    extension(admin, 'vpnaas')
    a, _b = projects
    conn = topology.scoped(admin, a)
    _net, subnet, router = routed(admin, conn, '10.43.0.0/24')
    vpn = conn.network
    service = vpn.create_vpn_service(router_id=router.id, name=unique('vpn'))
    # sha256: neutron-vpnaas 29's default sha1 is no longer in its
    # database's enum (500, Data truncated for column 'auth_algorithm')
    ike = vpn.create_vpn_ike_policy(
        name=unique('ike'), auth_algorithm='sha256'
    )
    ipsec = vpn.create_vpn_ipsec_policy(
        name=unique('ipsec'), auth_algorithm='sha256'
    )
    local = vpn.create_vpn_endpoint_group(
        name=unique('local'), type='subnet', endpoints=[subnet.id]
    )
    peer = vpn.create_vpn_endpoint_group(
        name=unique('peer'), type='cidr', endpoints=['10.99.0.0/24']
    )
    site = vpn.create_vpn_ipsec_site_connection(
        name=unique('site'),
        vpnservice_id=service.id,
        ikepolicy_id=ike.id,
        ipsecpolicy_id=ipsec.id,
        local_ep_group_id=local.id,
        peer_ep_group_id=peer.id,
        peer_address='192.0.2.10',
        peer_id='192.0.2.10',
        psk='secret',
    )
    planned = cascade(cli, a.id)
    made = {
        'network.vpn_ipsec_site_connection': site.id,
        'network.vpn_service': service.id,
        'network.vpn_ike_policy': ike.id,
        'network.vpn_ipsec_policy': ipsec.id,
    }
    for kind, id_ in made.items():
        assert (kind, id_) in planned
    assert {('network.vpn_endpoint_group', g.id) for g in (local, peer)} <= (
        planned
    )
    assert gone(admin.network.find_vpn_service, service.id)
    assert gone(admin.network.find_vpn_ipsec_site_connection, site.id)
    assert gone(admin.network.find_vpn_endpoint_group, local.id, peer.id)
    assert gone(admin.network.find_vpn_ike_policy, ike.id)
    assert gone(admin.network.find_vpn_ipsec_policy, ipsec.id)
    assert gone(admin.network.find_router, router.id)


def test_a_bgpvpn_goes_before_what_it_associates(admin, projects, cli):
    extension(admin, 'bgpvpn')
    a, _b = projects
    net, _subnet = network_of(topology.scoped(admin, a))
    # only an admin makes a BGP VPN (its route targets are the operator's)
    vpn = admin.network.create_bgpvpn(
        name=unique('bgp'), route_targets=['64512:1'], project_id=a.id
    )
    # the association, by the project (an admin of another is refused: 403)
    topology.scoped(admin, a).network.create_bgpvpn_network_association(
        vpn.id, network_id=net.id
    )
    planned = cascade(cli, a.id)
    assert ('network.bgpvpn', vpn.id) in planned
    # (no find_bgpvpn: its fall-back filters on name, which is no filter)
    assert admin.network.get(f'/bgpvpn/bgpvpns/{vpn.id}').status_code == 404
    assert gone(admin.network.find_network, net.id)


def test_a_subnet_pool_and_its_address_scope_go(admin, projects, cli):
    a, _b = projects
    conn = topology.scoped(admin, a)
    scope = conn.network.create_address_scope(
        name=unique('scope'), ip_version=4
    )
    pool = conn.network.create_subnet_pool(
        name=unique('pool'),
        prefixes=['10.50.0.0/16'],
        default_prefix_length=24,
        address_scope_id=scope.id,
    )
    net = conn.network.create_network(name=unique('net'))
    subnet = conn.network.create_subnet(
        network_id=net.id, ip_version=4, subnet_pool_id=pool.id
    )
    planned = cascade(cli, a.id)
    assert ('network.subnet_pool', pool.id) in planned
    assert ('network.address_scope', scope.id) in planned
    assert gone(admin.network.find_subnet, subnet.id)
    assert gone(admin.network.find_subnet_pool, pool.id)
    assert gone(admin.network.find_address_scope, scope.id)


def test_a_shared_subnet_pool_another_project_took_a_subnet_from_is_kept(
    admin, projects, cli
):
    a, b = projects
    pool = topology.scoped(admin, a).network.create_subnet_pool(
        name=unique('pool'),
        prefixes=['10.51.0.0/16'],
        default_prefix_length=24,
    )
    share = shared_with(admin, a, b, 'subnetpool', pool.id)
    b_net = topology.scoped(admin, b).network
    net = b_net.create_network(name=unique('theirs'))
    theirs = b_net.create_subnet(
        network_id=net.id, ip_version=4, subnet_pool_id=pool.id
    )
    try:
        kept_with_its_share(
            cli,
            a.id,
            ('network.subnet_pool', pool.id),
            share.id,
            f'subnet {theirs.id} of project {b.id} was allocated from it',
        )
        assert admin.network.get_subnet_pool(pool.id)
    finally:
        with contextlib.suppress(openstack.exceptions.SDKException):
            admin.network.delete_subnet(theirs)
            admin.network.delete_network(net)


def test_a_forwarding_to_another_projects_port_keeps_the_floating_ip(
    admin, projects, cli
):
    """Neutron checks no project between a forwarding's floating IP and
    its internal port: an admin forwards A's floating IP to B's port,
    behind B's router. A's cascade keeps the forwarding, with its reason,
    and the floating IP; A stays."""
    extension(admin, 'floating-ip-port-forwarding')
    a, b = projects
    fip = topology.scoped(admin, a).network.create_ip(
        floating_network_id=topology.public_network(admin).id
    )
    b_conn = topology.scoped(admin, b)
    net, subnet, router = routed(admin, b_conn, '10.43.0.0/24')
    port = b_conn.network.create_port(
        network_id=net.id, fixed_ips=[{'subnet_id': subnet.id}]
    )
    pf = forward_ssh(admin, fip, port)
    try:
        refused(
            cli,
            a.id,
            'network.port_forwarding',
            pf.id,
            f'it forwards to port {port.id} of project {b.id}',
        )
        assert admin.network.get_ip(fip.id)
        assert admin.network.get_port_forwarding(pf, fip.id)
        assert admin.identity.find_project(a.id) is not None
    finally:
        admin.network.delete_port_forwarding(pf, fip.id, ignore_missing=True)
        admin.network.delete_ip(fip, ignore_missing=True)
        with contextlib.suppress(openstack.exceptions.SDKException):
            admin.network.delete_port(port)
            admin.network.remove_interface_from_router(
                router, subnet_id=subnet.id
            )
            admin.network.delete_router(router)


def test_an_address_scope_another_projects_pool_is_in_is_kept(
    admin, projects, cli
):
    """A's address scope, shared with B, holds B's subnet pool: A's
    cascade keeps the scope and its share, with the reason, and A stays
    (Neutron would refuse the scope's delete: AddressScopeInUse)."""
    extension(admin, 'rbac-address-scope')
    a, b = projects
    scope = topology.scoped(admin, a).network.create_address_scope(
        name=unique('scope'), ip_version=4
    )
    share = shared_with(admin, a, b, 'address_scope', scope.id)
    theirs = topology.scoped(admin, b).network.create_subnet_pool(
        name=unique('theirs'),
        prefixes=['10.52.0.0/16'],
        default_prefix_length=24,
        address_scope_id=scope.id,
    )
    try:
        kept_with_its_share(
            cli,
            a.id,
            ('network.address_scope', scope.id),
            share.id,
            f'subnet pool {theirs.id} of project {b.id} is in it',
        )
        assert admin.network.get_address_scope(scope.id)
        assert admin.identity.find_project(a.id) is not None
    finally:
        admin.network.delete_subnet_pool(theirs, ignore_missing=True)
