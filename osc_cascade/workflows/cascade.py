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
3. stage 1, drain (``workflows.drain``): disable the projects in Keystone
   and freeze their quotas, each change recorded on the project first, so
   that nobody can create anything new, whatever token they hold;
4. stage 2, delete: run exactly the plan that was shown;
5. discover again and delete what appeared, until nothing is left (a
   bounded number of rounds); only then may the projects be deleted (OSC
   deletes them, after the workflow);
6. after the projects are gone (``workflows.after_delete.finish``): with
   ``settle``, wait out the services' token caches and delete what
   appeared with the projects' IDs in every region; then reset the frozen
   quotas, the last thing done.

The drain alone and its reverse (``workflows.soft_delete``) and the sweep
of drained projects (``workflows.sweep``) run on this class too: its
checks, its locks, its drain and its cascade.

The quotas are no steps of the plan (``kinds.quota.without_quotas``): a
reset before the projects are gone would lift the freeze.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
import contextlib
import dataclasses
import functools
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine import planfile, report
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError, PlanError
from osc_cascade.engine.executor import (
    DONE,
    DRAIN,
    KEPT,
    ROUND,
    Event,
    RunResult,
    StepResult,
)
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.reconcile import Reconciled, reconcile, unpreviewed
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef, Step, keep
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.kinds import quota
from osc_cascade.workflows import actor as actor_mod
from osc_cascade.workflows import drain as drain_mod
from osc_cascade.workflows import drain_record
from osc_cascade.workflows.cascade_messages import (
    elsewhere_message,
    kept_message,
    leftover_message,
    stop_if_stuck,
)
from osc_cascade.workflows.cascade_options import CascadeOptions
from osc_cascade.workflows.lowering import Lowering
from osc_cascade.workflows.projects import (
    Projects,
    Protected,
    is_protected,
    leaves_first,
    project_ref,
    protected_message,
)
from osc_cascade.workflows.stopping import Stop, run_round, steps_done

#: what a run is, for the refusals of other actors (``actor.holder``)
_DOING = {
    'cascade': 'openstack project delete --cascade',
    'drain': 'openstack project drain',
    'restore': 'openstack project restore',
    'sweep': 'openstack project sweep',
}


@dataclasses.dataclass
class CascadeOutcome:
    """What a cascade did: the runs of each round and the projects that are
    now empty and may be deleted (child projects already are)."""

    runs: list[RunResult]
    empty_projects: list[ResourceRef]
    deleted_children: list[ResourceRef]
    #: the projects that stay, and why (``workflows.many``: each ends on
    #: its own)
    stays: dict[str, str] = dataclasses.field(default_factory=dict)


