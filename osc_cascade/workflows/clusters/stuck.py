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


"""Finding clusters: one by name or ID in the services, and those stuck
(a state that is not final, not updated for longer than an age); the ages
and times that takes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import dataclasses
import datetime
import re
from typing import Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.workflows.clusters.records import (
    HEAT,
    NEEDS,
    ClusterRecord,
    noun,
)
from osc_cascade.workflows.clusters.services import ClusterService

_AGE_UNITS = {'s': 1, 'm': 60, 'h': 3600, 'd': 86400}


def parse_age(text: str) -> float:
    """``90s``, ``30m``, ``24h``, ``7d`` (or bare seconds) as seconds."""
    m = re.fullmatch(r'\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*', text.lower())
    if not m:
        raise ValueError(f'{text!r} is not an age such as 90s, 30m, 24h or 7d')
    return float(m.group(1)) * _AGE_UNITS[m.group(2) or 's']


def format_age(seconds: float) -> str:
    seconds = int(seconds)
    parts = []
    for unit, size in (('d', 86400), ('h', 3600), ('m', 60), ('s', 1)):
        if seconds >= size or (unit == 's' and not parts):
            parts.append(f'{seconds // size}{unit}')
            seconds %= size
        if len(parts) == 2:
            break
    return ' '.join(parts)


def parse_time(text: str) -> datetime.datetime:
    """An ISO 8601 time as Heat (``Z``), Magnum (``+00:00``) or Sahara
    (naive, in UTC) writes it."""
    value = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def find_cluster(
    conn: Any,
    services: Sequence[ClusterService],
    name_or_id: str,
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> ClusterRecord:
    matches: list[ClusterRecord] = []
    for service in services:
        found = checked(
            f'looking up {name_or_id!r}',
            lambda s=service: s.find(conn, name_or_id),
            retry=retry,
            clock=clock,
            needs=NEEDS,
        )
        if len(found) > 1:
            raise CascadeError(
                f'More than one {noun(service.service)} is named '
                f'{name_or_id!r}: '
                + ', '.join(f'{c.id} (project {c.project_id})' for c in found)
                + '; name it by ID.'
            )
        matches += found
    what = 'stack' if services[0].service == HEAT else 'cluster'
    if not matches:
        where = ', '.join(s.service for s in services)
        raise CascadeError(
            f'No {what} with a name or ID of {name_or_id!r} '
            f'exists (looked in {where}).'
        )
    if len(matches) > 1:
        raise CascadeError(
            f'{name_or_id!r} names a cluster in more than '
            f'one service: '
            + ', '.join(c.label() for c in matches)
            + '; name it by ID.'
        )
    return matches[0]


@dataclasses.dataclass(frozen=True)
class StuckCluster:
    cluster: ClusterRecord
    age: float


def find_stuck(
    conn: Any,
    services: Iterable[ClusterService],
    older_than: float,
    now: datetime.datetime,
    project_id: str | None = None,
    *,
    include_updating: bool = False,
    retry: RetryPolicy,
    clock: Clock,
) -> list[StuckCluster]:
    """Clusters in a stuck state not updated for ``older_than`` seconds
    (of one project, or of all), oldest first; those updating only with
    ``include_updating``."""
    out = []
    for service in services:
        for cluster in checked(
            f'listing {service.service} clusters',
            lambda s=service: s.unsettled(conn),
            retry=retry,
            clock=clock,
            needs=NEEDS,
        ):
            if not cluster.updated_at or project_id not in (
                None,
                cluster.project_id,
            ):
                continue
            if service.is_updating(cluster.status) and not include_updating:
                continue
            age = (now - parse_time(cluster.updated_at)).total_seconds()
            if age >= older_than:
                out.append(StuckCluster(cluster, age))
    return sorted(out, key=lambda s: (-s.age, s.cluster.name))


def stuck_of_project(
    conn: Any,
    services: Sequence[ClusterService],
    older_than: float,
    project: str | None,
    *,
    include_updating: bool,
    retry: RetryPolicy,
    clock: Clock,
) -> list[StuckCluster]:
    """``find_stuck`` now, of ``project`` (a name or ID, resolved) or of
    all projects: what ``--older-than`` and ``--project`` ask for."""
    from osc_cascade.workflows.projects import Projects

    project_id = project and (
        Projects(conn, retry=retry, clock=clock).resolve(project).id
    )
    return find_stuck(
        conn,
        services,
        older_than,
        utcnow(),
        project_id,
        include_updating=include_updating,
        retry=retry,
        clock=clock,
    )
