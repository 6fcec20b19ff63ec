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

"""What an abandoned stack left behind: which of its resources still exist
(``remaining``), and their deletion in dependency order with the cascade's
kinds, planner and executor (``delete``; ``cluster force-delete
--delete-leftovers``).

Both find the resources the way the cascade does, one list per kind and
the stack's project (``engine.discovery``), and match them by Heat's
physical id; one that list lacks is asked for by id (an admin GET, in each
region of its service): it is gone only when every GET answers 404, and
one found in another project or region is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.executor import Event
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import (
    Clock,
    RetryPolicy,
    checked,
    wait_until,
)
from osc_cascade.kinds import orchestration
from osc_cascade.kinds.network import core as network
from osc_cascade.workflows.clusters import policies
from osc_cascade.workflows.clusters.records import (
    ROUTER_INTERFACE,
    StackResource,
)
from osc_cascade.workflows.force_delete import containers
from osc_cascade.workflows.force_delete import keeps as keeps_mod
from osc_cascade.workflows.stopping import PausingClock, Stop, run_plan

# What became of a leftover, when it is not a failure.
DELETED = 'deleted'
GONE = 'already gone'


@dataclasses.dataclass
class Found:
    """What still exists of a stack's resources."""

    kinds: dict[str, Any]
    #: the stack's resources found, by kind and Heat's physical id, as the
    #: kinds list them (so that they carry what the planner needs)
    mine: dict[tuple[str, str], ResourceRef]
    #: every port listed (when the stack has routers or interfaces)
    ports: list[ResourceRef]
    #: the kinds whose service is in the catalog
    usable: set[str]
    #: the resources found where they are not the stack's (another project
    #: or region), by kind and physical id: why they are kept
    elsewhere: dict[tuple[str, str], str] = dataclasses.field(
        default_factory=dict
    )
    #: the stack's routers that hold an interface that is not the stack's:
    #: why they are kept
    foreign: dict[str, str] = dataclasses.field(default_factory=dict)

    def exists(self, res: StackResource) -> bool | None:
        """Whether the resource still exists; None when that cannot be
        told (no kind for its type, or its service not in the catalog)."""
        if (res.kind, res.physical_id) in self.elsewhere:
            return True
        if res.type == ROUTER_INTERFACE:
            if network.Port.name not in self.usable:
                return None
            router, subnet = _interface(res)
            return any(
                p.attrs.get('device_id') == router
                and subnet in p.attrs.get('subnet_ids', [])
                for p in self.ports
            )
        if res.kind not in self.kinds or res.kind not in self.usable:
            return None
        return (res.kind, res.physical_id) in self.mine

    def interface_ports(self) -> list[ResourceRef]:
        """The ports of the stack's routers that are not the stack's own:
        the routers' plan steps remove them."""
        routers = {
            r.id
            for r in self.mine.values()
            if r.kind == network.Router.name and r.id not in self.foreign
        }
        port = self.kinds[network.Port.name]
        mine = {r.id for r in self.mine.values() if r.kind == port.name}
        return [
            p
            for p in self.ports
            if p.id not in mine
            and p.attrs.get('device_id') in routers
            and port.primary_step(p) is None
        ]


def _interface(res: StackResource) -> tuple[str, str]:
    """A router interface's router and subnet: Heat names it
    ``<router id>:subnet_id=<subnet id>``."""
    router, _, rest = res.physical_id.partition(':')
    return router, rest.partition('subnet_id=')[2]


