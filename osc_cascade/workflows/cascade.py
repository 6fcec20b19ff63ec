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

"""``project delete --cascade``: resolve, check, plan, drain, delete, verify.

The command layer (``v1.project``) only parses options, prompts and prints;
this module holds the workflow:

1. resolve the projects and refuse the unsafe ones (the caller's own
   project, immutable projects, domains, projects with children unless the
   cascade goes into them);
2. discover everything the projects own and build the plan that is shown;
3. stage 1, drain: disable the projects in Keystone, so that nobody can
   get a token for them and create anything new;
4. stage 2, delete: run exactly the plan that was shown;
5. discover again and delete what appeared, until nothing is left (a
   bounded number of rounds); only then may the projects be deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import dataclasses
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import (
    Clock,
    Event,
    Executor,
    RetryPolicy,
    RunResult,
)
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.resource import ResourceRef, Step


@dataclasses.dataclass
class CascadeOptions:
    recursive: bool = False
    delete_shared_images: bool = False
    parallel: int = 10
    timeout: float = 600.0
    #: discovery rounds after the plan has run, to catch what appeared
    verify_rounds: int = 3


@dataclasses.dataclass
class Outcome:
    """What a cascade did: the runs of each round and the projects that are
    now empty and may be deleted (child projects already are)."""

    runs: list[RunResult]
    empty_projects: list[ResourceRef]
    deleted_children: list[ResourceRef]


def resolve_project(
    conn: Any, name_or_id: str, domain: str | None = None
) -> Any:
    identity = conn.identity
    domain_id = None
    if domain:
        found = _call_identity(
            lambda: identity.find_domain(domain),
            f'looking up domain {domain!r}',
        )
        if found is None:
            raise CascadeError(
                f'No domain with a name or ID of {domain!r} exists.'
            )
        domain_id = found.id
    project = _call_identity(
        lambda: _get_or_none(identity.get_project, name_or_id),
        f'looking up project {name_or_id!r}',
    )
    if project is not None and (
        domain_id is None or project.domain_id == domain_id
    ):
        return project
    query = {'name': name_or_id}
    if domain_id:
        query['domain_id'] = domain_id
    matches = _call_identity(
        lambda: list(identity.projects(**query)),
        f'looking up project {name_or_id!r}',
    )
    if not matches:
        where = f' in domain {domain!r}' if domain else ''
        raise CascadeError(
            f'No project with a name or ID of {name_or_id!r} exists{where}.'
        )
    if len(matches) > 1:
        candidates = ', '.join(
            f'{p.id} (domain {p.domain_id})' for p in matches
        )
        raise CascadeError(
            f'More than one project is named {name_or_id!r}: '
            f'{candidates}; name it by ID or use --domain.'
        )
    return matches[0]


def _get_or_none(getter: Callable[[str], Any], id_: str) -> Any:
    try:
        return getter(id_)
    except sdk_exc.NotFoundException:
        return None


def _call_identity(call: Callable[[], Any], what: str) -> Any:
    try:
        return call()
    except sdk_exc.ForbiddenException as exc:
        raise CascadeError(
            f'{what} was refused (HTTP 403): the cascade '
            f'needs the admin role. {exc}'
        ) from exc
    except sdk_exc.HttpException as exc:
        raise CascadeError(f'{what} failed: {exc}') from exc


def project_ref(project: Any) -> ResourceRef:
    return ResourceRef(
        kind=kinds_mod.PROJECT_KIND,
        id=project.id,
        name=project.name or '',
        project_id=project.id,
        attrs={
            k: v
            for k, v in {
                'parent_id': project.parent_id,
                'domain_id': project.domain_id,
            }.items()
            if v
        },
    )


class ProjectCascade:
    def __init__(
        self,
        conn: Any,
        options: CascadeOptions | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        self.options = options or CascadeOptions()
        self.kinds = kinds_mod.build(
            delete_shared_images=self.options.delete_shared_images
        )
        self.clock = clock or Clock()
        self.retry = retry
        self.on_event = on_event
        #: the rounds of the last execute(), one RunResult each
        self.runs: list[RunResult] = []
        self.discovery = Discovery(
            conn,
            self.kinds,
            clock=self.clock,
            parallel=max(1, self.options.parallel),
        )

    # -- what to cascade ---------------------------------------------------

    def targets(self, projects: Sequence[Any]) -> list[ResourceRef]:
        """The projects to empty: the given ones and, with ``recursive``,
        their whole subtree, after the safety checks."""
        refs: dict[str, ResourceRef] = {}
        for project in projects:
            self._check_deletable(project)
            refs[project.id] = project_ref(project)
            children = self._subtree(project)
            if children and not self.options.recursive:
                raise CascadeError(
                    f'Project {project.name} ({project.id}) has child '
                    f'projects: '
                    + ', '.join(f'{c.name} ({c.id})' for c in children)
                    + '. Keystone refuses to delete a project that has '
                    'children; pass --recursive to cascade into them.'
                )
            for child in children:
                self._check_deletable(child)
                refs[child.id] = project_ref(child)
        return list(refs.values())

    def _check_deletable(self, project: Any) -> None:
        label = f'{project.name} ({project.id})'
        if project.id == self.conn.current_project_id:
            raise CascadeError(
                f'Refusing to cascade project {label}: it is the project '
                f'you are authenticated to. Authenticate to another '
                f'project (for example admin) and run again.'
            )
        if (project.options or {}).get('immutable'):
            raise CascadeError(
                f'Refusing to cascade project {label}: it is marked immutable.'
            )
        if project.is_domain:
            raise CascadeError(f'Refusing to cascade {label}: it is a domain.')

    def _subtree(self, project: Any) -> list[Any]:
        out, todo = [], [project.id]
        while todo:
            parent = todo.pop()
            children = _call_identity(
                lambda: list(self.conn.identity.projects(parent_id=parent)),
                f'listing the child projects of {parent}',
            )
            out.extend(children)
            todo.extend(c.id for c in children)
        return out

    # -- planning ----------------------------------------------------------

    def plan(self, targets: Sequence[ResourceRef]) -> Plan:
        refs, notes = self.discovery.run(t.id for t in targets)
        inventory = Inventory([*refs, *targets])
        plan = build_plan(inventory, self.kinds, _projects(targets))
        plan.notes.extend(notes)
        return plan

    # -- execution ---------------------------------------------------------

    def execute(self, plan: Plan, targets: Sequence[ResourceRef]) -> Outcome:
        """Drain, run the plan, verify; raise if anything is left."""
        kept = plan.kept()
        if kept:
            raise CascadeError(
                'Nothing was changed: the projects own resources that the '
                'cascade keeps, and a project is never deleted while it '
                'still owns something: '
                + '; '.join(s.describe() for s in kept)
                + '. Pass --delete-shared-images to delete them too.'
            )
        self.drain(targets)
        # kept on the cascade, so that a report has them when the
        # verification raises
        self.runs = runs = []
        runs.append(self._run(without_projects(plan)))
        for _round in range(self.options.verify_rounds):
            leftover = still_to_do(self.plan(targets))
            if not leftover.steps:
                break
            runs.append(self._run(leftover))
        else:
            leftover = still_to_do(self.plan(targets))
            if leftover.steps:
                raise CascadeError(_leftover_message(leftover, runs))
        children = [
            t
            for t in targets
            if t.attrs.get('parent_id') in {x.id for x in targets}
        ]
        self._delete_children(children)
        return Outcome(
            runs, [t for t in targets if t not in children], children
        )

    def drain(self, targets: Iterable[ResourceRef]) -> None:
        """Stage 1: disable the projects, leaves first (Keystone refuses to
        disable a project whose subtree is enabled)."""
        for target in _leaves_first(targets):
            _call_identity(
                lambda: self.conn.identity.update_project(
                    target.id, is_enabled=False
                ),
                f'disabling project {target.name} ({target.id})',
            )

    def _run(self, plan: Plan) -> RunResult:
        executor = Executor(
            self.conn,
            self.kinds,
            parallel=self.options.parallel,
            timeout=self.options.timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=self.on_event,
        )
        return executor.run(plan)

    def _delete_children(self, children: Sequence[ResourceRef]) -> None:
        for child in _leaves_first(children):
            _call_identity(
                lambda: self.conn.identity.delete_project(
                    child.id, ignore_missing=True
                ),
                f'deleting child project {child.name} ({child.id})',
            )


def without_projects(plan: Plan) -> Plan:
    """The plan minus the project deletions, which wait for verification."""
    return _subplan(plan, lambda s: s.target.kind != kinds_mod.PROJECT_KIND)


def still_to_do(plan: Plan) -> Plan:
    """What a verification round must still do: the plan without the
    projects and without what is only reported (the first round did)."""
    return _subplan(
        plan,
        lambda s: (
            s.target.kind != kinds_mod.PROJECT_KIND and not s.is_report_only
        ),
    )


def _subplan(plan: Plan, wanted: Callable[[Step], bool]) -> Plan:
    steps = {k: s for k, s in plan.steps.items() if wanted(s)}
    edges = {e for e in plan.edges if e[0] in steps and e[1] in steps}
    return Plan(
        projects=plan.projects,
        steps=steps,
        edges=edges,
        notes=plan.notes,
        soft_edges=plan.soft_edges & edges,
    )


def _projects(targets: Iterable[ResourceRef]) -> list[dict[str, str]]:
    return [{'id': t.id, 'name': t.name} for t in targets]


def _leaves_first(targets: Iterable[ResourceRef]) -> list[ResourceRef]:
    by_id = {t.id: t for t in targets}

    def depth(t: ResourceRef) -> int:
        d = 0
        while t.attrs.get('parent_id') in by_id:
            t = by_id[t.attrs['parent_id']]
            d += 1
        return d

    return sorted(by_id.values(), key=depth, reverse=True)


def _leftover_message(leftover: Plan, runs: Sequence[RunResult]) -> str:
    errors = {}
    for run in runs:
        for result in run.results.values():
            if result.error:
                errors[result.step.target.key] = result.error
    items = []
    for step in leftover.steps.values():
        why = errors.get(step.target.key)
        items.append(step.target.label() + (f' ({why})' if why else ''))
    return (
        'The projects were not deleted: they still own '
        f'{len(items)} resource(s): ' + '; '.join(sorted(items))
    )
