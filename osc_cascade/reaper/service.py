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

The quotas a cascade without ``--settle`` left frozen (issue #29, item 8:
the quota rows outlive the project and refuse what a token still in a
service's cache would create) are released (``release``,
``workflows.late_release.QuotaRelease``) only by a purge that finds
nothing left, and only once the token cache window has passed since the
reaper learned that the project is gone: after the grace period of a
notification (which is to be at least that window), or a grace period
after the sweep found the owner (its delete may be seconds old). A purge
that deleted something is followed by another one (``retry_delay`` later)
before the release.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import logging
import threading

from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.reaper.schedule import Entry, Schedule
from osc_cascade.reaper.sweep import (
    CLEAN,
    DRY,
    FAILED,
    LOCKED,
    PURGED,
    Outcome,
    Purger,
)
from osc_cascade.workflows.late_release import StillThere

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
        release: Callable[[str], str] | None = None,
    ):
        self.purger = purger
        self.timing = timing or Timing()
        self.clock = clock or Clock()
        #: resets a deleted project's frozen quotas (what it did); None:
        #: they are left as they are
        self.release = release
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
            elif (
                outcome.state in (CLEAN, PURGED)
                and self.release is not None
                and not self.stopped
            ):
                # its delete may be seconds old: the release waits a grace
                # period, for a purge then
                LOG.info(
                    'project %s: %s: %s; purged again (and its quotas '
                    'released) in %gs',
                    owner,
                    outcome.state,
                    outcome.detail,
                    self.timing.grace_period,
                )
                self._again(
                    Entry(owner, self.clock.now() + self.timing.grace_period)
                )
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
        elif outcome.state == PURGED and self.release is not None:
            delay = self.timing.retry_delay
            LOG.info(
                'project %s: %s: %s; purged again in %gs before its quotas '
                'are released',
                owner,
                outcome.state,
                outcome.detail,
                delay,
            )
            self._again(Entry(owner, now + delay))
        elif outcome.state == CLEAN and self.release is not None:
            self._release(entry, outcome)
        else:
            LOG.info(
                'project %s: %s: %s', owner, outcome.state, outcome.detail
            )

    def _release(self, entry: Entry, outcome: Outcome) -> None:
        """Nothing of the project is left, its window has passed: its
        frozen quotas go. A failure is tried again as a failed purge."""
        owner = entry.project_id
        LOG.info('project %s: %s: %s', owner, outcome.state, outcome.detail)
        if self.purger.dry_run:
            LOG.info('project %s: dry run: would release its quotas', owner)
            return
        if self.stopped or self.release is None:
            return
        try:
            LOG.info('%s', self.release(owner))
        except StillThere as exc:
            LOG.warning('%s', exc)
        except Exception as exc:  # tried again, as a failed purge
            self._settle(entry, Outcome(FAILED, str(exc)))

    def _again(self, entry: Entry) -> None:
        if not self.stopped:
            # a notification that came meanwhile is waiting already
            self.schedule.add(entry)
