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

"""A Kubernetes cluster's footprint in one project: what its controllers
made there (``conventions``), what of it is kept and why, and the plan
that deletes the rest on the cascade's engine.

Everything is listed in the cluster's project alone (one list per kind),
so another project's resource is never the cluster's, whatever its name.
What the cluster made but something outside it still uses is kept, with
the reason, and so is what serves a kept resource:

* a network or subnet with a port that is not the cluster's (a server, a
  port, a router interface, a load balancer of someone else), in any
  project; the cluster's router with an interface on a subnet that is
  not the cluster's, or is kept; a subnet with an interface of a kept
  router, and the network of a kept subnet;
* a security group that a port outside the footprint uses, or that a
  rule of another group of the project names as its remote group;
* a volume attached to a server that is not the cluster's;
* a floating IP on a port that is neither the cluster's nor the VIP of
  one of its load balancers.

The cluster's servers are those whose every port is the cluster's (CAPO
marks ports, not servers). A load balancer's listeners, pools and members
go with it (Octavia's cascade delete): members on another project's
subnet are the load balancer's, and that subnet is not touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import dataclasses
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine import resource
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds.block_storage import Backup, Snapshot, Volume
from osc_cascade.kinds.compute import Server
from osc_cascade.kinds.load_balancer import LoadBalancer
from osc_cascade.kinds.network import core as net
from osc_cascade.kinds.network.common import neutron_items, neutron_project
from osc_cascade.kinds.shared_file_system import listing as manila_listing
from osc_cascade.workflows.k8s import conventions as conv
from osc_cascade.workflows.k8s.conventions import Identity, Match

SHARE = 'shared_file_system.share'

#: the kinds a cluster's controllers make, in the order they are shown
KINDS = (
    LoadBalancer.name,
    net.FloatingIP.name,
    Server.name,
    net.Port.name,
    net.Router.name,
    net.Subnet.name,
    net.Network.name,
    net.SecurityGroup.name,
    Volume.name,
    Snapshot.name,
    Backup.name,
    SHARE,
)

#: ports on a network that are its own or go with it
_NETWORK_OWNED = frozenset({'network:dhcp', 'network:distributed'})
_OCTAVIA_OWNERS = frozenset({'Octavia', 'neutron:LOADBALANCERV2'})

#: what the command needs (admin: a project's ports seen by another's)
NEEDS = 'cluster leftovers needs the admin role'


@dataclasses.dataclass
class Footprint:
    """What a cluster's controllers made in ``project_id``."""

    identity: Identity
    project_id: str
    #: the cluster's, by key: the resource and the convention it matches
    mine: dict[str, tuple[ResourceRef, str]]
    #: the cluster's (or looking so) but kept, by key, with the reason
    kept: dict[str, tuple[ResourceRef, str]]
    #: near misses: not the cluster's, with why (shown, never deleted)
    strangers: dict[str, tuple[ResourceRef, str]]
    #: the ports the plan needs beside the cluster's (its routers'
    #: interfaces, removed through the router)
    extra: list[ResourceRef]
    #: the cluster's servers that are ACTIVE: a cluster that may live
    active: list[ResourceRef]
    notes: list[str] = dataclasses.field(default_factory=list)
    #: every identity looked for (the first is ``identity``)
    identities: list[Identity] = dataclasses.field(default_factory=list)

    def label(self) -> str:
        return ' or '.join(
            i.label() for i in self.identities or [self.identity]
        )

    def deletable(self) -> list[ResourceRef]:
        return [ref for key, (ref, _c) in self.mine.items()]

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(kind, id, name, convention or reason) of each resource."""
        out = [
            (r.kind, r.id, r.name, f'mine: {c}') for r, c in self.mine.values()
        ]
        out += [
            (r.kind, r.id, r.name, f'kept: {why}')
            for r, why in self.kept.values()
        ]
        return out


class _Raw:
    """The raw items of each kind in the project, as the services list
    them (the descriptions, tags and metadata the refs do not carry)."""

    def __init__(self, conn: Any, project_id: str, usable: set[str], call):
        self.items: dict[str, dict[str, dict[str, Any]]] = {}

        def put(kind: str, items: Iterable[dict[str, Any]]) -> None:
            self.items[kind] = {i['id']: i for i in items}

        if LoadBalancer.name in usable:
            put(
                LoadBalancer.name,
                call(
                    'listing load balancers',
                    lambda: list(
                        LoadBalancer.listed(conn.load_balancer, project_id)
                    ),
                ),
            )
        if net.Port.name in usable:
            for kind, path, key in (
                (net.FloatingIP.name, '/floatingips', 'floatingips'),
                (net.Router.name, '/routers', 'routers'),
                (net.Port.name, '/ports', 'ports'),
                (net.Subnet.name, '/subnets', 'subnets'),
                (net.Network.name, '/networks', 'networks'),
            ):
                put(
                    kind,
                    call(
                        f'listing {key}',
                        lambda p=path, k=key: list(
                            neutron_items(conn, p, k, project_id)
                        ),
                    ),
                )
            # unfiltered: Neutron makes a project's default group when a
            # list is filtered by a project that has none
            put(
                net.SecurityGroup.name,
                [
                    g
                    for g in call(
                        'listing security groups',
                        lambda: list(
                            neutron_items(
                                conn, '/security-groups', 'security_groups'
                            )
                        ),
                    )
                    if neutron_project(g) == project_id
                ],
            )
        kinds = kinds_mod.build()
        for kind in (Volume.name, Snapshot.name, Backup.name):
            if kind in usable:
                put(
                    kind,
                    call(
                        f'listing {kind}',
                        lambda k=kind: list(
                            kinds[k].listed(conn, project_id)  # type: ignore[attr-defined]
                        ),
                    ),
                )
        if SHARE in usable:
            put(
                SHARE,
                call(
                    'listing shares',
                    lambda: manila_listing(conn, '/shares/detail', project_id),
                ),
            )

    def of(self, kind: str) -> dict[str, dict[str, Any]]:
        return self.items.get(kind, {})


def _match(ident: Identity, kind: str, item: Mapping[str, Any]) -> Match:
    if kind == LoadBalancer.name:
        return conv.match_load_balancer(ident, item)
    if kind == net.FloatingIP.name:
        return conv.match_floating_ip(ident, item)
    if kind in (net.Network.name, net.Subnet.name, net.Router.name):
        return conv.match_network_item(ident, kind.rpartition('.')[2], item)
    if kind == net.Port.name:
        return conv.match_port(ident, item)
    if kind == net.SecurityGroup.name:
        return conv.match_security_group(ident, item)
    if kind in (Volume.name, Snapshot.name, Backup.name):
        return conv.match_metadata(conv.CINDER_CSI_KEY, ident.csi, item)
    if kind == SHARE:
        return conv.match_metadata(conv.MANILA_CSI_KEY, ident.csi, item)
    return conv.NO


def _match_any(
    idents: Sequence[Identity], kind: str, item: Mapping[str, Any]
) -> Match:
    """The match of the cluster known by several identities (a Magnum
    cluster, whose driver may be either): a doubt in one is a doubt,
    else the cluster's in one is the cluster's."""
    found = [_match(i, kind, item) for i in idents]
    for m in found:
        if m.doubt:
            return m
    for m in found:
        if m.mine:
            return m
    return next((m for m in found if m.why), conv.NO)


def find(
    conn: Any,
    ident: Identity | Sequence[Identity],
    project_id: str,
    *,
    parallel: int = 8,
    retry: RetryPolicy,
    clock: Clock,
) -> Footprint:
    """The cluster's footprint in the project (changes nothing); a
    cluster known by several identities (``_match_any``) is their
    union."""
    idents = [ident] if isinstance(ident, Identity) else list(ident)

    def call(what: str, fn: Callable[[], Any]) -> Any:
        return checked(what, fn, retry=retry, clock=clock, needs=NEEDS)

    kinds = kinds_mod.build()
    usable = {
        k
        for k in KINDS
        if k in kinds and conn.has_service(kinds[k].service_type)
    }
    refs, notes = Discovery(
        conn,
        {k: kinds[k] for k in usable},
        parallel=parallel,
        retry=retry,
        clock=clock,
    ).run([project_id])
    by_id = {(r.kind, r.id): r for r in refs}
    raw = _Raw(conn, project_id, usable, call)
    fp = Footprint(idents[0], project_id, {}, {}, {}, [], [], list(notes))
    fp.identities = idents

    def ref_of(kind: str, item: Mapping[str, Any]) -> ResourceRef:
        return by_id.get((kind, item['id'])) or ResourceRef(
            kind, item['id'], item.get('name') or '', project_id
        )

    for kind in KINDS:
        for item in raw.of(kind).values():
            m = _match_any(idents, kind, item)
            ref = ref_of(kind, item)
            if m.mine:
                fp.mine[ref.key] = (ref, m.convention)
            elif m.doubt:
                fp.kept[ref.key] = (ref, m.why)
            elif m.why:
                fp.strangers[ref.key] = (ref, m.why)
    _servers(fp, raw, by_id)
    _Keeps(conn, fp, raw, call).run()
    routers = {r.id for r, _c in fp.mine.values() if r.kind == net.Router.name}
    fp.extra = [
        r
        for r in refs
        if r.kind == net.Port.name
        and r.attrs.get('device_id') in routers
        and r.attrs.get('device_owner') in net.ROUTER_INTERFACE_OWNERS
    ]
    fp.active = [
        r
        for r, _c in fp.mine.values()
        if r.kind == Server.name and r.attrs.get('status') == 'ACTIVE'
    ]
    return fp


def _servers(
    fp: Footprint,
    raw: _Raw,
    by_id: Mapping[tuple[str, str], ResourceRef],
) -> None:
    """The cluster's servers: those whose every port is the cluster's."""
    ports_of: dict[str, list[str]] = {}
    for port in raw.of(net.Port.name).values():
        if (port.get('device_owner') or '').startswith('compute:'):
            ports_of.setdefault(port['device_id'], []).append(port['id'])
    for server_id, ports in ports_of.items():
        ref = by_id.get((Server.name, server_id))
        if ref is None:
            continue
        if all(f'{net.Port.name}:{p}' in _keys(fp.mine) for p in ports):
            fp.mine[ref.key] = (ref, 'its ports are the cluster\'s (CAPO)')


def _keys(found: Mapping[str, tuple[ResourceRef, str]]) -> set[str]:
    return {f'{r.kind}:{r.id}' for r, _c in found.values()}


class _Keeps:
    """Keeps what something outside the footprint uses, and what serves
    a kept resource, to a fixpoint."""

    def __init__(self, conn: Any, fp: Footprint, raw: _Raw, call) -> None:
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
        self._volumes()
        self._floating_ips(vips)
        self._groups()
        changed = True
        while changed:
            changed = self._networks(on_network, vips, lb_networks)

    def _outsider(self, port, vips, lb_networks) -> bool:
        owner = port.get('device_owner') or ''
        device = port.get('device_id') or ''
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


def plan(fp: Footprint, kinds: Mapping[str, Any]) -> Plan:
    """The deletion of the footprint in dependency order, with a keep
    step for what is kept and for each near miss (neither is deleted)."""
    made = build_plan(
        Inventory([*fp.deletable(), *fp.extra]),
        kinds,
        [{'id': fp.project_id, 'name': ''}],
    )
    for ref, why in [*fp.kept.values(), *fp.strangers.values()]:
        step = resource.keep(ref, why, blocking=False)
        made.steps[step.id] = step
    return made
