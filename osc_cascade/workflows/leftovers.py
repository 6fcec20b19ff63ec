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


"""What an abandoned stack left behind, deleted: those of its resources
that still exist, in dependency order, with the cascade's kinds, planner
and executor (``cluster force-delete --delete-leftovers``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.executor import Event, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.kinds import network, orchestration
from osc_cascade.workflows.clusters import ROUTER_INTERFACE, StackResource

# What became of a leftover, when it is not a failure.
DELETED = 'deleted'
GONE = 'already gone'


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
) -> dict[str, str]:
    """Delete what the abandon left and still exists, in dependency order;
    returns what became of each resource, by its key. ``on_plan`` is told
    the number of steps before they run."""
    kinds = kinds_mod.build()
    mine, interfaces, usable = _inventory(
        conn,
        kinds,
        [r for r in left if r.kind in kinds],
        parallel=parallel,
        clock=clock,
    )
    projects = [
        {'id': p, 'name': ''} for p in sorted({r.project_id for r in left})
    ]
    plan = build_plan(
        Inventory([*mine.values(), *interfaces]), kinds, projects
    )
    on_plan(len(plan.steps))
    run = Executor(
        conn,
        kinds,
        parallel=parallel,
        timeout=timeout,
        retry=retry,
        clock=clock,
        on_event=on_event,
    ).run(plan)

    def outcome_of(kind: str, physical_id: str) -> str:
        ref = mine.get((kind, physical_id))
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
        if res.type == ROUTER_INTERFACE:
            router = res.physical_id.split(':')[0]
            out[res.key] = outcome_of(network.Router.name, router)
        elif res.kind not in kinds:
            out[res.key] = (
                f'not deleted: the cascade has no kind for {res.type}'
            )
        elif res.kind not in usable:
            out[res.key] = (
                f'not deleted: {kinds[res.kind].service_type}'
                f' is not in the catalog'
            )
        else:
            out[res.key] = outcome_of(res.kind, res.physical_id)
    return out


def _inventory(
    conn: Any,
    kinds: dict[str, Any],
    known: Sequence[StackResource],
    *,
    parallel: int,
    clock: Clock,
) -> tuple[dict[tuple[str, str], ResourceRef], list[ResourceRef], set[str]]:
    """The refs of the resources that still exist, by kind and Heat's
    physical id, as the kinds list them (so that they carry what the
    planner needs); the routers' interface ports, which the routers' plan
    steps remove; the kinds whose service is in the catalog."""
    wanted = {(r.kind, r.physical_id) for r in known}
    needed = {r.kind for r in known}
    if network.Router.name in needed:
        needed.add(network.Port.name)
    usable = {k for k in needed if conn.has_service(kinds[k].service_type)}
    refs, _notes = Discovery(
        conn, {k: kinds[k] for k in usable}, parallel=parallel, clock=clock
    ).run(sorted({r.project_id for r in known}))
    mine = {
        (r.kind, orchestration.physical_id(r)): r
        for r in refs
        if (r.kind, orchestration.physical_id(r)) in wanted
    }
    routers = {r.id for r in mine.values() if r.kind == network.Router.name}
    port = kinds[network.Port.name]
    interfaces = [
        r
        for r in refs
        if r.kind == network.Port.name
        and (r.kind, r.id) not in wanted
        and r.attrs.get('device_id') in routers
        and port.primary_step(r) is None
    ]
    return mine, interfaces, usable