class ProjectCascade:
    def __init__(
        self,
        conn: Any,
        options: CascadeOptions | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        actor: actor_mod.Actor | None = None,
        verb: str = 'cascade',
    ):
        self.conn = conn
        self.options = options or CascadeOptions()
        #: what the refusals say is refused (cascade, drain, restore)
        self.verb = verb
        #: the per-project locks of this run: taken before the drain,
        #: held until ``finish`` (or a failure) releases them
        self.actor = actor or actor_mod.Actor(
            actor_mod.coordination_url(self.options.coordination_url, conn),
            doing=_DOING.get(verb, verb),
        )
        self.kinds = quota.without_quotas(
            kinds_mod.build(
                delete_shared=self.options.delete_shared,
                force_stuck=self.options.force_stuck,
            )
        )
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.on_event = on_event
        self.projects = Projects(conn, retry=self.retry, clock=self.clock)
        #: the rounds of the last execute(), one RunResult each
        self.runs: list[RunResult] = []
        #: seconds spent in each phase, for the report
        self.phases: dict[str, float] = {}
        #: the signal that interrupted the run, if one did
        self.stop = Stop()
        #: the drain records, by project ID, as last written
        self.records: dict[str, dict[str, Any]] = {}
        #: what the drain and the finish have to say (values that did not
        #: take, quotas left behind), one line each
        self.notes: list[str] = []
        #: why the report file could not be written ('': it was, or none)
        self.unwritten = ''

    @functools.cached_property
    def regions(self) -> Regions:
        """The regions cascaded in, one connection each (read from the
        catalog when first needed)."""
        return Regions(self.conn, self.options.regions)

    @functools.cached_property
    def drainer(self) -> drain_mod.Drain:
        return drain_mod.Drain(
            self.conn,
            self.regions,
            retry=self.retry,
            clock=self.clock,
            now=lambda: self.projects.cloud_time().isoformat(),
        )

    @functools.cached_property
    def discovery(self) -> Discovery:
        return Discovery(
            self.conn,
            self.kinds,
            regions=self.regions,
            clock=self.clock,
            parallel=max(1, self.options.parallel),
        )

    # -- what to cascade ---------------------------------------------------

    def resolve(
        self, names_or_ids: Sequence[str], domain: str | None = None
    ) -> list[ResourceRef]:
        """The projects named, as the targets of a cascade."""
        return self.targets(
            [self.projects.resolve(p, domain) for p in names_or_ids]
        )

    def targets(self, projects: Sequence[Any]) -> list[ResourceRef]:
        """The projects to empty: the given ones and, with ``recursive``,
        their whole subtree, after the safety checks."""
        refs: dict[str, ResourceRef] = {}
        for project in projects:
            self._check_deletable(project)
            refs[project.id] = project_ref(project)
            children = self.projects.subtree(project)
            if children and not self.options.recursive:
                raise CascadeError(
                    f'Project {project.name} ({project.id}) has child '
                    f'projects: '
                    + ', '.join(f'{c.name} ({c.id})' for c in children)
                    + '. Keystone refuses to delete a project that has '
                    f'children; pass --recursive to {self.verb} them too.'
                )
            for child in children:
                self._check_deletable(child)
                refs[child.id] = project_ref(child)
        return list(refs.values())

    def check_deletable(self, project: Any) -> None:
        """Raise one line if the cascade may not delete the project (the
        domain's cascade asks for each of its projects)."""
        self._check_deletable(project)

    def _check_deletable(self, project: Any) -> None:
        label = f'{project.name} ({project.id})'
        if project.id == self.conn.current_project_id:
            raise CascadeError(
                f'Refusing to {self.verb} project {label}: it is the project '
                f'you are authenticated to. Authenticate to another '
                f'project (for example admin) and run again.'
            )
        if is_protected(project):
            raise Protected(protected_message(label, project.id))
        if project.is_domain:
            raise CascadeError(
                f'Refusing to {self.verb} {label}: it is a domain.'
            )

    # -- planning ----------------------------------------------------------

    def plan(self, targets: Sequence[ResourceRef]) -> Plan:
        """The plan of the regions cascaded in; with ``--region``, what
        the other regions hold is in it too, as kept (report-only) steps:
        the projects stay while anything is left there."""
        started = self.clock.now()
        plan = self._plan_here(targets)
        for ref in self.elsewhere(targets):
            step = keep(
                ref,
                'outside --region: stays, and keeps the projects',
                blocking=False,
            )
            plan.steps[step.id] = step
        # what the drain's freeze cannot cover, and what covers it instead
        plan.notes.extend(
            self.drainer.unfrozen(k.service_type for k in self.kinds.values())
        )
        self.phases.setdefault('plan', self.clock.now() - started)
        return plan

    def _plan_here(self, targets: Sequence[ResourceRef]) -> Plan:
        refs, notes = self.discovery.run(t.id for t in targets)
        plan = self.build([*refs, *targets], targets)
        plan.notes.extend(notes)
        plan.made_for = self._here()
        return plan

    def build(
        self, refs: Sequence[ResourceRef], projects: Sequence[ResourceRef]
    ) -> Plan:
        """The plan of deleting ``refs``, what ``projects`` own."""
        with _planning():
            return build_plan(Inventory(refs), self.kinds, _projects(projects))

    def outside(self, plan: Plan) -> list[Step]:
        """The plan's steps on what other regions than ``--region``'s
        hold: report-only keeps, which keep the projects."""
        return [
            s
            for s in plan.steps.values()
            if s.target.region in self.regions.others
        ]

    def elsewhere(self, targets: Sequence[ResourceRef]) -> list[ResourceRef]:
        """What the projects own in the catalog's regions outside
        ``--region`` (Keystone's kinds are the cascade's own)."""
        if not self.regions.others:
            return []
        refs, _notes = self.discovery.run(
            (t.id for t in targets), among=self.regions.others
        )
        return [r for r in refs if r.region in self.regions.others]

    def load_plan(self, path: str, targets: Sequence[ResourceRef]) -> Plan:
        """The plan saved by a dry run, for exactly these projects."""
        with _planning():
            return planfile.load(
                path,
                {t.id for t in targets},
                self._here(),
                self.options.plan_max_age,
            )

    def _here(self) -> dict[str, Any]:
        return planfile.made_for(
            self.conn.config.auth.get('auth_url', ''), self.regions.names
        )

    # -- execution ---------------------------------------------------------

    def execute(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> CascadeOutcome:
        """Drain, run the plan, verify; raise if anything is left. With a
        report file, what was done is written there, also on failure."""
        began = self.clock.now()
        try:
            self.hold(targets)
            outcome = self._execute(plan, targets)
        except Exception as exc:
            self.release()
            self._report(plan, began, str(exc) or type(exc).__name__)
            raise
        self._report(plan, began)
        return outcome

    # -- one actor per project ---------------------------------------------

    def hold(self, targets: Sequence[ResourceRef]) -> None:
        """Take the lock of every project (``workflows.actor``), or none:
        another actor on any of them refuses the whole run."""
        try:
            for target in sorted(targets, key=lambda t: t.id):
                self.actor.hold(target.id, f'{target.name} ({target.id})')
        except CascadeError:
            self.release()
            raise

    def release(self) -> None:
        """Give the projects' locks back (once the run is over)."""
        self.actor.release()

    def _execute(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> CascadeOutcome:
        self._refuse_kept(plan, drained=False)
        since = self.projects.cloud_time()
        self.drain(targets)
        # Cinder's freezes (at usage) follow the run's deletes down
        lowering = Lowering(self.drainer, self.records, self.on_event)
        self.on_event = lowering.notice
        try:
            return self._delete(plan, targets, since)
        except Exception as exc:
            self._mark(targets, f'failed at deleting: {exc}')
            raise
        finally:
            self.on_event = lowering.forward
            self.notes.extend(lowering.close())

    def _mark(self, targets: Sequence[ResourceRef], stage: str) -> None:
        """The stage on each project's record (``project show``); a
        failure to write it never hides the error at hand."""
        for target in targets:
            with contextlib.suppress(CascadeError):
                self.drainer.mark(
                    target.id, stage[:255], self.records.get(target.id)
                )

    def _delete(
        self, plan: Plan, targets: Sequence[ResourceRef], since: Any
    ) -> CascadeOutcome:
        # what the projects own now, after the drain: a step runs only if
        # its resource is still theirs
        # what the other regions hold is looked at again at the end
        outside = {s.id for s in self.outside(plan)}
        shown = plan.subplan(lambda s: s.id not in outside)
        checked = self._reconcile(shown, targets, since)
        self._report_dropped(checked.dropped)
        self._refuse_unpreviewed(checked.unpreviewed)
        self._refuse_kept(checked.plan, drained=True)
        self._mark(targets, drain_record.DELETING)
        # kept on the cascade, so that a report has them when the
        # verification raises
        self.runs = []
        with self.stop.workers(
            self.conn, self.options, len(checked.plan.steps)
        ):
            return self._rounds(checked.plan, targets, since)

    def _rounds(
        self, plan: Plan, targets: Sequence[ResourceRef], since: Any
    ) -> CascadeOutcome:
        runs = self.runs
        runs.append(self.run_round(without_projects(plan)))
        self.check_interrupted()
        stop_if_stuck(runs[-1])
        ran = {s for run in runs for s in run.results}
        for _round in range(self.options.verify_rounds):
            leftover = self._leftover(targets)
            self.emit(Event(ROUND, None, planned=len(leftover.steps)))
            self._refuse_unpreviewed(
                unpreviewed(leftover.steps.values(), ran, since)
            )
            if not leftover.steps:
                break
            runs.append(self.run_round(leftover))
            self.check_interrupted()
            stop_if_stuck(runs[-1])
            ran |= set(runs[-1].results)
        else:
            leftover = self._leftover(targets)
            self.emit(Event(ROUND, None, planned=len(leftover.steps)))
            if leftover.steps:
                raise CascadeError(leftover_message(leftover, runs))
        self._refuse_elsewhere(targets)
        parents = {t.id for t in targets}
        children = [t for t in targets if t.attrs.get('parent_id') in parents]
        self.projects.delete(children)
        return CascadeOutcome(
            runs, [t for t in targets if t not in children], children
        )

    def _reconcile(
        self, shown: Plan, targets: Sequence[ResourceRef], since: Any
    ) -> Reconciled:
        """What the run may do of ``shown``, the plan of what the
        projects own now (``engine.reconcile``)."""
        return reconcile(shown, self._plan_here(targets), since)

    def _leftover(self, targets: Sequence[ResourceRef]) -> Plan:
        """What a verification round must still do."""
        return still_to_do(self._plan_here(targets))

    def _refuse_kept(self, plan: Plan, *, drained: bool) -> None:
        """A project is never deleted while it owns something kept; a
        stuck resource keeps the projects, not the rest from going."""
        if plan.refusing():
            raise CascadeError(kept_message(plan.refusing(), drained=drained))

    def _refuse_elsewhere(self, targets: Sequence[ResourceRef]) -> None:
        """Nor while other regions than ``--region``'s hold some."""
        remaining = self.elsewhere(targets)
        if remaining:
            raise CascadeError(elsewhere_message(remaining))

    def _report_dropped(self, dropped: Sequence[Step]) -> None:
        """A planned resource that is no longer the project's is not
        touched; say where it went."""
        for step in dropped:
            kind = self.kinds[step.target.kind]
            owner = kind.owner(
                self.regions.connection(step.target.region), step.target
            )
            if owner is None:
                why = 'it is gone'
            elif owner:
                why = f'owner is now {owner}'
            else:
                why = 'it is no longer listed in its project'
                # whose it is now is in doubt: its project is not deleted
                kind.facts.keep(step.target, why)
            self.emit(Event(KEPT, step, f'{why}: kept, not in the run'))

    def _refuse_unpreviewed(self, steps: Sequence[Step]) -> None:
        if steps:
            raise CascadeError(
                'The projects were not deleted: they own '
                f'{len(steps)} resource(s) that the plan did not show and '
                'that were created before the drain (the preview missed '
                'them, so they are kept): '
                + '; '.join(sorted(s.target.label() for s in steps))
                + '. Run the cascade again to see them in its plan.'
            )

    def emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def drain(self, targets: Sequence[ResourceRef]) -> None:
        """Stage 1: disable the projects and freeze their quotas, leaves
        first (Keystone refuses to disable a project whose subtree is
        enabled), each change recorded on the project before it is made."""
        for target in leaves_first(targets):
            started = self.clock.now()
            record, notes = self.drainer.drain(target.id)
            self._drained(target, record, notes, started)

    def _drained(
        self,
        target: ResourceRef,
        record: dict[str, Any],
        notes: Sequence[str],
        started: float,
    ) -> None:
        """A project's drain is over: its record kept, its progress line."""
        self.records[target.id] = record
        self.notes.extend(notes)
        step = Step(DRAIN, target)
        self.emit(
            Event(
                DRAIN,
                step,
                self.drain_summary(record),
                StepResult(step, DONE, self.clock.now() - started),
            )
        )

    def drain_summary(self, record: dict[str, Any]) -> str:
        """What the drain did, as its progress line says it."""
        frozen = sum(
            entry.get('state') == drain_record.FROZEN
            for entries in record.get('quotas', {}).values()
            for entry in entries.values()
        )
        return f'disabled, {frozen} quota set(s) frozen'

    def exists(self, project_id: str) -> bool:
        """Whether the project is still there (``after_delete.finish``
        asks, after OSC deleted it)."""
        return (
            self.projects.retried(
                f'reading project {project_id}',
                lambda: keystone.project_body(self.conn, project_id),
            )
            is not None
        )

    def interrupt(self, signum: int) -> None:
        """Stop (from a signal handler): the round under way starts nothing
        more and returns what it did; no round and no delete of a project
        follows."""
        self.stop(signum)

    def wait(self, seconds: float) -> None:
        """Wait ``seconds``, less if interrupted; raise if it was."""
        self.clock.pause(seconds, self.stop.event)
        self.check_interrupted()

    def check_interrupted(self) -> None:
        results = (r for run in self.runs for r in run.results.values())
        self.stop.check(
            f'{steps_done(results)}. The projects stay drained (disabled): '
            'run the same command again to finish.'
        )

    def run_round(self, plan: Plan) -> RunResult:
        self.check_interrupted()
        return run_round(self, plan)

    def _report(self, plan: Plan, began: float, error: str = '') -> None:
        if not self.options.report_file:
            return
        phases = dict(self.phases, execute=self.clock.now() - began)
        self.unwritten = report.write(
            self.options.report_file,
            report.build(
                without_projects(plan),
                self.runs,
                parallel=self.options.parallel,
                phases=phases,
                origin=began,
                error=error,
                context=self.options.report_context,
            ),
        )


def without_projects(plan: Plan) -> Plan:
    """The plan minus the project deletions, which wait for verification."""
    return plan.subplan(lambda s: s.target.kind != kinds_mod.PROJECT_KIND)


def still_to_do(plan: Plan) -> Plan:
    """What a verification round must still do: the plan without the
    projects and without what is only reported (the first round did)."""
    return plan.subplan(
        lambda s: (
            s.target.kind != kinds_mod.PROJECT_KIND and not s.is_report_only
        )
    )


@contextlib.contextmanager
def _planning() -> Iterator[None]:
    try:
        yield
    except PlanError as exc:
        raise CascadeError(f'Cannot plan the cascade: {exc}') from exc


def _projects(targets: Sequence[ResourceRef]) -> list[dict[str, str]]:
    return [{'id': t.id, 'name': t.name} for t in targets]
