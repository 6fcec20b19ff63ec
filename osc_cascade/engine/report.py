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

"""The record of a real run, as JSON: what it did, step by step.

Every real run writes one (``--report-file``, or by default a new file in
the user's state directory; ``--no-report``: none), for post-mortems,
audits and benchmarks: who ran it (the user and project of the token),
the command, the cloud and its regions, when it began and ended, the plan
that ran (steps and edges), and for each round each step's outcome,
seconds (of which ``queued``: waiting for a free API slot), attempts and
start (seconds after the execution began), and each service's API slots
(how many at the end, the fewest and most, how often they grew and
shrank), with the time of each phase.
A run without a plan of steps (``cluster force-delete``) records its
planned and its outcome rows instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import datetime
import json
import os
import re
from typing import Any

from osc_cascade.engine import planfile

#: 2: who, when, the command, the cloud and its regions
REPORT_FORMAT_VERSION = 2


def default_dir() -> str:
    """``$XDG_STATE_HOME/osc-cascade``, or ``~/.local/state/osc-cascade``
    (the XDG base directory specification's state directory)."""
    state = os.environ.get('XDG_STATE_HOME') or os.path.join(
        os.path.expanduser('~'), '.local', 'state'
    )
    return os.path.join(state, 'osc-cascade')


def default_path(command: str, started: datetime.datetime) -> str:
    """A new file in ``default_dir()`` named after the time and the
    command: ``20261124T135200.123456Z-project-delete-cascade.json``."""
    slug = re.sub(r'[^a-z0-9]+', '-', command.lower()).strip('-')
    return os.path.join(
        default_dir(), f'{started:%Y%m%dT%H%M%S.%fZ}-{slug}.json'
    )


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def context(
    conn: Any,
    command: str,
    regions: Sequence[str],
    started: datetime.datetime,
) -> dict[str, Any]:
    """Who runs what, where and since when, from the token the connection
    holds (no API call)."""
    access = conn.session.auth.get_access(conn.session)
    return {
        'command': command,
        'cloud': conn.config.name,
        'regions': list(regions),
        'user': {'id': access.user_id, 'name': access.username},
        'project': {'id': access.project_id, 'name': access.project_name},
        'started': started.isoformat(),
    }


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
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``plan`` is the plan of the first round (without the projects),
    ``runs`` the RunResults of each round, ``origin`` the clock reading
    when the execution began, ``context`` the run's (``context``)."""
    return {
        **(context or {}),
        'finished': utcnow().isoformat(),
        'format': REPORT_FORMAT_VERSION,
        'projects': list(plan.projects),
        'parallel': parallel,
        'phases': {k: round(v, 4) for k, v in phases.items()},
        'plan': planfile.to_dict(plan),
        'rounds': [step_rows(run, origin) for run in runs],
        'slots': [run.slots for run in runs],
        'ok': not error and all(run.ok for run in runs),
        'error': error,
    }


def build_rows(
    planned: tuple[Sequence[str], Sequence[Sequence[Any]]],
    outcome: tuple[Sequence[str], Sequence[Sequence[Any]]],
    *,
    ok: bool,
    error: str = '',
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a run that has rows and no plan of steps: what it
    planned and what became of it, each a table (columns, rows), one
    object per row."""
    return {
        **(context or {}),
        'finished': utcnow().isoformat(),
        'format': REPORT_FORMAT_VERSION,
        'planned': _objects(*planned),
        'outcome': _objects(*outcome),
        'ok': ok and not error,
        'error': error,
    }


def _objects(
    columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[dict[str, Any]]:
    return [dict(zip(columns, row)) for row in rows]


def write(path: str, report: Mapping[str, Any]) -> str:
    """Write it, the directories too (the state directory may not exist
    yet); what JSON has no type for (a table's cell) as its text. A
    record never fails the run it records: '' or a note that says why it
    could not be written."""
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        # one line, by json's C encoder: indented, json encodes in Python
        # (2.2 s of a cascade's CPU at N=10,000); `jq .` indents it
        text = json.dumps(report, sort_keys=True, default=str)
        with open(path, 'w') as f:
            f.write(text + '\n')
    except OSError as exc:
        return f'the record of the run could not be written to {path}: {exc}'
    return ''
