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

"""Orphans: resources whose owner project no longer exists in Keystone.

Every kind the cascade knows is listed across all projects (the kinds'
``list`` with no project), and each resource's owner is looked up in the
set of projects and domains Keystone has. Blind spots of earlier tools are
handled on purpose: an RBAC policy's wildcard target ``*`` is not an owner
(only the policy's own project is), a resource with an empty owner is
reported as such rather than passed over, and resources that go with their
owner (a router's gateway port, a DHCP port) are not reported on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import dataclasses
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError, PlanError
from osc_cascade.engine.executor import Event, Executor, RunResult
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.kinds.base import ResourceKind

GONE_OWNER = 'owner project does not exist'
NO_OWNER = 'no owner project'
GONE_TARGET = 'shared with a project that does not exist'


@dataclasses.dataclass(frozen=True)
class Orphan:
    ref: ResourceRef
    reason: str

    def row(self) -> tuple[str, ...]:
        attrs = self.ref.attrs
        return (
            self.ref.project_id,
            self.ref.kind,
            self.ref.id,
            self.ref.name,
            self.reason,
            attrs.get('created_at', ''),
            attrs.get('updated_at', ''),
        )


def select_kinds(
    kinds: Mapping[str, ResourceKind],
    services: Sequence[str] = (),
    kind_names: Sequence[str] = (),
) -> dict[str, ResourceKind]:
    """The kinds to search, filtered by service type and kind name."""
    unknown = [k for k in kind_names if k not in kinds]
    if unknown:
        raise CascadeError(
            f'Unknown kind(s): {", ".join(unknown)}. Known: '
            + ', '.join(sorted(kinds))
        )
    return {
        name: kind
        for name, kind in kinds.items()
        if name != kinds_mod.PROJECT_KIND
        and (not services or kind.service_type in services)
        and (not kind_names or name in kind_names)
    }


def existing_owners(conn: Any) -> set[str]:
    """Every project and domain Keystone has (resources can be owned by a
    domain, and Heat's stack-user projects are projects like any other)."""
    try:
        return {p.id for p in conn.identity.projects()} | {
            d.id for d in conn.identity.domains()
        }
    except Exception as exc:
        raise CascadeError(
            f'listing the projects of the cloud failed: {exc}'
        ) from exc


def classify(
    ref: ResourceRef, kind: ResourceKind, owners: set[str]
) -> str | None:
    if kind.primary_step(ref) is None:
        return None  # goes with its owner resource
    if not ref.project_id:
        return NO_OWNER
    if ref.project_id not in owners:
        return GONE_OWNER
    target = ref.attrs.get('target')
    if target and target != '*' and target not in owners:
        return GONE_TARGET
    return None


@dataclasses.dataclass
class Findings:
    orphans: list[Orphan]
    #: services skipped because they are not in the catalog
    notes: list[str]
    #: everything the orphans' owners still hold, including what goes with
    #: its owner (a router's interface ports): the purge plan needs it
    owned_by_gone: list[ResourceRef]


def find(
    conn: Any,
    kinds: Mapping[str, ResourceKind],
    *,
    owners_filter: Iterable[str] = (),
    parallel: int = 8,
) -> Findings:
    """Every orphan of the given kinds."""
    owners = existing_owners(conn)
    refs, notes = Discovery(conn, kinds, parallel=parallel).run([None])
    wanted = set(owners_filter)
    found = []
    for ref in refs:
        reason = classify(ref, kinds[ref.kind], owners)
        if reason and (not wanted or ref.project_id in wanted):
            found.append(Orphan(ref, reason))
    found.sort(
        key=lambda o: (o.ref.project_id, o.ref.kind, o.ref.name, o.ref.id)
    )
    gone = {o.ref.project_id for o in found if o.reason == GONE_OWNER}
    return Findings(found, notes, [r for r in refs if r.project_id in gone])


def purge_plan(findings: Findings, kinds: Mapping[str, ResourceKind]) -> Plan:
    """A plan that deletes what deleted projects left, ordered as a cascade
    of those projects would be. Resources with no owner, or owned by a
    live project, are never part of it."""
    refs = findings.owned_by_gone
    projects = [
        {'id': pid, 'name': ''} for pid in sorted({r.project_id for r in refs})
    ]
    try:
        return build_plan(Inventory(refs), kinds, projects)
    except PlanError as exc:
        raise CascadeError(f'Cannot plan the purge: {exc}') from exc


def purge(
    conn: Any,
    plan: Plan,
    kinds: Mapping[str, ResourceKind],
    *,
    parallel: int,
    timeout: float,
    on_event: Callable[[Event], None] | None = None,
    clock: Clock | None = None,
    retry: RetryPolicy | None = None,
) -> RunResult:
    """Run a purge plan: no token scoped to the deleted projects needed."""
    return Executor(
        conn,
        kinds,
        parallel=parallel,
        timeout=timeout,
        retry=retry,
        clock=clock,
        on_event=on_event,
    ).run(plan)
