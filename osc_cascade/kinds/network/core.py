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

"""Core Neutron's kinds, in the order Neutron's deletes need.

Floating IPs, routers, ports, trunks, subnets, networks and security
groups (their RBAC policies: ``rbac``).

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

from openstack import exceptions as sdk_exc
from openstack.network.v2 import floating_ip as sdk_floating_ip
from openstack.network.v2 import network as sdk_network
from openstack.network.v2 import port as sdk_port
from openstack.network.v2 import router as sdk_router
from openstack.network.v2 import security_group as sdk_security_group
from openstack.network.v2 import subnet as sdk_subnet

from osc_cascade.engine import resource
from osc_cascade.engine.errors import Kept
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import Step
from osc_cascade.kinds.base import GONE, delete_of, owned
from osc_cascade.kinds.compute import Server, server_owners
from osc_cascade.kinds.network.common import (
    _NeutronKind,
    keep_if_used,
    may_have_security_groups,
    neutron_items,
    neutron_project,
    others,
)
from osc_cascade.kinds.network.remote_group import foreign_rules_now, why_kept
from osc_cascade.kinds.network.usage import (
    interface_serves_others_now,
    is_nic,
    network_users,
    nic_since_plan,
)
from osc_cascade.kinds.paging import item_ref
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


def nic_of(port, servers) -> list[str] | None:
    """``[server, project]`` of a NIC on a server that is not the port's
    project's (project '' where a scoped token cannot tell), else None:
    the project's own server, a gone one (a stale binding), no NIC."""
    if not is_nic(port):
        return None
    owner = servers.get(port['device_id'], '')
    if owner is GONE or owner == neutron_project(port):
        return None
    return [port['device_id'], owner]


def foreign(owner, project_id):
    """``owner`` if it is another project than ``project_id``, else None
    (the same project, or nothing: gone)."""
    return owner if owner and owner != project_id else None


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
    sdk_resource = sdk_floating_ip.FloatingIP
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
    sdk_resource = sdk_router.Router
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
        # what serves a subnet or network that stays (another project's
        # traffic is on it) is not undone: the interface on it, and so the
        # router, its routes and its gateway (``Edge.serves``)
        if ref.attrs.get('has_routes'):
            # a static route through an interface's subnet blocks
            # removing that interface
            yield Edge(clear_routes, me, serves=True)
        for port, step in router_interface_steps(ref, inventory):
            yield Edge(step, me)
            if ref.attrs.get('has_routes'):
                yield Edge(clear_routes, step)
            for subnet_id in port.attrs.get('subnet_ids', []):
                yield Edge(
                    step, delete_of(Subnet.name, subnet_id), serves=True
                )
            yield Edge(
                step,
                delete_of(Network.name, port.attrs.get('network_id', '')),
                serves=True,
            )
        gateway = ref.attrs.get('gateway_network_id')
        if gateway:
            # The gateway is cleared before the router goes, and before
            # its network where that is the project's own (another
            # project's external network is not in the plan)
            yield Edge(clear_gateway_step(ref), me, serves=True)
            yield Edge(
                clear_gateway_step(ref),
                delete_of(Network.name, gateway),
                serves=True,
            )

    def apply(self, conn, step):
        if step.action == 'remove_router_interface':
            why = interface_serves_others_now(conn, step.params['port_id'])
            if why:
                self.facts.keep(step.target, why)
                raise Kept(why)
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
    sdk_resource = sdk_port.Port
    heat_types = ('OS::Neutron::Port',)
    sdk_delete = 'delete_port'
    # an admin may plug it into another project's server since the plan
    reread = True

    def use_changed(self, conn, found, ref):
        return nic_since_plan(conn, ref, found, scoped=self.scoped)

    def list(self, conn, project_id):
        ports = list(neutron_items(conn, '/ports', 'ports', project_id))
        # whose server each NIC is on: one of another project is its
        # guest's network, kept (cost: compute.server_owners)
        servers = server_owners(
            conn,
            project_id,
            {p['device_id'] for p in ports if is_nic(p)},
            scoped=self.scoped,
        )
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
                    nic_of=nic_of(p, servers),
                )
                for p in ports
            ),
            project_id,
        )

    def primary_step(self, ref):
        if ref.attrs.get('device_owner') in OWNED_PORT_OWNERS:
            return None
        nic = ref.attrs.get('nic_of')
        if nic:
            server_id, other = nic
            return resource.keep(
                ref,
                f'NIC of server {server_id} of project '
                f'{other or "(unknown)"}: deleting it would take that '
                f'guest off its network',
            )
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
    sdk_resource = sdk_subnet.Subnet
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
            serves=True,
        )


@register
class Network(_NeutronKind):
    name = 'network.network'
    sdk_get = 'network.get_network'
    sdk_resource = sdk_network.Network
    heat_types = ('OS::Neutron::Net',)
    sdk_delete = 'delete_network'

    def list(self, conn, project_id):
        networks = list(
            neutron_items(conn, '/networks', 'networks', project_id)
        )
        # shared, RBAC-shared, external, or an admin's port on a private
        # one: whatever of another project is on it keeps it, and what
        # serves it (cost: network_users)
        users = network_users(conn, project_id, networks)
        return owned(
            (
                item_ref(
                    self.name,
                    n,
                    owner=neutron_project(n),
                    shared=bool(n.get('shared')) or None,
                    external=bool(n.get('router:external')) or None,
                    used_by=users.get(n['id']),
                )
                for n in networks
            ),
            project_id,
        )

    def primary_step(self, ref):
        # never with --delete-shared: Neutron refuses it while another
        # project's port is on it, and only after the drain
        kept = keep_if_used(
            ref,
            ref.attrs.get('used_by'),
            '{user} of project {project} is on it{more}: '
            "deleting it would cut that project's traffic",
        )
        return kept or super().primary_step(ref)


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
    sdk_resource = sdk_security_group.SecurityGroup
    heat_types = ('OS::Neutron::SecurityGroup',)
    sdk_delete = 'delete_security_group'
    # another project's rule may name it as remote group since the plan
    reread = True
    lists_every_project = True

    def recheck(self, conn, ref):
        # Not the group (its owner cannot change): the rules naming it. A
        # scoped token sees no other project's rule, and its list could
        # make its project's default group: not asked.
        why = '' if self.scoped else why_kept(foreign_rules_now(conn, ref))
        if why:
            self.facts.keep(ref, why)
            raise Kept(why)

    def list(self, conn, project_id):
        # No project filter: Neutron answers a list filtered by project
        # by first creating that project's ``default`` group when it has
        # none, so every verification round would find a new one and the
        # project could never be deleted. The owner is checked here. A
        # project's own token makes its project's: asked first.
        if self.scoped and not may_have_security_groups(conn, project_id):
            return []
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
