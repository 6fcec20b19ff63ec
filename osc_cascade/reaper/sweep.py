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

"""The purge of deleted projects, and the full orphan sweep.

Both are the orphan search's (``workflows.orphans``): the resources are
found (of the given owners only, or of every owner proven gone), planned
as a cascade of those projects would be, each owner is proven gone once
more right before anything is deleted, and the executor deletes, rate
limited per service. Each owner is purged only while this actor holds its
lock (``lock.Locks``); one held by someone else is reported LOCKED and
left alone. The outcome of each owner says what happened: nothing left
(CLEAN), PURGED, FAILED (with why), LOCKED, or DRY (the dry run: the plan
is only logged).

Only projects Keystone answers 404 for are purged, proven again right
before anything is deleted: a live project is never touched, so a
protected one (Keystone's ``immutable`` option, which makes Keystone
refuse its delete) needs no check here. The lock is the one the commands
take (``workflows.actor``): with the same ``coordination_url``, the
reaper never purges a project a cascade or a sweep is working on.

The sweep resets no quota row (Neutron's, Octavia's, Barbican's,
Magnum's: the quota kinds) of an owner before the services' token cache
window after its delete has passed (``QuotaHold``): a cascade without
``--settle`` leaves them frozen for that window (``late_release``), and a
sweep that found the owner before the reaper's notification would
otherwise reopen them. The delete's time is rarely known here (the pending
release is written on the cascade's host): the window is counted from the
sweep that first found the owner, or from the pending release's end when
this host has a later one. A later pass (the purge the reaper schedules a
grace period after, or a later sweep) resets them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
import contextlib
import dataclasses
import logging
import signal
import threading
from typing import Any

from osc_cascade.engine import report
from osc_cascade.engine.errors import CascadeError, Interrupted, one_line
from osc_cascade.engine.executor import DONE, KEPT, Event
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.kinds.quota import without_quotas
from osc_cascade.reaper.lock import Locks
from osc_cascade.workflows import late_release, orphans
from osc_cascade.workflows.k8s.conventions import clusters_of

LOG = logging.getLogger(__name__)

CLEAN = 'clean'
PURGED = 'purged'
FAILED = 'failed'
LOCKED = 'locked'
DRY = 'dry-run'


@dataclasses.dataclass(frozen=True)
class Outcome:
    state: str
    detail: str = ''


def only(
    findings: orphans.Findings, owners: Iterable[str]
) -> orphans.Findings:
    """What the search found of ``owners``, and nothing else."""
    keep = set(owners)
    return orphans.Findings(
        [o for o in findings.orphans if o.ref.project_id in keep],
        [],
        [r for r in findings.owned_by_gone if r.project_id in keep],
        {o: e for o, e in findings.unconfirmed.items() if o in keep},
        {o: why for o, why in findings.unlisted.items() if o in keep},
    )


class QuotaHold:
    """When the sweep first found each owner, to hold its quota rows
    until the token cache window has passed since then (and since the end
    of its pending release on this host, if later)."""

    def __init__(self, clock: Clock, window: float = late_release.WINDOW):
        self.clock = clock
        self.window = window
        self._first_seen: dict[str, float] = {}

    def until(
        self, owners: Iterable[str], cloud_now: Callable[[], Any]
    ) -> dict[str, str]:
        """The owners whose quota rows are held, with until when. Owners
        no longer found are forgotten (a later sighting starts again)."""
        owners = set(owners)
        now = self.clock.now()
        self._first_seen = {
            o: self._first_seen.get(o, now) for o in sorted(owners)
        }
        held = {
            o: f'{first + self.window - now:g}s from now'
            for o, first in self._first_seen.items()
            if now - first < self.window
        }
        if late_release.any_pending(owners):
            at = cloud_now()
            for owner in sorted(owners):
                later = late_release.not_yet(late_release.pending(owner), at)
                if later:
                    held[owner] = later
        return held


def held_back(
    findings: orphans.Findings,
    kinds: Mapping[str, ResourceKind],
    held: Mapping[str, str],
) -> orphans.Findings:
    """The findings without the quota rows of the ``held`` owners."""
    plain = without_quotas(dict(kinds))

    def kept(ref: Any) -> bool:
        return ref.project_id not in held or ref.kind in plain

    return dataclasses.replace(
        findings,
        orphans=[o for o in findings.orphans if kept(o.ref)],
        owned_by_gone=[r for r in findings.owned_by_gone if kept(r)],
    )


def held_line(owner: str, until: str) -> str:
    return (
        f'project {owner}: its quota rows stay frozen until {until} (the '
        'token cache window after its delete, counted from when the sweep '
        'first found it): a later pass resets them'
    )


def _counts(plan: Plan) -> str:
    kinds = Counter(s.target.kind for s in plan.steps.values())
    return ', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))


def _log_event(event: Event) -> None:
    if event.kind in (DONE, KEPT):
        LOG.info('%s: %s', event.step.describe(), event.kind)
    elif event.kind == 'retry':
        LOG.info('%s: %s', event.step.describe(), event.message)
    elif event.kind != 'started':
        LOG.warning(
            '%s: %s: %s', event.step.describe(), event.kind, event.message
        )


class Purger:
    def __init__(
        self,
        conn: Any,
        kinds: Mapping[str, ResourceKind],
        locks: Locks,
        *,
        regions: Regions | None = None,
        dry_run: bool = False,
        parallel: int = 4,
        timeout: float = 600.0,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        self.kinds = kinds
        self.locks = locks
        self.regions = regions or Regions(conn)
        self.dry_run = dry_run
        self.parallel = parallel
        self.timeout = timeout
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self._stopping = threading.Event()
        self.quota_hold = QuotaHold(self.clock)
        #: the search whose purge may be under way, for ``stop``
        self._search_now: orphans.OrphanSearch | None = None

    def _record(
        self,
        search: orphans.OrphanSearch,
        plan: Plan,
        result: Any,
        started: Any,
        origin: float,
        error: str,
    ) -> None:
        """The purge's record (``engine.report``), as every real run of
        the commands writes one, in the service user's state directory."""
        command = 'osc-cascade-reaper purge'
        path = report.default_path(command, started)
        unwritten = report.write(
            path,
            report.build(
                plan,
                [result] if result else [],
                parallel=self.parallel,
                phases={'execute': self.clock.now() - origin},
                origin=origin,
                error=error,
                context=report.context(
                    search.conn, command, search.regions.names, started
                ),
            ),
        )
        if unwritten:
            LOG.warning('%s', unwritten)
        else:
            LOG.info('the record of the purge: %s', path)

    def stop(self) -> None:
        """Start nothing more; a purge under way stops as the orphan
        purge does on a signal (its calls in flight finish)."""
        self._stopping.set()
        search = self._search_now
        if search is not None:
            search.interrupt(signal.SIGTERM)

    def _search(self) -> orphans.OrphanSearch:
        self._search_now = orphans.OrphanSearch(
            self.conn,
            self.kinds,
            regions=self.regions,
            parallel=self.parallel,
            clock=self.clock,
            retry=self.retry,
        )
        if self._stopping.is_set():
            self._search_now.interrupt(signal.SIGTERM)
        return self._search_now

    def purge(self, owners: Sequence[str]) -> dict[str, Outcome]:
        """Purge what the deleted projects ``owners`` left."""
        with contextlib.ExitStack() as held:
            mine, outcomes = self._lock(owners, held)
            if mine:
                search = self._search()
                outcomes.update(
                    self._guarded(mine, lambda: search.find(mine), search)
                )
        return outcomes

    def sweep(self, skip: Iterable[str] = ()) -> dict[str, Outcome]:
        """The full orphan sweep: every owner proven gone (but those in
        ``skip``, waiting for their own purge) is purged. A failure of the
        search itself raises."""
        search = self._search()
        findings = search.find()
        for note in findings.notes:
            LOG.info('note: %s', note)
        log_clusters(findings)
        owners = sorted(
            {r.project_id for r in findings.owned_by_gone} - set(skip)
        )
        LOG.info('sweep: %d deleted project(s) left something', len(owners))
        hold = self.quota_hold.until(
            owners,
            lambda: late_release.cloud_now(
                search.conn, search.retry, search.clock
            ),
        )
        for owner, until in sorted(hold.items()):
            LOG.info('%s', held_line(owner, until))
        findings = held_back(findings, self.kinds, hold)
        with contextlib.ExitStack() as held:
            mine, outcomes = self._lock(owners, held)
            if mine:
                outcomes.update(self._guarded(mine, lambda: findings, search))
        for owner, until in hold.items():
            done = outcomes.get(owner)
            if done is not None and done.state == CLEAN:
                outcomes[owner] = Outcome(
                    CLEAN, f'nothing left but its quota rows, until {until}'
                )
        return outcomes

    def _lock(
        self, owners: Sequence[str], held: contextlib.ExitStack
    ) -> tuple[list[str], dict[str, Outcome]]:
        """The owners whose locks this actor took (held until ``held``
        ends), and the LOCKED outcomes of the others."""
        mine = [o for o in owners if held.enter_context(self.locks.held(o))]
        return mine, {o: Outcome(LOCKED) for o in owners if o not in mine}

    def _guarded(
        self,
        owners: list[str],
        find: Callable[[], orphans.Findings],
        search: orphans.OrphanSearch,
    ) -> dict[str, Outcome]:
        """``_purge``, whatever goes wrong: a failure is an outcome. An
        owner whose Swift account could not be listed is never CLEAN nor
        PURGED: what it left there is unknown (the rest is purged)."""
        try:
            findings = find()
            log_clusters(findings)
            outcomes = self._purge(search, findings, owners)
            for owner, why in findings.unlisted.items():
                done = outcomes.get(owner)
                if done is not None and done.state in (CLEAN, PURGED):
                    outcomes[owner] = Outcome(FAILED, why)
            return outcomes
        except Exception as exc:  # reported, and tried again later
            if not isinstance(exc, CascadeError):
                LOG.exception('purge of %s failed', ', '.join(owners))
            return {o: Outcome(FAILED, one_line(exc)) for o in owners}

    def _purge(
        self,
        search: orphans.OrphanSearch,
        findings: orphans.Findings,
        owners: list[str],
    ) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        for owner, error in findings.unconfirmed.items():
            if owner in owners:
                outcomes[owner] = Outcome(
                    FAILED,
                    orphans.unconfirmed(owner, error, 'Nothing was purged'),
                )
        rest = [o for o in owners if o not in outcomes]
        sub = dataclasses.replace(only(findings, rest), unconfirmed={})
        plan = orphans.purge_plan(sub, self.kinds)
        steps = Counter(s.target.project_id for s in plan.steps.values())
        for owner in rest:
            if not steps[owner]:
                outcomes[owner] = Outcome(CLEAN, 'nothing left')
        if not plan.steps:
            return outcomes
        LOG.info(
            'plan for %s: %d step(s) (%s)',
            ', '.join(p['id'] for p in plan.projects),
            len(plan.steps),
            _counts(plan),
        )
        if self.dry_run:
            for step in plan.steps.values():
                LOG.info('dry run: would %s', step.describe())
            for owner in steps:
                outcomes[owner] = Outcome(
                    DRY, f'{steps[owner]} step(s) not run'
                )
            return outcomes
        if self._stopping.is_set():
            raise CascadeError('stopping: nothing was purged')
        # time has passed since the search: each owner is proven gone
        # again; one that cannot be is left (failed), not the others
        sub, notes = search.reconfirm(sub)
        for note in notes:
            LOG.warning('note: %s', note)
        for owner, why in orphans.not_purged(
            dataclasses.replace(sub, unlisted={})
        ).items():
            outcomes[owner] = Outcome(FAILED, why)
        plan = orphans.purge_plan(sub, self.kinds)
        planned = Counter(s.target.project_id for s in plan.steps.values())
        for owner in steps:
            if not planned[owner] and owner not in outcomes:
                outcomes[owner] = Outcome(CLEAN, 'the project exists again')
        if plan.steps:
            outcomes.update(self._run(search, plan))
        return outcomes

    def _run(
        self, search: orphans.OrphanSearch, plan: Plan
    ) -> dict[str, Outcome]:
        started, origin = report.utcnow(), self.clock.now()
        error = ''
        try:
            result = search.purge(
                plan,
                parallel=self.parallel,
                timeout=self.timeout,
                on_event=_log_event,
            )
        except Interrupted as exc:
            result = search.result  # what it did before it stopped
            error = one_line(exc)
        self._record(search, plan, result, started, origin, error)
        outcomes = {}
        for owner, (ran, bad) in orphans.not_done_by_owner(
            plan, result
        ).items():
            if not bad:
                outcomes[owner] = Outcome(PURGED, f'{ran} step(s) done')
            else:
                first = bad[0]
                outcomes[owner] = Outcome(
                    FAILED,
                    f'{len(bad)} of {ran} step(s) not done; first: '
                    f'{first.step.describe()}: {first.outcome}: '
                    f'{first.error}',
                )
        return outcomes


def log_clusters(findings: orphans.Findings) -> None:
    """Which Kubernetes clusters of deleted projects left what the purge
    deletes, as their controllers named it (``workflows.k8s``)."""
    found = clusters_of(o.ref for o in findings.orphans)
    for (project, cluster), count in sorted(found.items()):
        LOG.info(
            'project %s: %d resource(s) of Kubernetes %s',
            project,
            count,
            cluster,
        )
