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

"""The reaper's loop: deleted projects purged after their grace period,
failures tried again with backoff, the periodic sweep.

``deleted()`` is called by the listener's threads; everything else runs
in the one thread of ``run()`` (or of ``tick()``, which a test drives
with a fake clock). A failed purge is never dropped: it waits
``retry_delay``, doubled at each failure up to ``retry_max_delay``, and
each failure is logged as an error. The schedule lives in memory: what a
stopped reaper had not purged yet is found by the next sweep (of any
reaper), since its owner is gone.
"""

from __future__ import annotations

import dataclasses
import logging
import threading

from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.reaper.schedule import Entry, Schedule
from osc_cascade.reaper.sweep import DRY, FAILED, LOCKED, Outcome, Purger

LOG = logging.getLogger(__name__)

#: the longest the loop sleeps with nothing to do (a stop or a new
#: deletion wakes it at once)
IDLE = 60.0


@dataclasses.dataclass(frozen=True)
class Timing:
    grace_period: float = 300.0
    #: 0: no sweep
    sweep_interval: float = 3600.0
    retry_delay: float = 60.0
    retry_max_delay: float = 3600.0
    lock_retry_delay: float = 60.0
    batch_size: int = 50

    @property
    def retry(self) -> RetryPolicy:
        """The engine's backoff, at the reaper's pace: the wait after
        ``n`` failed purges is ``retry.delay(n)``."""
        return RetryPolicy(
            base_delay=self.retry_delay, max_delay=self.retry_max_delay
        )


class Reaper:
    def __init__(
        self,
        purger: Purger,
        timing: Timing | None = None,
        *,
        clock: Clock | None = None,
    ):
        self.purger = purger
        self.timing = timing or Timing()
        self.clock = clock or Clock()
        self.schedule = Schedule()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._next_sweep = (
            self.clock.now() if self.timing.sweep_interval else None
        )

    # -- from the listener ------------------------------------------------

    def deleted(self, project_id: str, why: str = '') -> None:
        if self.stopped:
            LOG.info(
                'project %s deleted (%s): stopping, left to the next sweep',
                project_id,
                why,
            )
            return
        grace = self.timing.grace_period
        entry = Entry(project_id, self.clock.now() + grace)
        if self.schedule.add(entry):
            LOG.info(
                'project %s deleted (%s): purge in %gs', project_id, why, grace
            )
            self._wake.set()
        else:
            LOG.info(
                'project %s deleted (%s): already waiting for its purge',
                project_id,
                why,
            )

    # -- the loop ---------------------------------------------------------

    def stop(self) -> None:
        """From a signal: nothing more starts, a purge under way stops."""
        self._stop.set()
        self._wake.set()
        self.purger.stop()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        while not self.stopped:
            self._wake.clear()
            wait = self.tick()
            if wait > 0 and not self.stopped:
                self.clock.pause(wait, self._wake)

    def tick(self) -> float:
        """Do what is due; the seconds until something else is due."""
        now = self.clock.now()
        due = self.schedule.pop_due(now, self.timing.batch_size)
        if due and not self.stopped:
            outcomes = self.purger.purge([e.project_id for e in due])
            for entry in due:
                self._settle(entry, outcomes[entry.project_id])
        if (
            self._next_sweep is not None
            and self._next_sweep <= now
            and not self.stopped
        ):
            self._sweep()
            self._next_sweep = now + self.timing.sweep_interval
        waits = [IDLE]
        for at in (self.schedule.next_due(), self._next_sweep):
            if at is not None:
                waits.append(at - self.clock.now())
        return max(0.0, min(waits))

    def _sweep(self) -> None:
        LOG.info('sweep: searching every service for orphans')
        try:
            outcomes = self.purger.sweep(skip=self.schedule.ids())
        except Exception as exc:  # the next sweep tries again
            LOG.error(
                'sweep failed: %s; next one in %gs',
                exc,
                self.timing.sweep_interval,
            )
            return
        for owner, outcome in sorted(outcomes.items()):
            if outcome.state == LOCKED:
                LOG.info('sweep: project %s is held by another actor', owner)
            else:
                self._settle(Entry(owner, self.clock.now()), outcome)

    def _settle(self, entry: Entry, outcome: Outcome) -> None:
        owner = entry.project_id
        now = self.clock.now()
        if outcome.state == LOCKED:
            delay = self.timing.lock_retry_delay
            LOG.info(
                'project %s is held by another actor: tried again in %gs',
                owner,
                delay,
            )
            self._again(dataclasses.replace(entry, due=now + delay))
        elif outcome.state == FAILED:
            failures = entry.failures + 1
            delay = self.timing.retry.delay(failures)
            LOG.error(
                'project %s: purge failed (%d time(s)): %s; tried again in '
                '%gs',
                owner,
                failures,
                outcome.detail,
                delay,
            )
            self._again(Entry(owner, now + delay, failures))
        elif outcome.state == DRY:
            LOG.info('project %s: dry run: %s', owner, outcome.detail)
        else:
            LOG.info(
                'project %s: %s: %s', owner, outcome.state, outcome.detail
            )

    def _again(self, entry: Entry) -> None:
        if not self.stopped:
            # a notification that came meanwhile is waiting already
            self.schedule.add(entry)
