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

"""``--report-file``: what a cascade did, step by step, as JSON.

For benchmarks and post-mortems: the plan that ran (steps and edges), and
for each round each step's outcome, seconds (of which ``queued``: waiting
for a free API slot), attempts and start (seconds after the execution
began), with the time of each phase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import json
from typing import Any

from osc_cascade.engine import planfile

REPORT_FORMAT_VERSION = 1


def step_rows(run: Any, origin: float) -> list[dict[str, Any]]:
    rows = []
    for step_id, r in sorted(run.results.items()):
        rows.append(
            {
                'id': step_id,
                'kind': r.step.target.kind,
                'region': r.step.target.region,
                'action': r.step.action,
                'outcome': r.outcome,
                'seconds': round(r.seconds, 4),
                'queued': round(r.queued, 4),
                'attempts': r.attempts,
                'started': (
                    None if r.started is None else round(r.started - origin, 4)
                ),
                'error': r.error,
            }
        )
    return rows


def build(
    plan: Any,
    runs: Sequence[Any],
    *,
    parallel: int,
    phases: Mapping[str, float],
    origin: float,
    error: str = '',
) -> dict[str, Any]:
    """``plan`` is the plan of the first round (without the projects),
    ``runs`` the RunResults of each round, ``origin`` the clock reading
    when the execution began."""
    return {
        'format': REPORT_FORMAT_VERSION,
        'projects': list(plan.projects),
        'parallel': parallel,
        'phases': {k: round(v, 4) for k, v in phases.items()},
        'plan': planfile.to_dict(plan),
        'rounds': [step_rows(run, origin) for run in runs],
        'ok': not error and all(run.ok for run in runs),
        'error': error,
    }


def write(path: str, report: Mapping[str, Any]) -> None:
    with open(path, 'w') as f:
        json.dump(report, f, indent=1, sort_keys=True)
