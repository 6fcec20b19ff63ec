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

"""Neutron: floating IPs, routers, ports, trunks, subnets, networks,
security groups and RBAC policies, and (at the end) what its extensions
add: VPNaaS, QoS, subnet pools, address scopes, port forwardings, segment
ranges, local IPs, address groups, FWaaS v2, metering labels, network logs
and BGP VPNs, each only where its extension is loaded.

Neutron deletes synchronously; the order is what matters. Floating IPs go
before the router interfaces and gateways they need, router interfaces are
removed through the router (the port API refuses them), trunks go before
their ports, ports before their subnets, networks and security groups, and
the project's ``default`` security group goes last.

What another project uses is kept, which keeps the project: a security
group that another project's rule names as its remote group (Neutron
deletes such rules with the group: ``remote_group_id`` is ON DELETE
CASCADE), and a floating IP on another project's port (its delete would
take that port's address away).
"""

from __future__ import annotations

from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import Step
from osc_cascade.kinds.base import (
    ResourceKind,
    delete_of,
    owned,
    unless_absent,
)
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.compute import Server
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register

# Ports that belong to another resource and go with it, never deleted
# through the port API (which refuses most of them anyway).
ROUTER_INTERFACE_OWNERS = frozenset(
    {
        'network:router_interface',
        'network:router_interface_distributed',
        'network:ha_router_replicated_interface',
    }
)
OWNED_PORT_OWNERS = ROUTER_INTERFACE_OWNERS | frozenset(
    {
        'network:router_gateway',
        'network:router_ha_interface',
        'network:router_centralized_snat',
        'network:dhcp',
        'network:floatingip',
        'network:distributed',
        'Octavia',
        'neutron:LOADBALANCERV2',
    }
)


class _NeutronKind(ResourceKind):
    service_type = 'network'
    synchronous_delete = True
    #: the SDK proxy's delete method, e.g. ``delete_port``
    sdk_delete: str

    def delete(self, conn, ref):
        getattr(conn.network, self.sdk_delete)(ref.id, ignore_missing=False)


def router_interface_steps(router, inventory):
    """One break action per interface of the router, found among the
    project's ports (the router's own ports are owned by its project)."""
    for port in inventory.where(Port.name, device_id=router.id):
        if port.attrs.get('device_owner') in ROUTER_INTERFACE_OWNERS:
            yield (
                port,
                Step('remove_router_interface', router, {'port_id': port.id}),
            )


def clear_gateway_step(router):
    return Step('clear_router_gateway', router)


def others(uses: list[list[str]]) -> str:
    """`` (and N more)`` when a keep names one user of several."""
    return f' (and {len(uses) - 1} more)' if len(uses) > 1 else ''


def foreign(owner, project_id):
    """``owner`` if it is another project than ``project_id``, else None
    (the same project, or nothing: gone)."""
    return owner if owner and owner != project_id else None


def neutron_items(conn, path, key, project_id=None, **filters):
    """The raw JSON items of a Neutron list (``/ports``), the project's
    (every project's for None), page by page as the SDK reads them: an SDK
    resource per item cost more than the rest of a discovery (2.5 ms a
    resource at N=10,000)."""
    return pages(
        conn.network, path, key, {'project_id': project_id, **filters}
    )


def neutron_project(item) -> str:
    """An item's project, as the SDK reads it (``tenant_id`` on a Neutron
    that names no ``project_id``)."""
    return item.get('project_id') or item.get('tenant_id') or ''


def port_owners(conn, project_id, port_ids):
    """The owner of each port, '' for one that no longer exists: one list
    of the project's ports (every project's for the orphan search), and a
    GET of each port that is not among them (another project's: rare)."""
    if not port_ids:
        return {}
    owners = {
        p['id']: neutron_project(p)
        for p in neutron_items(conn, '/ports', 'ports', project_id)
        if p['id'] in port_ids
    }
    for port_id in sorted(set(port_ids) - set(owners)):
        try:
            owners[port_id] = conn.network.get_port(port_id).project_id
        except sdk_exc.NotFoundException:
            owners[port_id] = ''
    return owners


