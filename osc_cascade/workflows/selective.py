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

"""A selective cleanup: ``project delete --cascade`` with a filter
(``--created-before``, ``--skip-resource``, ``--not-tags``...).

Selecting less than everything keeps the project (``--keep-project`` is
implied) and drains nothing: its users go on working. The plan keeps what
the filters do not select and what cannot go without it
(``engine.closure``), each with one line. The run then deletes exactly
what the preview showed, no more: it lists the project again, applies the
same filters (their times made absolute when the plan was made, and saved
with it), bounded by the preview's deletes (the rows a plan file still
selects), and closes that selection again. So a resource tagged ``keep``
after the preview is kept, one the preview did not show is not deleted,
and what now hangs on either stays with it.

What it does not guarantee: a resource created, tagged or attached between
the run's listing and its delete of another is not seen (nothing is
drained); the delete then fails as the service refuses it, and the next
run finds it.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import datetime
from typing import Any

from osc_cascade.engine import plan_rows
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.reconcile import Reconciled, reconcile
from osc_cascade.engine.resource import KEEP, ResourceRef, keep
from osc_cascade.engine.selection import NOT_SHOWN, PROJECT_KIND, Selection
from osc_cascade.workflows import cascade, scoped
from osc_cascade.workflows.projects import (
    Protected,
    is_protected,
    project_ref,
    protected_message,
)

#: what a selective run says of itself, in its plan
GUARANTEE = (
    'selective: the project stays and nothing is drained; the run deletes '
    'at most what this plan deletes, of what the filters still select '
    'then, and keeps what hangs on anything kept'
)


@dataclasses.dataclass(frozen=True)
class Ages:
    """``--created-before 7d``: an age, made a time by the cloud's clock
    when the plan is made (seconds; None: none given)."""

    created: float | None = None
    updated: float | None = None

    def __bool__(self) -> bool:
        return self.created is not None or self.updated is not None

    def resolve(
        self, selection: Selection, now: datetime.datetime
    ) -> Selection:
        times = {
            f'{what}_before': (now - datetime.timedelta(seconds=age))
            .astimezone(datetime.UTC)
            .isoformat(timespec='seconds')
            for what, age in (
                ('created', self.created),
                ('updated', self.updated),
            )
            if age is not None
        }
        return dataclasses.replace(selection, **times)


class Selective:
    """What makes a cascade selective (a mixin of ``ProjectCascade``'s
    classes): the project stays, nothing is drained, the plan and the run
    are of what ``selection`` selects."""

    selection: Selection
    ages: Ages

    def __init__(
        self,
        conn: Any,
        options: cascade.CascadeOptions | None = None,
        *,
        selection: Selection | None = None,
        ages: Ages | None = None,
        **kw: Any,
    ):
        super().__init__(conn, options, **kw)  # type: ignore[call-arg]
        self.selection = selection or Selection()
        self.ages = ages or Ages()
        if self.options.settle:  # type: ignore[attr-defined]
            raise CascadeError(
                '--settle waits for what appears after a project is '
                'deleted: a selection keeps the project.'
            )

    # -- planning ----------------------------------------------------------

    def plan(self, targets: Sequence[ResourceRef]) -> Plan:
        if self.ages:
            # an age is a time from now on: the preview's, saved with it
            self.selection = self.ages.resolve(
                self.selection, self.projects.cloud_time()
            )
            self.ages = Ages()
        plan = super().plan(targets)
        # nothing is drained: what the drain's freeze would not cover
        # does not matter
        unfrozen = set(
            self.drainer.unfrozen(k.service_type for k in self.kinds.values())
        )
        plan.notes[:] = [GUARANTEE] + [
            n for n in plan.notes if n not in unfrozen
        ]
        return plan

    def build(
        self, refs: Sequence[ResourceRef], projects: Sequence[ResourceRef]
    ) -> Plan:
        with cascade._planning():
            plan = build_plan(
                Inventory(refs),
                self.kinds,
                cascade._projects(projects),
                self.selection.why_not,
            )
        # the projects stay: shown so, and no step waits for them
        plan = plan.subplan(lambda s: s.target.kind != PROJECT_KIND)
        for project in projects:
            kept = keep(project, 'a selection keeps it', blocking=False)
            plan.steps[kept.id] = kept
        plan.notes.extend(self.selection.notes(refs))
        plan.selection = {'filters': self.selection.to_dict()}
        return plan

    def load_plan(self, path: str, targets: Sequence[ResourceRef]) -> Plan:
        plan = super().load_plan(path, targets)
        saved = plan_rows.selection_of(plan)
        if saved is None:
            raise CascadeError(
                f'Plan file {path} is a plan of everything, not a selective '
                'one: run it without the selection options, or make a new '
                'plan with them.'
            )
        if (self.selection or self.ages) and self.selection != saved:
            raise CascadeError(
                f'Plan file {path} was made with other filters '
                f'({saved.to_dict()}): run it without the selection options '
                '(its own apply), or make a new plan.'
            )
        self.selection = saved
        return plan

    # -- execution ---------------------------------------------------------

    def _refuse_kept(self, plan: Plan, *, drained: bool) -> None:
        """What a selective run keeps keeps the project, which stays."""

    def _refuse_unpreviewed(self, steps: Sequence[Any]) -> None:
        """What the preview did not show is kept (the selection is
        bounded by it), not refused."""

    def _reconcile(
        self, shown: Plan, targets: Sequence[ResourceRef], since: Any
    ) -> Reconciled:
        """The plan of what the project owns now, selected again by the
        same filters, bounded by the deletes ``shown`` (of the rows a
        plan file still selects), and closed again."""
        bound = plan_rows.selection_of(shown) or self.selection
        if bound.allowed is None:
            bound = bound.bounded(
                s.target.key for s in shown.steps.values() if s.is_delete
            )
        self.selection = bound
        fresh = self._plan_here(targets)
        # what the plan shown kept, and keeps only as it is not among
        # its deletes, is kept for the reason it showed
        for step_id, step in fresh.steps.items():
            was = shown.steps.get(step_id)
            if was is not None and step.params.get('reason', '').endswith(
                NOT_SHOWN
            ):
                fresh.steps[step_id] = was
        dropped = reconcile(shown, fresh, since).dropped
        return Reconciled(fresh, [s for s in dropped if s.is_delete], [])

    def _refuse_elsewhere(self, targets: Sequence[ResourceRef]) -> None:
        """The project stays: what other regions hold is theirs to keep."""

    def _leftover(self, targets: Sequence[ResourceRef]) -> Plan:
        """The deletes still to do (what is kept is kept, and the closure
        has kept whatever hangs on it)."""
        return cascade.still_to_do(self._plan_here(targets)).subplan(
            lambda s: s.action != KEEP
        )


class SelectiveCascade(Selective, cascade.ProjectCascade):
    """A selective cleanup by a cloud admin: listed and deleted with the
    admin's token, as a full cascade; the project stays."""

    def targets(self, projects: Sequence[Any]) -> list[ResourceRef]:
        """The projects, which stay: their children do not matter, nor
        whether the caller's token is scoped to one; a protected project
        is still refused."""
        if self.options.recursive:
            # the cascade deletes the children it empties
            raise CascadeError(
                'A selection keeps the projects: --recursive, which '
                'deletes the child projects, does not go with it.'
            )
        refs = []
        for project in projects:
            label = f'{project.name} ({project.id})'
            if is_protected(project):
                raise Protected(protected_message(label, project.id))
            if project.is_domain:
                raise CascadeError(f'Refusing to clean {label}: a domain.')
            refs.append(project_ref(project))
        return refs

    def drain(self, targets: Sequence[ResourceRef]) -> None:
        """Nothing is drained: the project's users go on working."""

    def execute(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> cascade.CascadeOutcome:
        try:
            outcome = super().execute(plan, targets)
        finally:
            self.release()
        return dataclasses.replace(
            outcome, empty_projects=[], deleted_children=[]
        )


class ScopedSelectiveCascade(Selective, scoped.ScopedCascade):
    """A selective cleanup without admin (``workflows.scoped``), through a
    token scoped to the project, which stays."""

    def __init__(self, conn: Any, *args: Any, **kw: Any):
        super().__init__(conn, *args, keep_project=True, **kw)
