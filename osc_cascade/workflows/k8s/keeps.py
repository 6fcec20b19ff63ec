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

"""What the footprint keeps: what the cluster made but something outside
it uses, and what serves a kept resource, to a fixpoint
(``footprint``'s docstring lists the rules); and the cluster's nodes as
its load balancers' members show them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openstack import exceptions as sdk_exc

from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.block_storage import Snapshot, Volume
from osc_cascade.kinds.compute import Server
from osc_cascade.kinds.load_balancer import LoadBalancer
from osc_cascade.kinds.network import core as net
from osc_cascade.kinds.network.common import neutron_items, neutron_project
from osc_cascade.kinds.paging import pages

if TYPE_CHECKING:
    from osc_cascade.workflows.k8s.footprint import Footprint, Raw

#: ports on a network that are its own or go with it
_NETWORK_OWNED = frozenset({'network:dhcp', 'network:distributed'})
_OCTAVIA_OWNERS = frozenset({'Octavia', 'neutron:LOADBALANCERV2'})


class Keeps:
    """Keeps what something outside the footprint uses, and what serves
    a kept resource, to a fixpoint."""

    def __init__(self, conn: Any, fp: Footprint, raw: Raw, call) -> None:
        self.conn, self.fp, self.raw, self.call = conn, fp, raw, call

    def ids(self, kind: str) -> set[str]:
        return {r.id for r, _c in self.fp.mine.values() if r.kind == kind}

    def keep(self, kind: str, id_: str, why: str) -> bool:
        for key, (ref, _c) in list(self.fp.mine.items()):
            if ref.kind == kind and ref.id == id_:
                del self.fp.mine[key]
                self.fp.kept[key] = (ref, why)
                return True
        return False

    def run(self) -> None:
        lbs = {
            i: self.raw.of(LoadBalancer.name)[i]
            for i in self.ids(LoadBalancer.name)
        }
        vips = {lb.get('vip_port_id') for lb in lbs.values()}
        on_network = {
            n: self.call(
                f'listing the ports of network {n}',
                lambda n=n: list(
                    neutron_items(self.conn, '/ports', 'ports', network_id=n)
                ),
            )
            for n in self.ids(net.Network.name)
        }
        # the networks where every load balancer's VIP is the cluster's
        lb_networks = {
            n
            for n, ports in on_network.items()
            if all(
                p['id'] in vips
                for p in ports
                if p.get('device_owner') in _OCTAVIA_OWNERS
                and not (p.get('name') or '').startswith('octavia-lb-vrrp-')
            )
        }
        # what keeps a port first: the rules after it look at the ports
        self._trunks()
        self._volumes()
        self._floating_ips(vips)
        self._groups()
        changed = True
        while changed:
            changed = self._networks(on_network, vips, lb_networks)

    def _outsider(self, port, vips, lb_networks) -> bool:
        owner = port.get('device_owner') or ''
        device = port.get('device_id') or ''
        if port['id'] in {
            r.id for r, _w in self.fp.kept.values() if r.kind == net.Port.name
        }:
            return True  # the cluster's, but it stays
        if port['id'] in self.ids(net.Port.name) or owner in _NETWORK_OWNED:
            return False
        if owner in net.ROUTER_INTERFACE_OWNERS or owner == (
            'network:router_gateway'
        ):
            return device not in self.ids(net.Router.name)
        if owner in _OCTAVIA_OWNERS:
            # a VIP of the cluster's load balancers, or an amphora's port
            # on a network where every VIP is theirs
            return port['id'] not in vips and not (
                (port.get('name') or '').startswith('octavia-lb-vrrp-')
                and port.get('network_id') in lb_networks
            )
        if owner.startswith('compute:'):
            return device not in self.ids(Server.name)
        return True

    def _networks(self, on_network, vips, lb_networks) -> bool:
        changed = False
        kept_subnets = {
            r.id
            for r, _w in self.fp.kept.values()
            if r.kind == net.Subnet.name
        }
        subnets = self.raw.of(net.Subnet.name)
        for network_id, ports in on_network.items():
            if network_id not in self.ids(net.Network.name):
                continue
            for port in ports:
                if self._outsider(port, vips, lb_networks):
                    what = port.get('device_owner') or 'a port'
                    changed |= self.keep(
                        net.Network.name,
                        network_id,
                        f'port {port["id"]} ({what}) of project '
                        f'{neutron_project(port)} is on it and is not the '
                        f'cluster\'s',
                    )
                    break
            else:
                if any(
                    s.get('network_id') == network_id
                    for s in subnets.values()
                    if s['id'] in kept_subnets
                ):
                    changed |= self.keep(
                        net.Network.name,
                        network_id,
                        'a subnet of it is kept',
                    )
        kept_networks = {
            r.id
            for r, _w in self.fp.kept.values()
            if r.kind == net.Network.name
        }
        for subnet_id in self.ids(net.Subnet.name):
            if subnets[subnet_id].get('network_id') in kept_networks:
                changed |= self.keep(
                    net.Subnet.name, subnet_id, 'its network is kept'
                )
        mine_subnets = self.ids(net.Subnet.name)
        routers = self.ids(net.Router.name)
        for port in self.raw.of(net.Port.name).values():
            if port.get('device_owner') not in net.ROUTER_INTERFACE_OWNERS:
                continue
            router = port.get('device_id')
            for ip in port.get('fixed_ips') or []:
                subnet = ip.get('subnet_id')
                if router in routers and subnet not in mine_subnets:
                    changed |= self.keep(
                        net.Router.name,
                        router,
                        f'it has an interface on subnet {subnet}, which is '
                        f'not the cluster\'s or is kept',
                    )
                elif router not in routers and subnet in mine_subnets:
                    changed |= self.keep(
                        net.Subnet.name,
                        subnet,
                        f'router {router}, not the cluster\'s or kept, has '
                        f'an interface on it',
                    )
        return changed

    def _volumes(self) -> None:
        volumes = self.ids(Volume.name)
        snapshots = self.ids(Snapshot.name)
        for snap in self.raw.of(Snapshot.name).values():
            if (
                snap.get('volume_id') in volumes
                and snap['id'] not in snapshots
            ):
                # Cinder refuses to delete a volume that has snapshots
                self.keep(
                    Volume.name,
                    snap['volume_id'],
                    f'snapshot {snap["id"]}, not the cluster\'s, is of it',
                )
        servers = self.ids(Server.name)
        for volume_id in self.ids(Volume.name):
            item = self.raw.of(Volume.name)[volume_id]
            for att in item.get('attachments') or []:
                if att.get('server_id') not in servers:
                    self.keep(
                        Volume.name,
                        volume_id,
                        f'attached to server {att.get("server_id")}, which '
                        f'is not the cluster\'s',
                    )
                    break

    def _floating_ips(self, vips) -> None:
        ports = self.ids(net.Port.name)
        for fip_id in self.ids(net.FloatingIP.name):
            port = self.raw.of(net.FloatingIP.name)[fip_id].get('port_id')
            if port and port not in ports and port not in vips:
                self.keep(
                    net.FloatingIP.name,
                    fip_id,
                    f'associated with port {port}, which is not the '
                    f'cluster\'s',
                )

    def _trunks(self) -> None:
        """CAPO's trunk (its description, on the parent port it made) goes
        when every port of it is the cluster's; else it stays, and its
        parent port with it (Neutron refuses that port's delete)."""
        ports = self.ids(net.Port.name)
        for trunk_id in self.ids(net.Trunk.name):
            trunk = self.raw.of(net.Trunk.name)[trunk_id]
            outside = [
                p
                for p in [
                    trunk.get('port_id'),
                    *(s.get('port_id') for s in trunk.get('sub_ports') or []),
                ]
                if p not in ports
            ]
            if outside:
                self.keep(
                    net.Trunk.name,
                    trunk_id,
                    f'port {outside[0]} of it is not the cluster\'s',
                )
        trunks = self.ids(net.Trunk.name)
        for port_id in ports:
            trunk = self.raw.of(net.Port.name)[port_id].get('trunk_details')
            if trunk and trunk.get('trunk_id') not in trunks:
                self.keep(
                    net.Port.name,
                    port_id,
                    f'parent port of trunk {trunk.get("trunk_id")}, which '
                    f'is not wholly the cluster\'s: delete the trunk first',
                )

    def _groups(self) -> None:
        groups = self.ids(net.SecurityGroup.name)
        mine_ports = self.ids(net.Port.name)
        for port in self.raw.of(net.Port.name).values():
            if port['id'] in mine_ports:
                continue
            for sg in set(port.get('security_groups') or []) & groups:
                self.keep(
                    net.SecurityGroup.name,
                    sg,
                    f'port {port["id"]}, not the cluster\'s, uses it',
                )
        for group in self.raw.of(net.SecurityGroup.name).values():
            if group['id'] in groups:
                continue
            for rule in group.get('security_group_rules') or []:
                if rule.get('remote_group_id') in groups:
                    self.keep(
                        net.SecurityGroup.name,
                        rule['remote_group_id'],
                        f'rule {rule["id"]} of group {group["id"]}, not '
                        f'the cluster\'s, names it as remote group',
                    )


def member_nodes(
    conn: Any, fp: Footprint, raw: Raw, call
) -> list[ResourceRef]:
    """The ACTIVE servers behind the cluster's load balancers: the ports
    whose address a member of their pools is, on the member's subnet, in
    any project. The cloud controller manager makes the cluster's nodes
    the members: one that is ACTIVE is a node that may still run."""
    members: dict[str, set[str]] = {}
    for lb_id in {
        r.id for r, _c in fp.mine.values() if r.kind == LoadBalancer.name
    }:
        for pool in raw.of(LoadBalancer.name)[lb_id].get('pools') or []:
            for m in call(
                f'listing the members of pool {pool["id"]}',
                lambda p=pool['id']: list(
                    pages(
                        conn.load_balancer,
                        f'/lbaas/pools/{p}/members',
                        'members',
                    )
                ),
            ):
                if m.get('subnet_id') and m.get('address'):
                    members.setdefault(m['subnet_id'], set()).add(m['address'])
    servers: set[str] = set()
    for subnet_id, addresses in sorted(members.items()):
        try:
            network = call(
                f'looking up subnet {subnet_id}',
                lambda s=subnet_id: conn.network.get_subnet(s).network_id,
            )
        except sdk_exc.NotFoundException:
            continue
        for port in call(
            f'listing the ports of network {network}',
            lambda n=network: list(
                neutron_items(conn, '/ports', 'ports', network_id=n)
            ),
        ):
            if not (port.get('device_owner') or '').startswith('compute:'):
                continue
            if any(
                ip.get('subnet_id') == subnet_id
                and ip.get('ip_address') in addresses
                for ip in port.get('fixed_ips') or []
            ):
                servers.add(port['device_id'])
    out = []
    for server_id in sorted(servers):
        try:
            server = call(
                f'looking up server {server_id}',
                lambda i=server_id: conn.compute.get_server(i),
            )
        except sdk_exc.NotFoundException:
            continue
        if server.status == 'ACTIVE':
            out.append(
                ResourceRef(
                    Server.name,
                    server.id,
                    server.name or '',
                    server.project_id or '',
                )
            )
    return out
