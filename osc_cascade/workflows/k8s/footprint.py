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
* a volume attached to a server that is not the cluster's, or with a
  snapshot that is not the cluster's (Cinder refuses its delete);
* a floating IP on a port that is neither the cluster's nor the VIP of
  one of its load balancers;
* a trunk that is not wholly the cluster's (CAPO's description, its
  parent port and every subport the cluster's), with its parent port
  (Neutron refuses that port's delete while the trunk is), and what such
  a kept port is on;
* what the cascade's discovery (which checks each owner) did not find
  the project's, though a list showed it.

The cluster's servers are those whose every port is the cluster's (CAPO
marks ports, not servers), and the boot volume CAPO made for one of them
(``<server>-root``, described ``Root volume for <server>``, attached to it
alone) is the cluster's too. A load balancer's listeners, pools and members
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
from osc_cascade.workflows.k8s.keeps import Keeps, member_nodes

SHARE = 'shared_file_system.share'

#: the kinds a cluster's controllers make, in the order they are shown
KINDS = (
    LoadBalancer.name,
    net.FloatingIP.name,
    Server.name,
    net.Port.name,
    net.Trunk.name,
    net.Router.name,
    net.Subnet.name,
    net.Network.name,
    net.SecurityGroup.name,
    Volume.name,
    Snapshot.name,
    Backup.name,
    SHARE,
)

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
        return [ref for ref, _convention in self.mine.values()]


class Raw:
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
                (net.Trunk.name, '/trunks', 'trunks'),
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
    if kind in (net.Port.name, net.Trunk.name):
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
    discovery = Discovery(
        conn,
        {k: kinds[k] for k in KINDS if k in kinds},
        parallel=parallel,
        retry=retry,
        clock=clock,
    )
    # the catalog's word, as the discovery reads it
    usable = {k.name for k in discovery.available_kinds()[0]}
    refs, notes = discovery.run([project_id])
    by_id = {(r.kind, r.id): r for r in refs}
    raw = Raw(conn, project_id, usable, call)
    fp = Footprint(idents[0], project_id, {}, {}, {}, [], [], list(notes))
    fp.identities = idents

    for kind in KINDS:
        for item in raw.of(kind).values():
            m = _match_any(idents, kind, item)
            ref = by_id.get((kind, item['id']))
            if ref is None:
                # the cascade's discovery, which checks each owner, did
                # not find it the project's: never deleted on one list's
                # word
                ref = ResourceRef(
                    kind, item['id'], item.get('name') or '', project_id
                )
                if m.mine or m.doubt:
                    fp.kept[ref.key] = (
                        ref,
                        'listed in the project, but the discovery of its '
                        'resources did not find it; run again',
                    )
                continue
            if m.mine:
                fp.mine[ref.key] = (ref, m.convention)
            elif m.doubt:
                fp.kept[ref.key] = (ref, m.why)
            elif m.why:
                fp.strangers[ref.key] = (ref, m.why)
    _servers(fp, raw, by_id)
    Keeps(conn, fp, raw, call).run()
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
    # the nodes its load balancers send to, which CAPO's marks miss
    known = {r.id for r in fp.active}
    fp.active += [
        r for r in member_nodes(conn, fp, raw, call) if r.id not in known
    ]
    return fp


def _servers(
    fp: Footprint,
    raw: Raw,
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
    _root_volumes(fp, raw, by_id)


def _root_volumes(
    fp: Footprint,
    raw: Raw,
    by_id: Mapping[tuple[str, str], ResourceRef],
) -> None:
    """The boot volume CAPO made for a server of the cluster (``rootVolume``:
    ``<machine>-root``, described ``Root volume for <machine>``, the server
    being ``<machine>``), attached to that server alone. One that Nova made
    from the block device mapping goes with its server
    (``delete_on_termination``); a ``-root`` volume whose server is gone
    names no server of the cluster, and stays."""
    servers = {
        r.id: r.name for r, _c in fp.mine.values() if r.kind == Server.name
    }
    for item in raw.of(Volume.name).values():
        ref = by_id.get((Volume.name, item['id']))
        attached = {a.get('server_id') for a in item.get('attachments') or []}
        if ref is None or ref.key in fp.mine or len(attached) != 1:
            continue
        machine = servers.get(attached.pop())
        if machine and (item.get('name'), item.get('description')) == (
            f'{machine}-root',
            f'Root volume for {machine}',
        ):
            fp.mine[ref.key] = (ref, 'CAPO root volume of its server')


def _keys(found: Mapping[str, tuple[ResourceRef, str]]) -> set[str]:
    return {f'{r.kind}:{r.id}' for r, _c in found.values()}


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