@register
class FloatingIP(_NeutronKind):
    name = 'network.floating_ip'
    sdk_get = 'network.get_ip'
    heat_types = ('OS::Neutron::FloatingIP',)
    sdk_delete = 'delete_ip'

    def list(self, conn, project_id):
        # Whose port each associated address is on. Cost: none when no
        # address is associated, else one list of the project's ports and
        # a GET of each port that is not the project's (at N=300: 1 call,
        # plus one per address on another project's port).
        ips = list(
            neutron_items(conn, '/floatingips', 'floatingips', project_id)
        )
        owners = port_owners(
            conn, project_id, {f['port_id'] for f in ips if f.get('port_id')}
        )
        return owned(
            (
                item_ref(
                    self.name,
                    f,
                    name_key='floating_ip_address',  # the SDK's name
                    owner=neutron_project(f),
                    router_id=f.get('router_id'),
                    port_id=f.get('port_id'),
                    address=f.get('floating_ip_address'),
                    port_project=foreign(
                        owners.get(f.get('port_id')), neutron_project(f)
                    ),
                )
                for f in ips
            ),
            project_id,
        )

    def primary_step(self, ref):
        other = ref.attrs.get('port_project')
        if other:
            return resource.keep(
                ref,
                f'associated with port {ref.attrs["port_id"]} of project '
                f'{other}, whose address it is',
            )
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        router = inventory.get(Router.name, ref.attrs.get('router_id'))
        if router is None:
            return
        # Neutron refuses to remove an interface or gateway that a
        # floating IP still needs (RouterInterfaceInUseByFloatingIP).
        for _port, step in router_interface_steps(router, inventory):
            yield Edge(me, step)
        if router.attrs.get('gateway_network_id'):
            yield Edge(me, clear_gateway_step(router))
        yield Edge(me, delete_of(Router.name, router.id))


@register
class Router(_NeutronKind):
    name = 'network.router'
    sdk_get = 'network.get_router'
    heat_types = ('OS::Neutron::Router',)
    sdk_delete = 'delete_router'

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    r,
                    owner=neutron_project(r),
                    gateway_network_id=(
                        r.get('external_gateway_info') or {}
                    ).get('network_id'),
                    has_routes=bool(r.get('routes')) or None,
                )
                for r in neutron_items(conn, '/routers', 'routers', project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        clear_routes = Step('clear_router_routes', ref)
        if ref.attrs.get('has_routes'):
            # a static route through an interface's subnet blocks
            # removing that interface
            yield Edge(clear_routes, me)
        for port, step in router_interface_steps(ref, inventory):
            yield Edge(step, me)
            if ref.attrs.get('has_routes'):
                yield Edge(clear_routes, step)
            for subnet_id in port.attrs.get('subnet_ids', []):
                yield Edge(step, delete_of(Subnet.name, subnet_id))
            yield Edge(
                step, delete_of(Network.name, port.attrs.get('network_id', ''))
            )
        if ref.attrs.get('gateway_network_id'):
            # The gateway is cleared, the external network is never ours to
            # touch (it is another project's, so it is not in the plan).
            yield Edge(clear_gateway_step(ref), me)

    def apply(self, conn, step):
        if step.action == 'remove_router_interface':
            conn.network.remove_interface_from_router(
                step.target.id, port=step.params['port_id']
            )
        elif step.action == 'clear_router_gateway':
            conn.network.update_router(
                step.target.id, external_gateway_info={}
            )
        elif step.action == 'clear_router_routes':
            conn.network.update_router(step.target.id, routes=[])
        else:
            super().apply(conn, step)


@register
class Port(_NeutronKind):
    name = 'network.port'
    sdk_get = 'network.get_port'
    heat_types = ('OS::Neutron::Port',)
    sdk_delete = 'delete_port'

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    p,
                    owner=neutron_project(p),
                    device_owner=p.get('device_owner') or None,
                    device_id=p.get('device_id') or None,
                    network_id=p.get('network_id'),
                    subnet_ids=sorted(
                        {ip['subnet_id'] for ip in p.get('fixed_ips') or []}
                    ),
                    security_group_ids=sorted(p.get('security_groups') or []),
                )
                for p in neutron_items(conn, '/ports', 'ports', project_id)
            ),
            project_id,
        )

    def primary_step(self, ref):
        if ref.attrs.get('device_owner') in OWNED_PORT_OWNERS:
            return None
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        if (ref.attrs.get('device_owner') or '').startswith('compute:'):
            # nova deletes the ports it created, and detaches the others
            yield Edge(delete_of(Server.name, ref.attrs.get('device_id')), me)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            yield Edge(me, delete_of(Subnet.name, subnet_id))
        yield Edge(me, delete_of(Network.name, ref.attrs.get('network_id')))
        for sg_id in ref.attrs.get('security_group_ids', []):
            yield Edge(me, delete_of(SecurityGroup.name, sg_id))