def find(
    conn: Any,
    left: Sequence[StackResource],
    *,
    parallel: int,
    retry: RetryPolicy,
    clock: Clock,
) -> Found:
    """List, one call per kind and project, the kinds of ``left`` whose
    service is in the catalog."""
    kinds = kinds_mod.build()
    known = [r for r in left if r.kind in kinds]
    wanted = {(r.kind, r.physical_id) for r in known}
    needed = {r.kind for r in known}
    if network.Router.name in needed or any(
        r.type == ROUTER_INTERFACE for r in left
    ):
        needed.add(network.Port.name)
    usable = {k for k in needed if conn.has_service(kinds[k].service_type)}
    refs, _notes = Discovery(
        conn,
        {k: kinds[k] for k in usable},
        parallel=parallel,
        retry=retry,
        clock=clock,
    ).run(sorted({r.project_id for r in left}))
    mine = {
        (r.kind, orchestration.physical_id(r)): r
        for r in refs
        if (r.kind, orchestration.physical_id(r)) in wanted
    }
    ports = [r for r in refs if r.kind == network.Port.name]
    found = Found(kinds, mine, ports, usable)
    _look_up_missing(
        conn,
        found,
        known,
        sorted({r.project_id for r in left}),
        retry=retry,
        clock=clock,
    )
    _foreign_interfaces(conn, found, left)
    return found


