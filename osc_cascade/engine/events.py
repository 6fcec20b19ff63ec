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
"""What a run reports: each step's outcome (``StepResult``), the events
as they happen (``Event``: a step started, retried or ended, and what a
workflow says beside its runs), and a run's results (``RunResult``).
"""

from __future__ import annotations

from collections.abc import Mapping
import dataclasses
from typing import Any

from osc_cascade.engine.resource import Step

DONE = 'done'
#: why what was not started when the run was stopped is skipped
INTERRUPTED = 'interrupted'
FAILED = 'failed'
SKIPPED = 'skipped'
KEPT = 'kept'
#: a resource its service will not delete from its state (``Stuck``)
STUCK = 'stuck'
#: what a workflow reports besides its executors' steps (``Event.kind``):
#: a project drained (disabled, quotas frozen), a verification round's
#: discovery (``planned``: what it found), a project deleted or not
DRAIN = 'drain'
ROUND = 'round'
PROJECT = 'project'
#: a workflow's next part begins (the domain cascade's users): its first
#: run is that part's (``message``: its name), not a verification round
PHASE = 'phase'


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
            elif r.outcome in (FAILED, STUCK):
                row[3] += 1
            else:
                row[4] += 1
        return [(k, reg, *v) for (k, reg), v in sorted(table.items())]
