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
project (``engine.discovery``), and match them by Heat's physical id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import contextlib
import dataclasses
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.executor import Event, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, wait_until
from osc_cascade.kinds import network, orchestration
from osc_cascade.workflows.clusters import policies
from osc_cascade.workflows.clusters.records import (
    ROUTER_INTERFACE,
    StackResource,
)
from osc_cascade.workflows.force_delete import keeps as keeps_mod
from osc_cascade.workflows.stopping import PausingClock, Stop

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

    def exists(self, res: StackResource) -> bool | None:
        """Whether the resource still exists; None when that cannot be
        told (no kind for its type, or its service not in the catalog)."""
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
            r.id for r in self.mine.values() if r.kind == network.Router.name
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
    return Found(kinds, mine, ports, usable)


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
    if not left:
        return [], []
    found = find(conn, left, parallel=parallel, retry=retry, clock=clock)
    there = [r for r in left if found.exists(r) is not False]
    gone = [r for r in left if found.exists(r) is False]
    return there, gone


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
    _hold(left, found, kept)
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
    executor = Executor(
        conn,
        kinds,
        parallel=parallel,
        timeout=timeout,
        retry=retry,
        clock=clock,
        on_event=on_event,
    )
    with stop.running(executor) if stop else contextlib.nullcontext():
        run = executor.run(plan)

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