@register
class Trunk(_NeutronKind):
    name = 'network.trunk'
    heat_types = ('OS::Neutron::Trunk',)
    sdk_delete = 'delete_trunk'

    def list(self, conn, project_id):
        return owned(
            (
                self.ref(
                    t,
                    port_id=t.port_id,
                    sub_port_ids=sorted(
                        s['port_id'] for s in t.sub_ports or []
                    ),
                )
                for t in conn.network.trunks(project_id=project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        parent = inventory.get(Port.name, ref.attrs.get('port_id'))
        if parent is not None and parent.attrs.get('device_id'):
            # a trunk whose parent port is bound to a server is in use
            yield Edge(delete_of(Server.name, parent.attrs['device_id']), me)
        for port_id in [
            ref.attrs.get('port_id'),
            *ref.attrs.get('sub_port_ids', []),
        ]:
            yield Edge(me, delete_of(Port.name, port_id))


@register
class Subnet(_NeutronKind):
    name = 'network.subnet'
    sdk_get = 'network.get_subnet'
    heat_types = ('OS::Neutron::Subnet',)
    sdk_delete = 'delete_subnet'

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    s,
                    owner=neutron_project(s),
                    network_id=s.get('network_id'),
                )
                for s in neutron_items(conn, '/subnets', 'subnets', project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Network.name, ref.attrs.get('network_id')),
        )


@register
class Network(_NeutronKind):
    name = 'network.network'
    sdk_get = 'network.get_network'
    heat_types = ('OS::Neutron::Net',)
    sdk_delete = 'delete_network'

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    n,
                    owner=neutron_project(n),
                    shared=bool(n.get('shared')) or None,
                    external=bool(n.get('router:external')) or None,
                )
                for n in neutron_items(
                    conn, '/networks', 'networks', project_id
                )
            ),
            project_id,
        )


#: why a cascade without admin leaves the default security group
DEFAULT_GROUP_STAYS = (
    "Neutron lets admins alone delete a project's default group (and makes "
    'it again for any token of the project that lists groups): it stays, '
    "and an admin's `openstack orphan list` finds it once the project is "
    'gone'
)


@register
class SecurityGroup(_NeutronKind):
    name = 'network.security_group'
    sdk_get = 'network.get_security_group'
    heat_types = ('OS::Neutron::SecurityGroup',)
    sdk_delete = 'delete_security_group'

    def list(self, conn, project_id):
        # No project filter: Neutron answers a list filtered by project
        # by first creating that project's ``default`` group when it has
        # none, so every verification round would find a new one and the
        # project could never be deleted. The owner is checked here.
        groups = list(
            neutron_items(conn, '/security-groups', 'security_groups')
        )
        named_by = foreign_remote_rules(groups)
        return owned(
            (
                item_ref(
                    self.name,
                    g,
                    owner=neutron_project(g),
                    remote_rules=sorted(
                        [r['id'], r['remote_group_id']]
                        for r in g.get('security_group_rules') or []
                        if r.get('remote_group_id')
                        and r['remote_group_id'] != g['id']
                    ),
                    named_by=named_by.get(g['id']),
                )
                for g in groups
            ),
            project_id,
        )

    def primary_step(self, ref):
        if self.scoped and ref.name == 'default':
            return resource.keep(ref, DEFAULT_GROUP_STAYS, blocking=False)
        named_by = ref.attrs.get('named_by')
        if named_by:
            rule_id, other = named_by[0]
            return resource.keep(
                ref,
                f'rule {rule_id} of project {other} names it as remote '
                f'group{others(named_by)} (Neutron would delete that rule '
                f'with it)',
            )
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for rule_id, remote_id in ref.attrs.get('remote_rules', []):
            # A rule of this group names another group as its remote: this
            # group goes first, or, to cut a cycle of groups that name each
            # other, the rule is deleted.
            yield Edge(
                me,
                delete_of(self.name, remote_id),
                breaker=Step(
                    'delete_security_group_rule', ref, {'rule_id': rule_id}
                ),
            )
        if ref.name == 'default':
            for other in inventory.where(self.name):
                if other.name != 'default' and (
                    other.project_id == ref.project_id
                ):
                    yield Edge(delete_of(self.name, other.id), me)

    def apply(self, conn, step):
        if step.action != 'delete_security_group_rule':
            return super().apply(conn, step)
        conn.network.delete_security_group_rule(
            step.params['rule_id'], ignore_missing=True
        )