def _look_up_missing(
    conn: Any,
    found: Found,
    known: Sequence[StackResource],
    projects: Sequence[str],
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> None:
    """Ask for each resource the project's list lacks by id (an admin GET
    sees every project's), in the client's region, then in the catalog's
    other regions of its service: a 404 everywhere is gone."""
    regions: Regions | None = None
    here = conn.config.get_region_name() or ''
    for res in known:
        pair = (res.kind, res.physical_id)
        if pair in found.mine or res.kind not in found.usable:
            continue
        kind = found.kinds[res.kind]
        if not kind.sdk_get:
            # named in its project's space (a container, a keypair):
            # the project's list is the look-up
            continue
        ref = ResourceRef(kind=res.kind, id=res.physical_id)
        noun = res.kind.rpartition('.')[2].replace('_', ' ')

        def owner_in(region_conn: Any) -> str | None:
            return checked(
                f'looking up {noun} {res.physical_id}',
                lambda: kind.owner(region_conn, ref),
                retry=retry,
                clock=clock,
            )

        owner = owner_in(conn)
        where = here
        if owner is None:
            regions = regions or Regions(conn)
            for region in regions.of_service(
                kind.service_type, among=regions.catalog
            ):
                if region == here:
                    continue
                owner = owner_in(regions.connection(region))
                if owner is not None:
                    where = region
                    break
        if owner is None:
            continue  # gone
        if where != here:
            found.elsewhere[pair] = (
                f'kept: {noun} {res.physical_id} is in region {where}, not '
                f'the stack\'s region {here or "(default)"}'
            )
        elif owner == '':
            found.elsewhere[pair] = (
                f'kept: {noun} {res.physical_id} was not in its project\'s '
                f'list, and its GET does not say whose it is'
            )
        elif owner not in projects:
            found.elsewhere[pair] = (
                f'kept: {noun} {res.physical_id} belongs to project '
                f'{owner}, not the stack\'s project'
            )
        else:
            # the project's now, though its list lacked it: not deleted on
            # a list's word alone
            found.elsewhere[pair] = (
                f'kept: {noun} {res.physical_id} was not in its project\'s '
                f'list, but a GET finds it; run again'
            )


def _foreign_interfaces(
    conn: Any, found: Found, left: Sequence[StackResource]
) -> None:
    """The stack's routers with an interface on a subnet that is not the
    stack's, in any project (one list of ports by router): deleting such
    a router would remove someone else's interface."""
    routers = [
        r.id for r in found.mine.values() if r.kind == network.Router.name
    ]
    if not routers:
        return
    subnets = {r.physical_id for r in left if r.type == 'OS::Neutron::Subnet'}
    interfaces = {_interface(r) for r in left if r.type == ROUTER_INTERFACE}
    for router in routers:
        for port in network.neutron_items(
            conn, '/ports', 'ports', None, device_id=router
        ):
            if port.get('device_owner') not in (
                network.ROUTER_INTERFACE_OWNERS
            ):
                continue
            for ip in port.get('fixed_ips') or []:
                subnet = ip.get('subnet_id', '')
                if subnet in subnets or (router, subnet) in interfaces:
                    continue
                found.foreign[router] = (
                    f'kept: router {router} has an interface on subnet '
                    f'{subnet} (port {port["id"]}), which is not the '
                    f'stack\'s'
                )


def remaining(
    conn: Any,
    left: Sequence[StackResource],
    *,
    parallel: int,
    retry: RetryPolicy,
    clock: Clock,
) -> tuple[list[StackResource], list[StackResource]]:
    """What of ``left`` still exists, or cannot be told to be gone; and
    what is gone."""
    there, gone, _kept = check(
        conn, left, parallel=parallel, retry=retry, clock=clock
    )
    return there, gone


def check(
    conn: Any,
    left: Sequence[StackResource],
    *,
    parallel: int,
    retry: RetryPolicy,
    clock: Clock,
) -> tuple[list[StackResource], list[StackResource], dict[str, str]]:
    """``remaining``, and why the deletion would keep some of what is
    there, by key; changes nothing (a volume's backup is not taken)."""
    if not left:
        return [], [], {}
    kept = keeps_mod.keeps(left)
    found = find(conn, left, parallel=parallel, retry=retry, clock=clock)
    there = [r for r in left if found.exists(r) is not False]
    gone = [r for r in left if found.exists(r) is False]
    _found_keeps(conn, left, found, kept, retry=retry, clock=clock)
    return there, gone, {k: v for k, v in kept.items() if k in _keys(there)}


def _keys(resources: Sequence[StackResource]) -> set[str]:
    return {r.key for r in resources}


def _found_keeps(
    conn: Any,
    left: Sequence[StackResource],
    found: Found,
    kept: dict[str, str],
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> None:
    """Add to ``kept`` what the look-up keeps (another project's or
    region's, a router with someone else's interface, a container Heat's
    delete would refuse), then what that holds (``_hold``)."""
    for res in left:
        pair = (res.kind, res.physical_id)
        if res.key in kept:
            continue
        if pair in found.elsewhere:
            kept[res.key] = found.elsewhere[pair]
        elif res.kind == network.Router.name and (
            res.physical_id in found.foreign
        ):
            kept[res.key] = found.foreign[res.physical_id]
    containers.keeps(
        conn, left, set(found.mine), kept, retry=retry, clock=clock
    )
    _hold(left, found, kept)


def _hold(
    left: Sequence[StackResource], found: Found, kept: dict[str, str]
) -> None:
    """Add to ``kept`` what a kept resource holds in Neutron, which could
    not go without it: a router's interfaces, the subnets of a kept
    interface or port, the network of a kept subnet or port."""
    by_id = {r.physical_id: r for r in left if r.physical_id}

    def hold(physical_id: str, why: str) -> bool:
        res = by_id.get(physical_id)
        if res is None or res.key in kept:
            return False
        kept[res.key] = why
        return True

    changed = True
    while changed:
        changed = False
        for res in left:
            if res.key not in kept:
                continue
            if res.kind == network.Router.name:
                for iface in left:
                    if iface.type == ROUTER_INTERFACE and (
                        _interface(iface)[0] == res.physical_id
                    ):
                        changed |= hold(
                            iface.physical_id,
                            f'kept: its router {res.physical_id} is kept',
                        )
            elif res.type == ROUTER_INTERFACE:
                router, subnet = _interface(res)
                changed |= hold(
                    subnet, f'kept: its interface on router {router} is kept'
                )
            ref = found.mine.get((res.kind, res.physical_id))
            if ref is None or res.kind not in (
                network.Subnet.name,
                network.Port.name,
            ):
                continue
            for subnet in ref.attrs.get('subnet_ids', []):
                changed |= hold(
                    subnet, f'kept: its port {res.physical_id} is kept'
                )
            noun = res.kind.rpartition('.')[2]
            changed |= hold(
                ref.attrs.get('network_id') or '',
                f'kept: its {noun} {res.physical_id} is kept',
            )


def delete(
    conn: Any,
    left: Sequence[StackResource],
    *,
    parallel: int,
    timeout: float,
    retry: RetryPolicy,
    clock: Clock,
    on_event: Callable[[Event], None] | None,
    on_plan: Callable[[int], None],
    stop: Stop | None = None,
) -> dict[str, str]:
    """Delete what the abandon left and still exists, in dependency order;
    returns what became of each resource, by its key. ``on_plan`` is told
    the number of steps before they run; ``stop`` (a signal) ends the run
    early, and what it did not delete is said so."""
    kept = keeps_mod.keeps(left)
    rest = [r for r in left if r.key not in kept]
    found = find(conn, left, parallel=parallel, retry=retry, clock=clock)
    kinds = found.kinds
    projects = [
        {'id': p, 'name': ''} for p in sorted({r.project_id for r in left})
    ]
    _found_keeps(conn, left, found, kept, retry=retry, clock=clock)
    for res in rest:
        if (
            res.deletion_policy == policies.SNAPSHOT
            and res.key not in kept
            and (res.kind, res.physical_id) in found.mine
            and not (stop and stop.requested)
        ):
            why = _backup(
                conn, res, timeout=timeout, retry=retry, clock=clock, stop=stop
            )
            if why:
                kept[res.key] = why
    held = {(r.kind, r.physical_id) for r in left if r.key in kept}
    mine = {pair: ref for pair, ref in found.mine.items() if pair not in held}
    found = dataclasses.replace(found, mine=mine)
    plan = build_plan(
        Inventory([*found.mine.values(), *found.interface_ports()]),
        kinds,
        projects,
    )
    on_plan(len(plan.steps))
    run = run_plan(
        conn,
        plan,
        kinds,
        parallel=parallel,
        timeout=timeout,
        retry=retry,
        clock=clock,
        on_event=on_event,
        stop=stop,
    )

    def outcome_of(kind: str, physical_id: str) -> str:
        ref = found.mine.get((kind, physical_id))
        if ref is None:
            return GONE
        result = run.results.get(f'delete:{ref.key}') or (
            run.results.get(f'keep:{ref.key}')
        )
        if result is None:
            return 'not deleted: it goes with another resource'
        if result.outcome == 'done':
            return DELETED
        return f'{result.outcome}: {result.error}'

    out = {}
    for res in left:
        if res.key in kept:
            out[res.key] = kept[res.key]
        elif res.type == ROUTER_INTERFACE:
            router, _subnet = _interface(res)
            if (network.Router.name, router) in found.mine:
                out[res.key] = outcome_of(network.Router.name, router)
            elif found.exists(res):
                out[res.key] = (
                    f'not deleted: router {router} is not the stack\'s; '
                    f'remove the interface from it'
                )
            else:
                out[res.key] = GONE
        elif res.kind not in kinds:
            out[res.key] = (
                f'not deleted: the cascade has no kind for {res.type}'
            )
        elif res.kind not in found.usable:
            out[res.key] = (
                f'not deleted: {kinds[res.kind].service_type}'
                f' is not in the catalog'
            )
        else:
            out[res.key] = outcome_of(res.kind, res.physical_id)
    return out


def _backup(
    conn: Any,
    res: StackResource,
    *,
    timeout: float,
    retry: RetryPolicy,
    clock: Clock,
    stop: Stop | None,
) -> str:
    """What Heat's delete of a volume with deletion_policy Snapshot does
    first (OS::Cinder::Volume's handle_snapshot: a backup, forced as the
    volume may be in use, waited for until available); '' once taken,
    else why the volume is kept. Heat takes none of a volume whose create
    or update failed."""
    if res.status in ('CREATE_FAILED', 'UPDATE_FAILED'):
        return ''
    try:
        backup = conn.block_storage.create_backup(
            volume_id=res.physical_id,
            force=True,
            name=f'{res.stack}-{res.name}-snapshot',
        )
        status = [backup.status]

        def done() -> bool:
            status[0] = conn.block_storage.get_backup(backup.id).status
            return status[0] not in ('creating', 'backing-up') or bool(
                stop and stop.requested
            )

        wait_until(
            done,
            timeout,
            retry=retry,
            clock=PausingClock(clock, stop) if stop else clock,
        )
    except sdk_exc.SDKException as exc:
        return (
            f'kept: the template asks for a snapshot before its delete '
            f'(deletion_policy Snapshot), and its backup failed: {exc}'
        )
    if status[0] != 'available':
        return (
            f'kept: the template asks for a snapshot before its delete '
            f'(deletion_policy Snapshot); its backup {backup.id} is '
            f'{status[0]}'
        )
    return ''
