"""Neutron: floating IPs, routers, ports, trunks, subnets, networks,
security groups and RBAC policies.

Neutron deletes synchronously; the order is what matters. Floating IPs go
before the router interfaces and gateways they need, router interfaces are
removed through the router (the port API refuses them), trunks go before
their ports, ports before their subnets, networks and security groups, and
the project's ``default`` security group goes last.
"""

from __future__ import annotations

from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.compute import Server
from osc_cascade.planner import Edge
from osc_cascade.resource import Step

# Ports that belong to another resource and go with it, never deleted
# through the port API (which refuses most of them anyway).
ROUTER_INTERFACE_OWNERS = frozenset({
    'network:router_interface',
    'network:router_interface_distributed',
    'network:ha_router_replicated_interface',
})
OWNED_PORT_OWNERS = ROUTER_INTERFACE_OWNERS | frozenset({
    'network:router_gateway',
    'network:router_ha_interface',
    'network:router_centralized_snat',
    'network:dhcp',
    'network:floatingip',
    'network:distributed',
    'Octavia',
    'neutron:LOADBALANCERV2',
})


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
            yield port, Step('remove_router_interface', router,
                             {'port_id': port.id})


def clear_gateway_step(router):
    return Step('clear_router_gateway', router)


class FloatingIP(_NeutronKind):
    name = 'network.floating_ip'
    sdk_delete = 'delete_ip'

    def list(self, conn, project_id):
        return owned((self.ref(f, router_id=f.router_id, port_id=f.port_id,
                               address=f.floating_ip_address)
                      for f in conn.network.ips(project_id=project_id)),
                     project_id)

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


class Router(_NeutronKind):
    name = 'network.router'
    sdk_delete = 'delete_router'

    def list(self, conn, project_id):
        return owned((self.ref(
            r, gateway_network_id=(r.external_gateway_info or {}).get(
                'network_id'), has_routes=bool(r.routes) or None)
            for r in conn.network.routers(project_id=project_id)),
            project_id)

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
            yield Edge(step, delete_of(Network.name,
                                       port.attrs.get('network_id', '')))
        if ref.attrs.get('gateway_network_id'):
            # The gateway is cleared, the external network is never ours to
            # touch (it is another project's, so it is not in the plan).
            yield Edge(clear_gateway_step(ref), me)

    def apply(self, conn, step):
        if step.action == 'remove_router_interface':
            conn.network.remove_interface_from_router(
                step.target.id, port=step.params['port_id'])
        elif step.action == 'clear_router_gateway':
            conn.network.update_router(step.target.id,
                                       external_gateway_info={})
        elif step.action == 'clear_router_routes':
            conn.network.update_router(step.target.id, routes=[])
        else:
            super().apply(conn, step)


class Port(_NeutronKind):
    name = 'network.port'
    sdk_delete = 'delete_port'

    def list(self, conn, project_id):
        return owned((self.ref(
            p, device_owner=p.device_owner or None,
            device_id=p.device_id or None, network_id=p.network_id,
            subnet_ids=sorted({ip['subnet_id'] for ip in p.fixed_ips or []}),
            security_group_ids=sorted(p.security_group_ids or []))
            for p in conn.network.ports(project_id=project_id)),
            project_id)

    def primary_step(self, ref):
        if ref.attrs.get('device_owner') in OWNED_PORT_OWNERS:
            return None
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        if (ref.attrs.get('device_owner') or '').startswith('compute:'):
            # nova deletes the ports it created, and detaches the others
            yield Edge(delete_of(Server.name, ref.attrs.get('device_id')),
                       me)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            yield Edge(me, delete_of(Subnet.name, subnet_id))
        yield Edge(me, delete_of(Network.name, ref.attrs.get('network_id')))
        for sg_id in ref.attrs.get('security_group_ids', []):
            yield Edge(me, delete_of(SecurityGroup.name, sg_id))


class Trunk(_NeutronKind):
    name = 'network.trunk'
    sdk_delete = 'delete_trunk'

    def list(self, conn, project_id):
        return owned((self.ref(
            t, port_id=t.port_id,
            sub_port_ids=sorted(s['port_id'] for s in t.sub_ports or []))
            for t in conn.network.trunks(project_id=project_id)),
            project_id)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        parent = inventory.get(Port.name, ref.attrs.get('port_id'))
        if parent is not None and parent.attrs.get('device_id'):
            # a trunk whose parent port is bound to a server is in use
            yield Edge(delete_of(Server.name, parent.attrs['device_id']), me)
        for port_id in [ref.attrs.get('port_id'),
                        *ref.attrs.get('sub_port_ids', [])]:
            yield Edge(me, delete_of(Port.name, port_id))


class Subnet(_NeutronKind):
    name = 'network.subnet'
    sdk_delete = 'delete_subnet'

    def list(self, conn, project_id):
        return owned((self.ref(s, network_id=s.network_id)
                      for s in conn.network.subnets(project_id=project_id)),
                     project_id)

    def relations(self, ref, inventory):
        yield Edge(delete_of(self.name, ref.id),
                   delete_of(Network.name, ref.attrs.get('network_id')))


class Network(_NeutronKind):
    name = 'network.network'
    sdk_delete = 'delete_network'

    def list(self, conn, project_id):
        return owned((self.ref(n, shared=bool(n.is_shared) or None,
                               external=bool(n.is_router_external) or None)
                      for n in conn.network.networks(project_id=project_id)),
                     project_id)


class SecurityGroup(_NeutronKind):
    name = 'network.security_group'
    sdk_delete = 'delete_security_group'

    def list(self, conn, project_id):
        return owned((self.ref(
            g, remote_rules=sorted(
                [r['id'], r['remote_group_id']]
                for r in g.security_group_rules or []
                if r.get('remote_group_id')
                and r['remote_group_id'] != g.id))
            for g in conn.network.security_groups(project_id=project_id)),
            project_id)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for rule_id, remote_id in ref.attrs.get('remote_rules', []):
            # A rule of this group names another group as its remote: this
            # group goes first, or, to cut a cycle of groups that name each
            # other, the rule is deleted.
            yield Edge(me, delete_of(self.name, remote_id),
                       breaker=Step('delete_security_group_rule', ref,
                                    {'rule_id': rule_id}))
        if ref.name == 'default':
            for other in inventory.where(self.name):
                if other.name != 'default' and (
                        other.project_id == ref.project_id):
                    yield Edge(delete_of(self.name, other.id), me)

    def apply(self, conn, step):
        if step.action != 'delete_security_group_rule':
            return super().apply(conn, step)
        conn.network.delete_security_group_rule(step.params['rule_id'],
                                                ignore_missing=True)


class RBACPolicy(_NeutronKind):
    name = 'network.rbac_policy'
    sdk_delete = 'delete_rbac_policy'
    _object_kinds = {'network': Network.name,
                     'security_group': SecurityGroup.name}

    def list(self, conn, project_id):
        return owned((self.ref(p, object_type=p.object_type,
                               object_id=p.object_id,
                               target=p.target_project_id)
                      for p in conn.network.rbac_policies(
                          project_id=project_id)), project_id)

    def relations(self, ref, inventory):
        kind = self._object_kinds.get(ref.attrs.get('object_type'))
        if kind:
            yield Edge(delete_of(self.name, ref.id),
                       delete_of(kind, ref.attrs.get('object_id')))


KINDS = (FloatingIP, Router, Port, Trunk, Subnet, Network, SecurityGroup,
         RBACPolicy)
