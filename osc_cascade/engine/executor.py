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

"""Schedules a plan's steps: which step runs when, on which thread.

Each step starts as soon as every step before it is done (not in waves by
type), with at most ``parallel`` API calls in flight (a step that waits for
an asynchronous delete, or backs off, holds none, nor any of the threads
that the steps making calls need). When more calls to a
service are ready than it has slots free, those at the head of the longest
chain still to run go first: they set how long the whole run takes. A
failed step fails nothing else but the steps that must come after it,
which are skipped, so a run that died half-way can be run again and
finishes the job.
How one step runs (its calls, retries and waits) is ``running``'s; what a
run reports, ``events``'. The API slots are per service, each sized by
what the service answers, and a service with a ``rate_limit``
(clouds.yaml's, or ``--rate-limit``) gets its calls, polls included,
spaced out to at most that many per second (see ``limiter``).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
import concurrent.futures
import contextlib
import heapq
import itertools
import queue
import threading
from typing import Any

from osc_cascade.engine import events
from osc_cascade.engine.events import (
    FAILED,
    INTERRUPTED,
    KEPT,
    SKIPPED,
    STUCK,
    Event,
    RunResult,
    StepResult,
)
from osc_cascade.engine.heap import with_few_collections
from osc_cascade.engine.limiter import INITIAL_LIMIT
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import KEEP
from osc_cascade.engine.running import StepRunner
from osc_cascade.kinds.base import ResourceKind

#: ``events``' too, named here for the workflows that import them from
#: here with the outcomes the executor uses
DONE, DRAIN, ROUND, PROJECT = (
    events.DONE,
    events.DRAIN,
    events.ROUND,
    events.PROJECT,
)

#: numbers the executors' runs, for ``Event.run``
_RUNS = itertools.count(1)

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


class Executor(StepRunner):
    """Schedules a plan's steps (``run``) on threads that run them
    (``StepRunner.run_step``), and reports their events (``emit``)."""

    def __init__(
        self,
        conn: Any,
        kinds: Mapping[str, ResourceKind],
        *,
        on_event: Callable[[Event], None] | None = None,
        **options: Any,
    ):
        """``options``: ``StepRunner``'s (parallel, timeout, retry, clock,
        regions)."""
        super().__init__(conn, kinds, **options)
        self._on_event = on_event or (lambda event: None)
        self._event_lock = threading.Lock()
        #: the run under way, for its events: its number and size
        self._run_number, self._planned = 0, 0

    def emit(self, event: Event) -> None:
        with self._event_lock:
            event.run, event.planned = self._run_number, self._planned
            self._on_event(event)

    @with_few_collections
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
                    blocked = result.outcome in (FAILED, SKIPPED, KEPT, STUCK)
                    if blocked and (step_id, nxt) not in plan.soft_edges:
                        if nxt not in results:
                            # recorded now so that no other path queues it
                            results[nxt] = StepResult(
                                plan.steps[nxt],
                                SKIPPED,
                                error=(
                                    f'after {result.step.target.label()}, '
                                    'which is stuck'
                                    if result.outcome == STUCK
                                    else f'after {result.step.describe()}, '
                                    f'which was {result.outcome}'
                                ),
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
                                step,
                                STUCK if step.params.get('stuck') else KEPT,
                                error=step.params.get('reason', ''),
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
