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
"""Runs one step of a plan: its calls, each in an API slot of its service,
retried with exponential backoff while the cloud answers "in use" (409),
429, 5xx or a connection error; a delete's parts before it; and the wait,
polling and backing off, until an asynchronous delete is done or reaches
an error state. A 404 on delete counts as done. A kind may decline a
delete when it comes to it (``errors.Kept``: its resource is no longer the
project's to delete, see ``ResourceKind.recheck``): the step is kept, not
retried. Which step runs when is the executor's (``executor``).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
import concurrent.futures
import contextlib
import itertools
import queue
import threading
from typing import Any

from osc_cascade.engine.errors import Kept, Stuck, one_line
from osc_cascade.engine.events import (
    DONE,
    FAILED,
    INTERRUPTED,
    KEPT,
    STUCK,
    Event,
    StepResult,
)
from osc_cascade.engine.limiter import Limiter
from osc_cascade.engine.listing import UNLISTED, SharedListing
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.engine.retry import Clock, RetryPolicy, is_gone, is_transient
from osc_cascade.kinds.base import GONE, ResourceKind


class StepFailed(Exception):
    def __init__(self, message: str, attempts: int = 0):
        super().__init__(message)
        #: the calls made before giving up (0: not known here)
        self.attempts = attempts


class StepRunner:
    """Runs steps (``run_step``), any number at once from the executor's
    threads; the API slots, the shared listings and the steps asleep are
    theirs in common."""

    def __init__(
        self,
        conn: Any,
        kinds: Mapping[str, ResourceKind],
        *,
        parallel: int = 10,
        timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
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
        """Report a step's event (a retry): the executor's, which says
        which run it comes from."""
        raise NotImplementedError

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
                attempts = self._call_with_retries(
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
                attempts = self._call_with_retries(
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
        except Stuck as exc:  # refused from a state waiting will not change
            return StepResult(
                step,
                STUCK,
                self.clock.now() - started,
                attempts or 1,
                str(exc),
                started,
                queue.seconds,
            )
        except StepFailed as exc:
            # raised before the count was returned: the count is on exc
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

    def _call_with_retries(
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
            except (StepFailed, Kept, Stuck):
                raise
            except Exception as exc:
                if is_gone(exc):
                    return 0
                if what == 'delete':
                    # one GET, only where the kind has states its service
                    # refuses to delete from and the answer is a refusal
                    why = kind.stuck_now(self._conn(step.target), step, exc)
                    if why:
                        raise Stuck(why) from exc
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
                        self._call_with_retries,
                        kind,
                        step,
                        deadline,
                        queue,
                        part,
                        'part',
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
            if status in kind.stuck_statuses:
                # accepted, then left in a state it will not leave alone
                raise Stuck(kind.stuck_reason(step.target, status))
            if status in kind.error_statuses:
                raise StepFailed(f'delete failed: status is {status}')
            if status in kind.unfinished_statuses:
                self._call_with_retries(
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
