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

"""Many projects in one plan, each ending on its own.

``ProjectCascade`` runs the plan of all its projects at once, on shared
per-service slots and the rate limit, and refuses them all when one of
them keeps something. ``ManyProjects`` is the same cascade where one
project's refusal keeps that project (and its parents: Keystone deletes no
parent) and not the others:

- before the drain, a project whose plan keeps a resource is left out,
  untouched (not drained);
- after the drain, a project that owns what the plan did not show and
  that is older than the drain, whose resource is stuck, whose delete a
  resource kept (``Facts.kept``), or that still owns something after the
  verification rounds, stays drained;
- the others are verified empty and deleted (the children here, the
  roots by the caller, as ``project delete --cascade``).

What stays, and why, is in ``CascadeOutcome.stays`` (project ID to one
line) and on each project's drain record. The domain's cascade runs on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import concurrent.futures
import contextvars
from typing import Any

from osc_cascade.engine.errors import CascadeError, Interrupted, one_line
from osc_cascade.engine.executor import (
    FAILED,
    PROJECT,
    ROUND,
    STUCK,
    Event,
    RunResult,
    StepResult,
)
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.reconcile import reconcile, unpreviewed
from osc_cascade.engine.resource import ResourceRef, Step, delete
from osc_cascade.workflows import drain_record
from osc_cascade.workflows.cascade import (
    CascadeOutcome,
    ProjectCascade,
    still_to_do,
    without_projects,
)
from osc_cascade.workflows.projects import leaves_first


class ManyProjects(ProjectCascade):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        #: project ID -> why it stays
        self.stays: dict[str, str] = {}
        #: project ID -> the refusal of its drain, for those it kept
        self.refusals: dict[str, CascadeError] = {}
        #: report-only steps another part of the run says (a domain's
        #: users' keypairs, which its users' part deletes): left out
        self.said_elsewhere: Callable[[Step], bool] = lambda step: False

    def _execute(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> CascadeOutcome:
        self.stays = {}
        self._stay_steps(plan.kept(), 'keeps')
        self._with_parents(targets)
        live = self.live(targets)
        if not live:
            return CascadeOutcome([], [], [], dict(self.stays))
        outcome = super()._execute(
            plan.subplan(lambda s: s.target.project_id not in self.stays),
            live,
        )
        return outcome

    def live(self, targets: Sequence[ResourceRef]) -> list[ResourceRef]:
        """The targets that do not stay."""
        return [t for t in targets if t.id not in self.stays]

    def _delete(
        self, plan: Plan, targets: Sequence[ResourceRef], since: Any
    ) -> CascadeOutcome:
        outside = {s.id for s in self.outside(plan)}
        shown = self._going(plan.subplan(lambda s: s.id not in outside))
        checked = reconcile(shown, self._fresh(targets), since)
        self._report_dropped(checked.dropped)
        self._stay_steps(
            checked.unpreviewed,
            'owns what the plan did not show, older than the drain '
            '(run again to see it in the plan)',
        )
        self._stay_steps(checked.plan.kept(), 'keeps')
        self._with_parents(targets)
        self._mark(self.live(targets), drain_record.DELETING)
        self.runs = runs = []
        run = checked.plan.subplan(lambda s: not self.said_elsewhere(s))
        runs.append(self.run_round(self._going(without_projects(run))))
        self.check_interrupted()
        self._stay_results(runs[-1], targets)
        ran = {s for run in runs for s in run.results}
        for _round in range(self.options.verify_rounds + 1):
            leftover = still_to_do(self._fresh(targets))
            self.emit(Event(ROUND, None, planned=len(leftover.steps)))
            self._stay_steps(
                unpreviewed(leftover.steps.values(), ran, since),
                'owns what the plan did not show, older than the drain '
                '(run again to see it in the plan)',
            )
            leftover = self._going(leftover)
            if not leftover.steps:
                break
            if _round == self.options.verify_rounds:
                self._stay_steps(leftover.steps.values(), 'still owns')
                break
            runs.append(self.run_round(leftover))
            self.check_interrupted()
            self._stay_results(runs[-1], targets)
            ran |= set(runs[-1].results)
        live = self.live(targets)
        for ref in self.elsewhere(live):
            self._stay(ref.project_id, f'still owns {ref.label()}')
        self._with_parents(targets)
        done = self.live(targets)
        ids = {t.id for t in done}
        children = [t for t in done if t.attrs.get('parent_id') in ids]
        self.projects.delete(children)
        for project_id, why in sorted(self.stays.items()):
            if project_id in self.records:  # drained: its record says why
                self._mark(
                    [t for t in targets if t.id == project_id],
                    f'stays: {why}',
                )
        return CascadeOutcome(
            runs,
            [t for t in done if t not in children],
            children,
            dict(self.stays),
        )

    def drain(self, targets: Sequence[ResourceRef]) -> None:
        """Stage 1, ``parallel`` projects at once, each on its own: a
        project is drained once its children are (Keystone refuses to
        disable a project whose subtree is enabled); one whose drain is
        refused (changed since it was listed, a freeze that fails) stays,
        and its parents with it, never drained. Each drain writes its own
        record before each change. A stop starts no more drains: those
        under way finish, and the run stops there."""
        order = [t for t in leaves_first(targets) if t.id not in self.stays]
        waits = {
            t.id: {c.id for c in order if c.attrs.get('parent_id') == t.id}
            for t in order
        }
        drained: set[str] = set()
        running: dict[concurrent.futures.Future, tuple[ResourceRef, float]]
        running = {}
        failure: BaseException | None = None
        width = max(1, self.options.parallel)
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=width, thread_name_prefix='drain'
        ) as pool:
            while True:
                order = [t for t in order if t.id not in self.stays]
                while (
                    failure is None
                    and not self.stop.requested
                    and len(running) < width
                ):
                    ready = next(
                        (t for t in order if waits[t.id] <= drained), None
                    )
                    if ready is None:
                        break
                    order.remove(ready)
                    future = pool.submit(
                        contextvars.copy_context().run,
                        self.drainer.drain,
                        ready.id,
                    )
                    running[future] = (ready, self.clock.now())
                if not running:
                    break
                done, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in done:
                    target, started = running.pop(future)
                    try:
                        record, notes = future.result()
                    except Interrupted as exc:
                        failure = failure or exc
                    except CascadeError as exc:
                        self.refusals[target.id] = exc
                        self._stay(target.id, one_line(exc))
                        self._with_parents(targets)
                    except BaseException as exc:  # raised once all end
                        failure = failure or exc
                    else:
                        drained.add(target.id)
                        self._drained(target, record, notes, started)
        if failure is not None:
            raise failure
        self.check_interrupted()

    # -- what stays --------------------------------------------------------

    def _fresh(self, targets: Sequence[ResourceRef]) -> Plan:
        """The plan of what the live projects own now; a project a delete
        of the run kept something of (``Facts.kept``) stays first."""
        for kind in self.kinds.values():
            for ref, why in kind.facts.kept():
                self._stay(ref.project_id, f'{ref.label()}: {why}')
        self._with_parents(targets)
        return self._plan_here(self.live(targets))

    def _going(self, plan: Plan) -> Plan:
        return plan.subplan(lambda s: s.target.project_id not in self.stays)

    def _stay_steps(self, steps: Iterable[Step], verb: str) -> None:
        for step in steps:
            self._stay(step.target.project_id, f'{verb} {step.target.label()}')

    def _stay_results(
        self, run: RunResult, targets: Sequence[ResourceRef]
    ) -> None:
        """A stuck resource keeps its project (another round would find
        it as it is); a failed one is tried again by the next round."""
        for result in run.by_outcome(STUCK):
            self._stay(
                result.step.target.project_id,
                f'{result.step.target.label()} {result.error}',
            )
        self._with_parents(targets)

    def _stay(self, project_id: str, why: str) -> None:
        if project_id and project_id not in self.stays:
            self.stays[project_id] = why
            target = ResourceRef('identity.project', project_id)
            step = delete(target)
            self.emit(
                Event(
                    PROJECT,
                    step,
                    f'stays: {why}',
                    StepResult(step, FAILED),
                )
            )

    def _with_parents(self, targets: Sequence[ResourceRef]) -> None:
        by_id = {t.id: t for t in targets}
        for project_id in list(self.stays):
            parent = by_id.get(project_id)
            while parent is not None:
                parent = by_id.get(parent.attrs.get('parent_id') or '')
                if parent is not None:
                    self._stay(parent.id, 'a child project of it stays')
