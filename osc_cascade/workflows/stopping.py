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

"""A workflow stopped by a signal (``v1.common.stoppable``), politely.

The signal handler calls ``Stop`` with the signal: the executor under way
(``running``) starts nothing more and returns what it did, and the
workflow stops at its next safe point (``check``), where what it changed
is consistent (a record written, a service restored), with ``Interrupted``
saying what was done and how a re-run finishes the job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
import contextlib
import signal
import threading
from typing import Any

from osc_cascade.api import workers as workers_mod
from osc_cascade.engine.errors import Interrupted
from osc_cascade.engine.executor import (
    DONE,
    INTERRUPTED,
    Event,
    Executor,
    StepResult,
)
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.retry import Clock, RetryPolicy


class Stop:
    """Called from a signal handler; read by the workflow."""

    def __init__(self) -> None:
        #: the signal that asked to stop, if one did
        self.signum: int | None = None
        #: set with the signal: a pause (``Clock.pause``) ends at once
        self.event = threading.Event()
        self._executor: Any = None

    def __call__(self, signum: int) -> None:
        self.signum = signum
        self.event.set()
        if self._executor is not None:
            self._executor.stop()

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @contextlib.contextmanager
    def running(self, executor: Any) -> Iterator[Any]:
        """While the block runs the executor, a signal stops it too (one
        that came before the block stops it before its first step)."""
        self._executor = executor
        if self.requested:
            executor.stop()
        try:
            yield executor
        finally:
            self._executor = None

    @contextlib.contextmanager
    def workers(self, conn: Any, options: Any, steps: int) -> Iterator[Any]:
        """The run's worker processes (``api.workers``) while the block
        runs, as many as ``options.workers`` says for a plan of ``steps``:
        one that ends stops the run as a SIGTERM does."""
        count = workers_mod.how_many(options.workers, steps)
        with workers_mod.running(
            conn,
            count,
            options.parallel,
            on_lost=lambda why: self(signal.SIGTERM),
        ) as pool:
            yield pool

    def error(self, said: str) -> Interrupted:
        """The interruption, with what was done and what a re-run does."""
        assert self.signum is not None
        name = signal.Signals(self.signum).name
        return Interrupted(f'Interrupted ({name}): {said}', self.signum)

    def check(self, said: str) -> None:
        """At a safe point: raise the interruption if one was asked."""
        if self.requested:
            raise self.error(said)


class PausingClock(Clock):
    """A clock whose sleeps end as soon as a stop is asked: for the waits
    that only know ``sleep`` (``retry.wait_until``)."""

    def __init__(self, clock: Clock, stop: Stop):
        self.clock, self.stop = clock, stop

    def now(self) -> float:
        return self.clock.now()

    def sleep(self, seconds: float) -> None:
        self.clock.pause(seconds, self.stop.event)

    def pause(self, seconds: float, stop: threading.Event) -> None:
        self.clock.pause(seconds, stop)


def steps_done(results: Iterable[StepResult]) -> str:
    """'N step(s) done; M interrupted or not started'."""
    results = list(results)
    done = sum(r.outcome == DONE for r in results)
    left = sum(r.error.startswith(INTERRUPTED) for r in results)
    return f'{done} step(s) done; {left} interrupted or not started'


def run_plan(
    conn: Any,
    plan: Plan,
    kinds: Mapping[str, Any],
    *,
    parallel: int,
    timeout: float,
    retry: RetryPolicy,
    clock: Clock,
    on_event: Callable[[Event], None] | None,
    stop: Stop | None,
    regions: Any = None,
) -> Any:
    """Run ``plan`` on the cascade's executor; ``stop`` (a signal) ends it
    before its next step."""
    executor = Executor(
        conn,
        kinds,
        parallel=parallel,
        timeout=timeout,
        retry=retry,
        clock=clock,
        on_event=on_event,
        regions=regions,
    )
    with stop.running(executor) if stop else contextlib.nullcontext():
        return executor.run(plan)


def run_round(workflow: Any, plan: Plan) -> Any:
    """One round of a cascade (project or user) on its own connection,
    kinds, options, regions and ``Stop``."""
    return run_plan(
        workflow.conn,
        plan,
        workflow.kinds,
        parallel=workflow.options.parallel,
        timeout=workflow.options.timeout,
        retry=workflow.retry,
        clock=workflow.clock,
        on_event=workflow.on_event,
        stop=workflow.stop,
        regions=workflow.regions,
    )
