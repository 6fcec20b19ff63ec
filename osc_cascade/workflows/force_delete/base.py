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


"""The state and the calls every part of a force-delete shares: retried
lookups, waits that a signal ends, the stack's presence, the stop."""

from __future__ import annotations

from collections.abc import Callable, Iterable
import datetime
from typing import Any

from osc_cascade.api import heat
from osc_cascade.engine.executor import Event
from osc_cascade.engine.retry import Clock, RetryPolicy, checked, wait_until
from osc_cascade.workflows.clusters.records import (
    NEEDS,
    ClusterRecord,
    StackRecord,
)
from osc_cascade.workflows.clusters.services import ClusterService
from osc_cascade.workflows.clusters.stuck import utcnow
from osc_cascade.workflows.force_delete.outcome import (
    ForceDeleteOptions,
    ForceDeleteOutcome,
)
from osc_cascade.workflows.stopping import PausingClock, Stop


class ForceDeleteBase:
    """What each part of a force-delete shares: the cloud, the options,
    the retried calls and waits, the stop."""

    def __init__(
        self,
        conn: Any,
        services: Iterable[ClusterService],
        options: ForceDeleteOptions | None = None,
        *,
        notify: Callable[[str], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        on_plan: Callable[[int], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        now: Callable[[], datetime.datetime] = utcnow,
    ):
        self.conn = conn
        self.services = {s.service: s for s in services}
        self.options = options or ForceDeleteOptions()
        self.notify = notify or (lambda text: None)
        self.on_event = on_event
        #: told the number of steps of each leftover plan before it runs
        self.on_plan = on_plan or (lambda steps: None)
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.now = now
        #: a signal stops the force-delete at its next safe point
        #: (``interrupt``)
        self.stop = Stop()
        #: the outcomes of the last ``run_all``, also when interrupted
        self.outcomes: list[ForceDeleteOutcome] = []

    def _checked(self, what: str, call: Callable[[], Any]) -> Any:
        """Lookups and the cluster's normal delete, which a second try
        cannot harm, retried while they may pass (the abandon is not made
        through here)."""
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=NEEDS
        )

    def _wait(
        self, check: Callable[[], bool], seconds: float, *, stopped: str
    ) -> bool:
        """``check()`` until true or ``seconds`` have passed; a signal
        ends the wait with ``Interrupted``, ``stopped`` saying where the
        cluster was left."""

        def check_or_stop() -> bool:
            self.stop.check(stopped)
            return check()

        return wait_until(
            check_or_stop,
            seconds,
            retry=self.retry,
            clock=PausingClock(self.clock, self.stop),
        )

    def interrupt(self, signum: int) -> None:
        """Stop (from a signal handler): no cluster is started or
        abandoned after it, a wait ends at once, a deletion of leftovers
        starts no more steps; each manifest stays consistent with what was
        done, so that a re-run finishes the job."""
        self.stop(signum)

    def _stack_gone(self, stack: StackRecord) -> bool:
        return (
            self._checked(
                f'checking stack {stack.name}',
                lambda: heat.get_stack(self.conn, stack.name, stack.id),
            )
            is None
        )

    @staticmethod
    def _resume_hint(cluster: ClusterRecord, path: str) -> str:
        """Where an interrupted cluster was left once its stack was
        abandoned, and what finishes the job."""
        return (
            f'{cluster.label()}: its stack was abandoned; {path} lists what '
            f'it left and what of it was deleted; `openstack cluster '
            f'force-delete --delete-leftovers --manifest {path}` deletes '
            f'the rest'
        )
