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

"""Runs a plan against the cloud.

Each step starts as soon as every step before it is done (not in waves by
type), with at most ``parallel`` API calls in flight (a step that waits for
an asynchronous delete, or backs off, holds none, nor any of the threads
that the steps making calls need). When more calls to a
service are ready than it has slots free, those at the head of the longest
chain still to run go first: they set how long the whole run takes. A
step's delete is retried with exponential backoff while the cloud answers
"in use" (409), 429, 5xx or a connection error; then the step polls,
backing off, until the resource is gone or reaches an error state. A 404
on delete counts as done, so a run that died half-way can be run again and
finishes the job. A kind may decline a delete when it comes to it
(``errors.Kept``: its resource is no longer the project's to delete, see
``ResourceKind.recheck``): the step is kept, not retried. A failed or kept
step fails nothing else but the steps that must come after it, which are
skipped.
The API slots are per service, each sized by what the service answers, and
a service with a ``rate_limit`` (clouds.yaml's, or ``--rate-limit``) gets
its calls, polls included, spaced out to at most that many per second (see
``limiter``).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
import concurrent.futures
import contextlib
import dataclasses
import heapq
import itertools
import queue
import threading
from typing import Any

from osc_cascade.engine.errors import Kept, one_line
from osc_cascade.engine.limiter import INITIAL_LIMIT, Limiter
from osc_cascade.engine.listing import UNLISTED, SharedListing
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import KEEP, ResourceRef, Step
from osc_cascade.engine.retry import Clock, RetryPolicy, is_gone, is_transient
from osc_cascade.kinds.base import GONE, ResourceKind

DONE = 'done'
#: why what was not started when the run was stopped is skipped
INTERRUPTED = 'interrupted'
FAILED = 'failed'
SKIPPED = 'skipped'
KEPT = 'kept'
#: what a workflow reports besides its executors' steps (``Event.kind``):
#: a project drained (disabled, quotas frozen), a verification round's
#: discovery (``planned``: what it found), a project deleted or not
DRAIN = 'drain'
ROUND = 'round'
PROJECT = 'project'


@dataclasses.dataclass
class StepResult:
    step: Step
    outcome: str
    seconds: float = 0.0
    attempts: int = 0
    error: str = ''
    #: the clock's reading when the step started (None: it never ran)
    started: float | None = None
    #: of ``seconds``, how long the step waited for a free API slot: our
    #: concurrency limit, not the cloud
    queued: float = 0.0


class StepFailed(Exception):
    def __init__(self, message: str, attempts: int = 0):
        super().__init__(message)
        #: the calls made before giving up (0: not known here)
        self.attempts = attempts


@dataclasses.dataclass
class Event:
    """What the executor reports: ``started``, ``retry`` or a
    final outcome (``done``, ``failed``, ``skipped``, ``kept``); what a
    workflow reports: ``drain``, ``round`` (no step) or ``project``."""

    kind: str
    step: Step | None
    message: str = ''
    result: StepResult | None = None
    #: which run of an executor it comes from (1, 2, ...: a cascade's
    #: verification rounds are runs of their own); 0: from no run (a
    #: workflow's own event)
    run: int = 0
    #: how many steps that run has: a progress total grows by it
    planned: int = 0
    #: of a ``retry``, the attempt that failed
    attempt: int = 0


#: numbers the executors' runs, for ``Event.run``
_RUNS = itertools.count(1)


class RunResult:
    def __init__(
        self,
        results: Mapping[str, StepResult],
        slots: Mapping[str, Mapping[str, Any]] | None = None,
    ):
        self.results = dict(results)
        #: per service, its API slots at the end and how they moved
        #: (``Limiter.limits``): for the run's record
        self.slots = dict(slots or {})

    @classmethod
    def merge(cls, runs: list[RunResult]) -> RunResult:
        """One result per resource over several rounds: the last word on
        each (a delete that failed in round 1 and was done in round 2 is
        done)."""
        merged: dict[str, StepResult] = {}
        for run in runs:
            merged.update(run.results)
        return cls(merged)

    @property
    def ok(self) -> bool:
        return all(r.outcome in (DONE, KEPT) for r in self.results.values())

    def by_outcome(self, outcome: str) -> list[StepResult]:
        return [r for r in self.results.values() if r.outcome == outcome]

    def summary(self) -> list[tuple[str, str, int, int, int, int, int]]:
        """Per kind and region: (kind, region, deleted, actions, kept,
        failed, skipped): resources deleted apart from the break actions
        done on them (a router's interfaces removed), and what was kept."""
        table: dict[tuple[str, str], list[int]] = {}
        for r in self.results.values():
            ref = r.step.target
            row = table.setdefault((ref.kind, ref.region), [0] * 5)
            if r.outcome == DONE:
                row[1 if r.step.is_break_action else 0] += 1
            elif r.outcome == KEPT:
                row[2] += 1
            elif r.outcome == FAILED:
                row[3] += 1
            else:
                row[4] += 1
        return [(k, reg, *v) for (k, reg), v in sorted(table.items())]


#: threads per API slot for the steps that are awake (calling, or waiting
#: for a slot or a shared listing): more than one, so that the next calls
#: are ready when slots free up
THREADS_PER_SLOT = 8
#: threads for the steps asleep between the polls of an asynchronous
#: delete or in a backoff, beyond those: a sleeping step holds no API slot
#: and counts against no service's threads (measured on the simulated
#: cloud at N=1,000: when they did, ready steps waited 9.5 s on average
#: behind steps that only waited for their deletes)
SLEEPING_THREADS = 1024


#: the weight of an asynchronous delete in a chain, against 1 for a call
#: that is done when it answers: a call, then polls that back off from
#: 0.5 s (measured at N=100: a server's delete 5.6 s, a port's 0.1 s)
ASYNC_WEIGHT = 4


def priorities(
    plan: Plan, kinds: Mapping[str, ResourceKind]
) -> dict[str, float]:
    """Per step, the weight of the heaviest chain from it to the end of the
    plan (itself included): list scheduling by this "height" starts the
    long chains first."""
    succs = plan.successors()
    height: dict[str, float] = {}
    for step_id in reversed(plan.order()):
        step = plan.steps[step_id]
        kind = kinds.get(step.target.kind)
        slow = (
            step.is_delete and kind is not None and not kind.synchronous_delete
        )
        height[step_id] = (ASYNC_WEIGHT if slow else 1) + max(
            (height[n] for n in succs[step_id]), default=0
        )
    return height


class Executor:
    def __init__(
        self,
        conn: Any,
        kinds: Mapping[str, ResourceKind],
        *,
        parallel: int = 10,
        timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
        on_event: Callable[[Event], None] | None = None,
        regions: Regions | None = None,
    ):
        if parallel < 1:
            raise ValueError('parallel must be at least 1')
        self.conn = conn
        #: the connection to each step's region (without: ``conn`` for all)
        self.regions = regions
        self.kinds = kinds
        self.parallel = parallel
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.clock = clock or Clock()
        self._on_event = on_event or (lambda event: None)
        self._event_lock = threading.Lock()
        #: set by stop(): start nothing more, give up retries and polls
        self._stopping = threading.Event()
        #: per service, its API slots and rate; at most ``parallel`` calls
        #: in flight in all; sleeps (backoff, polling) happen outside
        self.limiter = Limiter(conn, parallel, self.clock, self._stopping)
        self._priority: dict[str, float] = {}
        self._listings: dict[tuple[str, str, str], SharedListing] = {}
        self._listings_lock = threading.Lock()
        #: orders deletes and listings across threads (a clock may tie)
        self._sequence = itertools.count().__next__
        #: the run under way, for its events: its number and size
        self._run_number, self._planned = 0, 0
        #: per service, its steps asleep now (``_sleep``); the run's loop
        #: is woken through ``_wakeups`` when one falls asleep while ready
        #: steps wait for threads (``_short_of_threads``), and only then:
        #: woken for nothing, it takes the interpreter from the steps
        self._asleep: collections.Counter[tuple[str, str]]
        self._asleep = collections.Counter()
        self._asleep_lock = threading.Lock()
        self._wakeups: queue.SimpleQueue = queue.SimpleQueue()
        self._short_of_threads = False

    def _service(self, step: Step) -> tuple[str, str]:
        """Whose API slots the step's calls take: (service type, region)."""
        kind = self.kinds.get(step.target.kind)
        return (kind.service_type if kind else '', step.target.region)

    def _sleep(self, step: Step, seconds: float) -> None:
        """Pause the step (a backoff, or between polls) as asleep: the
        run may start another step on the threads it counted for it."""
        service = self._service(step)
        with self._asleep_lock:
            self._asleep[service] += 1
        if self._short_of_threads:
            self._wakeups.put(None)
        try:
            self.clock.pause(seconds, self._stopping)
        finally:
            with self._asleep_lock:
                self._asleep[service] -= 1

    def _conn(self, ref: ResourceRef) -> Any:
        if self.regions is None:
            return self.conn
        return self.regions.connection(ref.region)

    def stop(self) -> None:
        """Stop the run (from a signal handler): nothing more starts, a
        call in flight ends within the API timeout, and the run returns
        what was done; the rest is skipped as interrupted."""
        self._stopping.set()

    @property
    def stopped(self) -> bool:
        return self._stopping.is_set()

    def emit(self, event: Event) -> None:
        with self._event_lock:
            event.run, event.planned = self._run_number, self._planned
            self._on_event(event)

    def run(self, plan: Plan) -> RunResult:
        self._run_number, self._planned = next(_RUNS), len(plan.steps)
        preds = plan.predecessors()
        succs = plan.successors()
        waiting = {s: len(p) for s, p in preds.items()}
        results: dict[str, StepResult] = {}
        self._priority = priorities(plan, self.kinds)
        order = {
            s: (-self._priority[s], i) for i, s in enumerate(plan.order())
        }

        def finish(step_id: str, result: StepResult, ready: list[str]) -> None:
            # a work list, not recursion: a failure at the head of a chain
            # of thousands of steps skips them all
            todo = [(step_id, result)]
            while todo:
                step_id, result = todo.pop()
                results[step_id] = result
                self.emit(
                    Event(result.outcome, result.step, result.error, result)
                )
                for nxt in sorted(
                    succs[step_id], key=order.__getitem__, reverse=True
                ):
                    blocked = result.outcome in (FAILED, SKIPPED, KEPT)
                    if blocked and (step_id, nxt) not in plan.soft_edges:
                        if nxt not in results:
                            # recorded now so that no other path queues it
                            results[nxt] = StepResult(
                                plan.steps[nxt],
                                SKIPPED,
                                error=f'after {result.step.describe()}, '
                                f'which was {result.outcome}',
                            )
                            todo.append((nxt, results[nxt]))
                        continue
                    waiting[nxt] -= 1
                    if waiting[nxt] == 0 and nxt not in results:
                        ready.append(nxt)

        def service_of(step_id: str) -> tuple[str, str]:
            return self._service(plan.steps[step_id])

        ready = [s for s, n in waiting.items() if n == 0]
        threads = self.parallel * THREADS_PER_SLOT

        def room(service: tuple[str, str]) -> int:
            """The threads the service's steps may hold: those of its
            slots (of INITIAL_LIMIT slots at least: a service whose slots
            shrank still has its asynchronous deletes waited for side by
            side), but never the last slot's worth, so that steps waiting
            for a saturated service leave threads to the others."""
            slots = max(self.limiter.size(*service), INITIAL_LIMIT)
            return min(
                slots * THREADS_PER_SLOT,
                max(THREADS_PER_SLOT, threads - THREADS_PER_SLOT),
            )

        # ready steps wait here, per service, not in the pool's first-come
        # queue: one on a longer chain that becomes ready later still gets
        # the next free thread first
        queues: dict[tuple[str, str], list[tuple[tuple[float, int], str]]]
        queues = {}
        busy: collections.Counter[tuple[str, str]] = collections.Counter()
        running: dict[concurrent.futures.Future, str] = {}

        def awake(service: tuple[str, str] | None = None) -> int:
            """The steps running and not asleep: of one service, or all."""
            with self._asleep_lock:
                if service is None:
                    return len(running) - sum(self._asleep.values())
                return busy[service] - self._asleep[service]

        with concurrent.futures.ThreadPoolExecutor(
            max_workers=threads + SLEEPING_THREADS,
            thread_name_prefix='cascade',
        ) as pool:
            while ready or running or any(queues.values()):
                while ready:
                    step_id = ready.pop()
                    if step_id in results:
                        continue
                    step = plan.steps[step_id]
                    if step.action == KEEP:
                        finish(
                            step_id,
                            StepResult(
                                step, KEPT, error=step.params.get('reason', '')
                            ),
                            ready,
                        )
                        continue
                    heapq.heappush(
                        queues.setdefault(service_of(step_id), []),
                        (order[step_id], step_id),
                    )
                while (
                    len(running) < threads + SLEEPING_THREADS
                    and awake() < threads
                ):
                    free = [
                        (q[0], service)
                        for service, q in queues.items()
                        if q and awake(service) < room(service)
                    ]
                    if not free:
                        break
                    service = min(free)[1]
                    _key, step_id = heapq.heappop(queues[service])
                    if step_id in results:
                        continue
                    if self.stopped:
                        finish(
                            step_id,
                            StepResult(
                                plan.steps[step_id], SKIPPED, error=INTERRUPTED
                            ),
                            ready,
                        )
                        continue
                    busy[service] += 1
                    # said here, not by the step's thread: the run's events
                    # come from this thread, but for a retry, and so seldom
                    # wait for the lock behind a step's thread
                    self.emit(Event('started', plan.steps[step_id]))
                    fut = pool.submit(self.run_step, plan.steps[step_id])
                    running[fut] = step_id
                    fut.add_done_callback(self._wakeups.put)
                if not running:
                    continue
                self._short_of_threads = any(queues.values())
                # a step done, or one fallen asleep (None): its thread
                # counts no more
                woken = [self._wakeups.get()]
                with contextlib.suppress(queue.Empty):
                    while True:
                        woken.append(self._wakeups.get_nowait())
                for fut in woken:
                    if fut is None or fut not in running:
                        continue
                    step_id = running.pop(fut)
                    busy[service_of(step_id)] -= 1
                    finish(step_id, fut.result(), ready)
        return RunResult(results, self.limiter.limits())

    # -- one step ----------------------------------------------------------

    def run_step(self, step: Step) -> StepResult:
        started = self.clock.now()
        deadline = started + self.timeout
        queue = _QueueTime()
        attempts = 0
        try:
            # inside the try: a step of an unknown kind (a plan file from
            # another version) fails alone instead of crashing the run
            kind = self.kinds.get(step.target.kind)
            if kind is None:
                raise StepFailed(f'no resource kind {step.target.kind}')
            if step.is_delete:
                self._run_parts(kind, step, deadline, queue)
                attempts = self._call(
                    kind,
                    step,
                    deadline,
                    queue,
                    lambda: kind.delete(self._conn(step.target), step.target),
                    'delete',
                )
                if attempts and not kind.synchronous_delete:
                    self._wait_gone(
                        kind, step, deadline, queue, since=self._sequence()
                    )
            else:
                attempts = self._call(
                    kind,
                    step,
                    deadline,
                    queue,
                    lambda: kind.apply(self._conn(step.target), step),
                    step.action,
                )
        except Kept as exc:  # the kind declined the delete (kinds.base)
            return StepResult(
                step,
                KEPT,
                self.clock.now() - started,
                attempts,
                str(exc),
                started,
                queue.seconds,
            )
        except StepFailed as exc:
            # _call raised before returning its count: the count is on exc
            return StepResult(
                step,
                FAILED,
                self.clock.now() - started,
                exc.attempts or attempts,
                str(exc),
                started,
                queue.seconds,
            )
        except Exception as exc:  # reported, never lost
            return StepResult(
                step,
                FAILED,
                self.clock.now() - started,
                attempts,
                one_line(exc),
                started,
                queue.seconds,
            )
        return StepResult(
            step,
            DONE,
            self.clock.now() - started,
            attempts,
            started=started,
            queued=queue.seconds,
        )

    @contextlib.contextmanager
    def _slot(self, step: Step, queue: _QueueTime, call: str | None):
        """A slot of the step's service for one ``call``, what is asked of
        the kind: its answers are compared with those to the same; None
        for a turn of the kind's parts, which often makes no call (neither
        rate limited nor measured)."""
        asked = self.clock.now()
        kind = self.kinds.get(step.target.kind)
        with self.limiter.hold(
            kind.service_type if kind is not None else '',
            step.target.region,
            self._priority.get(step.id, 0),
            None if call is None else (step.target.kind, call),
        ):
            queue.seconds += self.clock.now() - asked
            yield

    def _call(
        self,
        kind: ResourceKind,
        step: Step,
        deadline: float,
        queue: _QueueTime,
        call: Callable[[], None],
        what: str,
    ) -> int:
        """Make the call (``what``: its name for the limiter), retrying
        what may pass; returns the number of attempts, or 0 when the
        resource was already gone."""
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._slot(step, queue, what):
                    if self.stopped:  # while it waited for the slot
                        raise StepFailed(
                            f'{INTERRUPTED} before its call', attempt - 1
                        )
                    call()
                return attempt
            except (StepFailed, Kept):
                raise
            except Exception as exc:
                if is_gone(exc):
                    return 0
                if not (is_transient(exc) or kind.is_in_use(exc)):
                    raise StepFailed(one_line(exc), attempt) from exc
                if attempt >= self.retry.max_attempts:
                    raise StepFailed(
                        f'gave up after {attempt} attempts: {one_line(exc)}',
                        attempt,
                    ) from exc
                if self.stopped:
                    raise StepFailed(
                        f'{INTERRUPTED} before it could be retried: '
                        f'{one_line(exc)}',
                        attempt,
                    ) from exc
                delay = self.retry.delay(attempt)
                if self.clock.now() + delay > deadline:
                    raise StepFailed(
                        f'timed out after {self.timeout:g}s: {one_line(exc)}',
                        attempt,
                    ) from exc
                self.emit(
                    Event(
                        'retry',
                        step,
                        f'attempt {attempt} failed '
                        f'({one_line(exc)}); retrying in '
                        f'{delay:g}s',
                        attempt=attempt,
                    )
                )
                self._sleep(step, delay)

    def _run_parts(
        self,
        kind: ResourceKind,
        step: Step,
        deadline: float,
        queue: _QueueTime,
    ) -> None:
        """The kind's calls before its delete, each in a slot: at most
        ``parallel`` in flight, the next one taken from the generator (in
        a slot too: it may read a listing page) only when one is done."""
        parts = iter(kind.parts(self._conn(step.target), step.target))
        with self._slot(step, queue, None):
            part = next(parts, None)
        if part is None:
            return  # most kinds have none: no pool for them
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=self.parallel, thread_name_prefix='part'
        ) as pool:
            running: set[concurrent.futures.Future] = set()
            while part is not None:
                running.add(
                    pool.submit(
                        self._call, kind, step, deadline, queue, part, 'part'
                    )
                )
                if len(running) >= self.parallel:
                    done, running = concurrent.futures.wait(
                        running,
                        return_when=concurrent.futures.FIRST_COMPLETED,
                    )
                    for fut in done:
                        fut.result()  # a part that failed fails the step
                if self.stopped:
                    break
                with self._slot(step, queue, None):
                    part = next(parts, None)
            for fut in concurrent.futures.as_completed(running):
                fut.result()
        if self.stopped:
            raise StepFailed(f'{INTERRUPTED} before it was emptied')

    def _wait_gone(
        self,
        kind: ResourceKind,
        step: Step,
        deadline: float,
        queue: _QueueTime,
        since: int,
    ) -> None:
        delay = self.retry.poll_min
        transient_failures = 0
        while True:
            try:
                status, listed = self._poll(kind, step, queue, since)
                since = self._sequence()
            except Exception as exc:
                if is_gone(exc):
                    return
                if not is_transient(exc):
                    raise StepFailed(one_line(exc)) from exc
                transient_failures += 1
                if transient_failures >= self.retry.max_attempts:
                    raise StepFailed(
                        f'status checks kept failing: {one_line(exc)}'
                    ) from exc
                status, listed = 'unknown', False
            if status is GONE:
                return
            if status in kind.error_statuses:
                raise StepFailed(f'delete failed: status is {status}')
            if status in kind.unfinished_statuses:
                self._call(
                    kind,
                    step,
                    deadline,
                    queue,
                    lambda: kind.finish_delete(
                        self._conn(step.target), step.target
                    ),
                    'finish_delete',
                )
            if self.stopped:
                raise StepFailed(
                    f'{INTERRUPTED} while the delete was under way (status '
                    f'{status}): it may still finish; run again to check'
                )
            if self.clock.now() + delay > deadline:
                raise StepFailed(
                    f'timed out after {self.timeout:g}s '
                    f'waiting for the delete (status '
                    f'{status})'
                )
            self._sleep(step, delay)
            delay = min(
                self.retry.poll_listed_max if listed else self.retry.poll_max,
                delay * 2,
            )

    def _poll(
        self, kind: ResourceKind, step: Step, queue: _QueueTime, since: int
    ) -> tuple[Any, bool]:
        """(status, whether a shared listing answered) of a resource whose
        delete, or last poll, was the event numbered ``since``."""
        project_id = step.target.project_id
        if project_id:
            key = (kind.name, project_id, step.target.region)
            with self._listings_lock:
                listing = self._listings.get(key)
                if listing is None:
                    listing = self._listings[key] = SharedListing(
                        self._conn(step.target),
                        kind,
                        project_id,
                        self._sequence,
                    )
            status = listing.status_of(
                step.target.id,
                since,
                lambda: self._slot(step, queue, 'list_statuses'),
            )
            if status is not UNLISTED:
                return status, True
        with self._slot(step, queue, 'status'):
            return kind.status(self._conn(step.target), step.target), False


class _QueueTime:
    """Seconds one step has waited for API slots so far."""

    def __init__(self) -> None:
        self.seconds = 0.0