def foreign_remote_rules(groups) -> dict[str, list[list[str]]]:
    """For each group, the rules of other projects' groups that name it as
    their remote group: ``[rule id, project]``. The unfiltered group list
    carries every group's rules, so this costs no call of its own (0 at
    any N)."""
    owner = {g['id']: neutron_project(g) for g in groups}
    found: dict[str, list[list[str]]] = {}
    for g in groups:
        project = owner[g['id']]
        for rule in g.get('security_group_rules') or []:
            remote = rule.get('remote_group_id')
            if remote in owner and project != owner[remote]:
                found.setdefault(remote, []).append([rule['id'], project])
    return {k: sorted(v) for k, v in found.items()}


@register
class RBACPolicy(_NeutronKind):
    name = 'network.rbac_policy'
    heat_types = ('OS::Neutron::RBACPolicy',)
    sdk_delete = 'delete_rbac_policy'
    _object_kinds = {
        'network': Network.name,
        'security_group': SecurityGroup.name,
        'address_group': 'network.address_group',
    }

    def list(self, conn, project_id):
        return owned(
            (
                self.ref(
                    p,
                    object_type=p.object_type,
                    object_id=p.object_id,
                    target=p.target_project_id,
                )
                for p in conn.network.rbac_policies(project_id=project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        kind = self._object_kinds.get(ref.attrs.get('object_type'))
        if kind:
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(kind, ref.attrs.get('object_id')),
            )


# -- the rest: what Neutron extensions add -----------------------------------
#
# Each exists only where its extension is loaded. VPN objects go from the
# site connections inwards (connections, then the services, endpoint groups
# and policies they use), and a VPN service before its router's interfaces,
# gateway and the router (vpnaas refuses them while it needs them); subnets
# before the subnet pool they came from, pools before their address scope,
# QoS policies after the ports, networks and floating IPs using them, port
# forwardings before their floating IP and internal port.


def interfaces_on(subnet_id, inventory):
    """The break actions that remove router interfaces on a subnet."""
    for port in inventory.where(Port.name):
        router = inventory.get(Router.name, port.attrs.get('device_id'))
        if router is not None and subnet_id in port.attrs.get(
            'subnet_ids', []
        ):
            for iface, step in router_interface_steps(router, inventory):
                if iface.id == port.id:
                    yield step


class _ExtensionKind(_NeutronKind):
    #: the alias of the Neutron extension that adds the resource
    extension: ClassVar[str]
    #: the SDK proxy's list method, e.g. ``qos_policies``
    sdk_list: ClassVar[str]

    def list(self, conn, project_id):
        if self.extension not in self.neutron_extensions(conn):
            return []
        query = {'project_id': project_id} if project_id else {}
        return owned(
            self.refs(
                conn, getattr(conn.network, self.sdk_list)(**query), project_id
            ),
            project_id,
        )

    def refs(self, conn, items, project_id):
        return [self.ref(item) for item in items]

    def neutron_extensions(self, conn: Any) -> frozenset[str]:
        """The aliases of Neutron's loaded extensions, asked once per
        connection and workflow: every extension kind needs them in every
        discovery round, and the benchmark showed those identical GETs
        were a fifth of a small cascade's requests (Neutron answers them
        one at a time)."""
        return self.facts.get(
            'neutron-extensions',
            conn,
            lambda: frozenset(
                e.alias for e in unless_absent(conn.network.extensions)
            ),
        )


@register
class VPNSiteConnection(_ExtensionKind):
    name = 'network.vpn_ipsec_site_connection'
    extension = 'vpnaas'
    sdk_list = 'vpn_ipsec_site_connections'
    sdk_delete = 'delete_vpn_ipsec_site_connection'

    def refs(self, conn, items, project_id):
        return [
            self.ref(
                c,
                uses=sorted(
                    [kind, id_]
                    for kind, id_ in (
                        (VPNService.name, c.vpnservice_id),
                        (VPNIKEPolicy.name, c.ikepolicy_id),
                        (VPNIPsecPolicy.name, c.ipsecpolicy_id),
                        (VPNEndpointGroup.name, c.local_ep_group_id),
                        (VPNEndpointGroup.name, c.peer_ep_group_id),
                    )
                    if id_
                ),
            )
            for c in items
        ]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('uses', []):
            yield Edge(delete_of(self.name, ref.id), delete_of(kind, id_))


@register
class VPNService(_ExtensionKind):
    name = 'network.vpn_service'
    extension = 'vpnaas'
    sdk_list = 'vpn_services'
    sdk_delete = 'delete_vpn_service'

    def refs(self, conn, items, project_id):
        return [
            self.ref(v, router_id=v.router_id, subnet_id=v.subnet_id)
            for v in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        router = inventory.get(Router.name, ref.attrs.get('router_id'))
        if router is not None:
            for _port, step in router_interface_steps(router, inventory):
                yield Edge(me, step)
            if router.attrs.get('gateway_network_id'):
                yield Edge(me, clear_gateway_step(router))
            yield Edge(me, delete_of(Router.name, router.id))
        yield Edge(me, delete_of(Subnet.name, ref.attrs.get('subnet_id')))


@register
class VPNEndpointGroup(_ExtensionKind):
    name = 'network.vpn_endpoint_group'
    extension = 'vpnaas'
    sdk_list = 'vpn_endpoint_groups'
    sdk_delete = 'delete_vpn_endpoint_group'

    def refs(self, conn, items, project_id):
        return [
            self.ref(
                g,
                subnet_ids=sorted(g.endpoints or [])
                if g.type == 'subnet'
                else [],
            )
            for g in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            for step in interfaces_on(subnet_id, inventory):
                yield Edge(me, step)
            yield Edge(me, delete_of(Subnet.name, subnet_id))


@register
class VPNIKEPolicy(_ExtensionKind):
    name = 'network.vpn_ike_policy'
    extension = 'vpnaas'
    sdk_list = 'vpn_ike_policies'
    sdk_delete = 'delete_vpn_ike_policy'


@register
class VPNIPsecPolicy(_ExtensionKind):
    name = 'network.vpn_ipsec_policy'
    extension = 'vpnaas'
    sdk_list = 'vpn_ipsec_policies'
    sdk_delete = 'delete_vpn_ipsec_policy'


@register
class QoSPolicy(_ExtensionKind):
    name = 'network.qos_policy'
    extension = 'qos'
    sdk_list = 'qos_policies'
    sdk_delete = 'delete_qos_policy'

    def refs(self, conn, items, project_id):
        policies = list(items)
        if not policies or project_id is None:
            return [self.ref(p) for p in policies]
        # who uses them: the project's ports, networks and floating IPs
        # (another project's use makes the delete fail, as it must)
        users: dict[str, list[list[str]]] = {}
        for kind, path, key in (
            (Port.name, '/ports', 'ports'),
            (Network.name, '/networks', 'networks'),
            (FloatingIP.name, '/floatingips', 'floatingips'),
        ):
            for item in neutron_items(conn, path, key, project_id):
                if item.get('qos_policy_id'):
                    users.setdefault(item['qos_policy_id'], []).append(
                        [kind, item['id']]
                    )
        return [
            self.ref(p, used_by=sorted(users.get(p.id, []))) for p in policies
        ]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('used_by', []):
            yield Edge(delete_of(kind, id_), delete_of(self.name, ref.id))


@register
class SubnetPool(_ExtensionKind):
    name = 'network.subnet_pool'
    extension = 'subnet_allocation'
    sdk_list = 'subnet_pools'
    sdk_delete = 'delete_subnet_pool'

    def refs(self, conn, items, project_id):
        pools = list(items)
        # every project's subnets from it: another's blocks the delete
        subnet_ids = fan_out(
            lambda p: sorted(
                s.id for s in conn.network.subnets(subnet_pool_id=p.id)
            ),
            pools,
            service=self.service_type,
        )
        return [
            self.ref(p, address_scope_id=p.address_scope_id, subnet_ids=ids)
            for p, ids in zip(pools, subnet_ids, strict=True)
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            yield Edge(delete_of(Subnet.name, subnet_id), me)
        yield Edge(
            me, delete_of(AddressScope.name, ref.attrs.get('address_scope_id'))
        )


@register
class AddressScope(_ExtensionKind):
    name = 'network.address_scope'
    extension = 'address-scope'
    sdk_list = 'address_scopes'
    sdk_delete = 'delete_address_scope'


@register
class PortForwarding(_ExtensionKind):
    """A floating IP's port forwarding (owned by the floating IP's
    project, which the API does not repeat on it)."""

    name = 'network.port_forwarding'
    extension = 'floating-ip-port-forwarding'
    #: loaded with it since Stein: a floating IP's body shows its
    #: forwardings (``port_forwardings``)
    exposed = 'expose-port-forwarding-in-fip'

    def list(self, conn, project_id):
        if self.extension not in self.neutron_extensions(conn):
            return []
        fips = list(
            neutron_items(conn, '/floatingips', 'floatingips', project_id)
        )
        shown = [self.shown(conn, fip) for fip in fips]
        # one listing per floating IP whose body does not show them
        # (4,000 requests at N=100,000 without), made at once (kinds.calls)
        asked = iter(
            fan_out(
                lambda fip: list(
                    pages(
                        conn.network,
                        f'/floatingips/{fip["id"]}/port_forwardings',
                        'port_forwardings',
                    )
                ),
                [fip for fip, found in zip(fips, shown) if found is None],
                service=self.service_type,
            )
        )
        return owned(
            (
                item_ref(
                    self.name,
                    pf,
                    owner=neutron_project(fip),
                    floating_ip_id=fip['id'],
                    internal_port_id=pf.get('internal_port_id'),
                )
                for fip, found in zip(fips, shown, strict=True)
                for pf in (next(asked) if found is None else found)
            ),
            project_id,
        )

    def shown(self, conn, fip) -> list | None:
        """The forwardings the floating IP's body shows, or None where it
        may not show them all: without the extension that shows them, or
        an older Neutron's that leaves out their ids."""
        found = fip.get('port_forwardings')
        if self.exposed not in self.neutron_extensions(conn):
            return None
        if not isinstance(found, list) or not all(
            pf.get('id') and pf.get('internal_port_id') for pf in found
        ):
            return None
        return found

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        yield Edge(me, delete_of(FloatingIP.name, ref.attrs['floating_ip_id']))
        yield Edge(me, delete_of(Port.name, ref.attrs.get('internal_port_id')))

    def delete(self, conn, ref):
        conn.network.delete_port_forwarding(
            ref.id, ref.attrs['floating_ip_id'], ignore_missing=False
        )


@register
class NetworkSegmentRange(_ExtensionKind):
    """A range of segmentation ids set aside for the project: its networks
    take their segments from it, so they go first."""

    name = 'network.segment_range'
    extension = 'network-segment-range'
    sdk_list = 'network_segment_ranges'
    sdk_delete = 'delete_network_segment_range'

    def relations(self, ref, inventory):
        for net in inventory.where(Network.name):
            if net.project_id == ref.project_id:
                yield Edge(
                    delete_of(Network.name, net.id),
                    delete_of(self.name, ref.id),
                )


@register
class LocalIP(_ExtensionKind):
    """A local IP; its port (device owner ``network:local_ip``) goes with
    it, and a direct delete of that port then finds it gone."""

    name = 'network.local_ip'
    extension = 'local_ip'
    sdk_list = 'local_ips'
    sdk_delete = 'delete_local_ip'

    def refs(self, conn, items, project_id):
        return [
            self.ref(i, local_port_id=i.local_port_id, network_id=i.network_id)
            for i in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        yield Edge(me, delete_of(Port.name, ref.attrs.get('local_port_id')))
        yield Edge(me, delete_of(Network.name, ref.attrs.get('network_id')))


# -- more extensions: address groups, FWaaS v2, metering, logs, BGP VPNs -----
#
# Neutron refuses an address group that a security group rule names
# (AddressGroupInUse, whoever's the rule), a firewall group that still has
# ports (FirewallGroupInUse), a policy that a group uses and a rule that a
# policy holds (...InUse): those go first. A metering label's rules, and a
# BGP VPN's associations, go with it; a log goes with what it logs, and
# before it. The SDK's generators follow Neutron's next links.


def users_elsewhere(users, project_id):
    """The ``[what, project]`` of ``users`` that are not the project's."""
    return sorted(u for u in users if u[1] != project_id)


def by_item(uses) -> dict[str, list[list[str]]]:
    """``(item, user, project)`` triples as each item's ``[user,
    project]`` pairs."""
    found: dict[str, list[list[str]]] = {}
    for item, user, project in uses:
        if item:
            found.setdefault(item, []).append([user, project])
    return found


class _UsedElsewhere(_ExtensionKind):
    """A kind whose resource is kept while another project's uses it
    (its ``elsewhere`` attr: ``[user, project]`` pairs)."""

    #: the keep's reason, of the first user: ``{user}``, ``{project}``
    elsewhere_says: ClassVar[str]

    def users(self, conn, items) -> dict[str, list[list[str]]]:
        """Every project's users of each item: ``[user, project]``."""
        raise NotImplementedError

    def attrs_of(self, item, users) -> dict:
        """What else the item's reference needs."""
        return {}

    def refs(self, conn, items, project_id):
        items = list(items)
        users = self.users(conn, items) if items else {}
        return [
            self.ref(
                i,
                elsewhere=users_elsewhere(users.get(i.id, []), i.project_id),
                **self.attrs_of(i, users.get(i.id, [])),
            )
            for i in items
        ]

    def primary_step(self, ref):
        elsewhere = ref.attrs.get('elsewhere')
        if elsewhere:
            user, other = elsewhere[0]
            return resource.keep(
                ref,
                self.elsewhere_says.format(user=user, project=other)
                + others(elsewhere),
            )
        return super().primary_step(ref)


@register
class AddressGroup(_UsedElsewhere):
    name = 'network.address_group'
    extension = 'address-group'
    sdk_list = 'address_groups'
    sdk_delete = 'delete_address_group'
    elsewhere_says = (
        'a rule of security group {user} of project {project} names it'
    )

    def users(self, conn, items):
        # the rules naming each group, every project's (one filtered list
        # per group: address groups are few)
        naming = fan_out(
            lambda g: [
                [r.security_group_id, r.project_id]
                for r in conn.network.security_group_rules(
                    remote_address_group_id=g.id
                )
            ],
            items,
            service=self.service_type,
        )
        return {g.id: rules for g, rules in zip(items, naming, strict=True)}

    def attrs_of(self, item, users):
        return {'named_by': sorted(users)}

    def relations(self, ref, inventory):
        for group_id, _project in ref.attrs.get('named_by', []):
            yield Edge(
                delete_of(SecurityGroup.name, group_id),
                delete_of(self.name, ref.id),
            )


@register
class FirewallGroup(_ExtensionKind):
    """A FWaaS v2 firewall group: its ports are detached first (Neutron
    refuses a group with ports), then it goes before its policies."""

    name = 'network.firewall_group'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_groups'
    sdk_delete = 'delete_firewall_group'

    def refs(self, conn, items, project_id):
        return [
            self.ref(
                g,
                ports=sorted(g.ports or []),
                policy_ids=sorted(
                    {
                        p
                        for p in (
                            g.ingress_firewall_policy_id,
                            g.egress_firewall_policy_id,
                        )
                        if p
                    }
                ),
            )
            for g in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        if ref.attrs.get('ports'):
            detach = Step('detach_firewall_group_ports', ref)
            yield Edge(detach, me)
            for port_id in ref.attrs['ports']:
                yield Edge(detach, delete_of(Port.name, port_id))
                # a router's port: detached before the interface goes
                port = inventory.get(Port.name, port_id)
                router = port and inventory.get(
                    Router.name, port.attrs.get('device_id')
                )
                for iface, step in (
                    router_interface_steps(router, inventory) if router else ()
                ):
                    if iface.id == port_id:
                        yield Edge(detach, step)
        for policy_id in ref.attrs.get('policy_ids', []):
            yield Edge(me, delete_of(FirewallPolicy.name, policy_id))

    def apply(self, conn, step):
        if step.action != 'detach_firewall_group_ports':
            return super().apply(conn, step)
        conn.network.update_firewall_group(step.target.id, ports=[])


@register
class FirewallPolicy(_UsedElsewhere):
    """A firewall policy, after the groups that use it (another project's
    group keeps a shared one) and before its rules."""

    name = 'network.firewall_policy'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_policies'
    sdk_delete = 'delete_firewall_policy'
    elsewhere_says = 'firewall group {user} of project {project} uses it'

    def users(self, conn, items):
        return by_item(
            (policy, g.id, g.project_id)
            for g in conn.network.firewall_groups()  # every project's
            for policy in {
                g.ingress_firewall_policy_id,
                g.egress_firewall_policy_id,
            }
        )

    def attrs_of(self, item, users):
        return {'rule_ids': sorted(item.firewall_rules or [])}

    def relations(self, ref, inventory):
        for rule_id in ref.attrs.get('rule_ids', []):
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(FirewallRule.name, rule_id),
            )


@register
class FirewallRule(_UsedElsewhere):
    """A firewall rule, after the policies holding it (another project's
    policy keeps a shared one)."""

    name = 'network.firewall_rule'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_rules'
    sdk_delete = 'delete_firewall_rule'
    elsewhere_says = 'firewall policy {user} of project {project} holds it'

    def users(self, conn, items):
        return by_item(
            (rule_id, p.id, p.project_id)
            for p in conn.network.firewall_policies()  # every project's
            for rule_id in p.firewall_rules or []
        )


@register
class MeteringLabel(_ExtensionKind):
    """A metering label; its rules go with it."""

    name = 'network.metering_label'
    extension = 'metering'
    sdk_list = 'metering_labels'
    sdk_delete = 'delete_metering_label'


@register
class NetworkLog(_ExtensionKind):
    """A network log object (no SDK resource: raw calls, page by page).
    It goes before the security group, firewall group or port it logs
    (Neutron would drop it with them: deleting it first is the same, and
    leaves nothing half-logged)."""

    name = 'network.log'
    extension = 'logging'
    _logs_kinds = {
        'security_group': SecurityGroup.name,
        'firewall_group': FirewallGroup.name,
    }

    def list(self, conn, project_id):
        if self.extension not in self.neutron_extensions(conn):
            return []
        query = {'project_id': project_id} if project_id else {}
        return owned(
            (
                item_ref(
                    self.name,
                    log,
                    resource_type=log.get('resource_type'),
                    resource_id=log.get('resource_id'),
                    target_id=log.get('target_id'),
                )
                for log in pages(conn.network, '/log/logs', 'logs', query)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        kind = self._logs_kinds.get(ref.attrs.get('resource_type'))
        if kind and ref.attrs.get('resource_id'):
            yield Edge(me, delete_of(kind, ref.attrs['resource_id']))
        if ref.attrs.get('target_id'):
            yield Edge(me, delete_of(Port.name, ref.attrs['target_id']))

    def delete(self, conn, ref):
        request(conn.network, 'DELETE', f'/log/logs/{ref.id}')


@register
class BgpVpn(_ExtensionKind):
    """A BGP VPN; its network, router and port associations go with it
    (they may only name the VPN's own project's), before what they
    associate."""

    name = 'network.bgpvpn'
    extension = 'bgpvpn'
    sdk_list = 'bgpvpns'
    sdk_delete = 'delete_bgpvpn'

    def refs(self, conn, items, project_id):
        net = conn.network
        vpns = list(items)

        def associated(v):
            return sorted(
                [kind, getattr(a, field)]
                for kind, field, found in (
                    (
                        Network.name,
                        'network_id',
                        net.bgpvpn_network_associations(v.id),
                    ),
                    (
                        Router.name,
                        'router_id',
                        net.bgpvpn_router_associations(v.id),
                    ),
                    (
                        Port.name,
                        'port_id',
                        net.bgpvpn_port_associations(v.id),
                    ),
                )
                for a in found
            )

        return [
            self.ref(v, associated=found)
            for v, found in zip(
                vpns,
                fan_out(associated, vpns, service=self.service_type),
                strict=True,
            )
        ]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('associated', []):
            yield Edge(delete_of(self.name, ref.id), delete_of(kind, id_))
