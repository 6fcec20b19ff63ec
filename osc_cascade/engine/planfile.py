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

"""A plan saved by ``--dry-run --plan-file`` and executed later as shown.

The file holds the steps and edges as JSON; loading it checks it again as
the planner would (owners, edges, cycles), because a file can be edited,
and refuses a plan made for another cloud, other regions or other
projects, or longer ago than the caller allows. What the plan's resources
are by then is the workflow's to check again (``engine.reconcile``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
import datetime
import json
import os
from typing import Any

from osc_cascade.engine import plan_rows
from osc_cascade.engine.errors import CascadeError, PlanError
from osc_cascade.engine.graph import find_cycle
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import Step

PLAN_FORMAT_VERSION = 3


def to_dict(plan: Plan) -> dict[str, Any]:
    data = {
        'format': PLAN_FORMAT_VERSION,
        'projects': plan.projects,
        'steps': [plan.steps[s].to_dict() for s in plan.order()],
        'edges': sorted([list(e) for e in plan.edges]),
        'soft_edges': sorted([list(e) for e in plan.soft_edges]),
        'notes': plan.notes,
        'made_for': plan.made_for,
    }
    plan_rows.add(data, plan)  # a selective plan's filters and rows
    return data


def to_json(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2, sort_keys=True)


def from_dict(data: Mapping[str, Any]) -> Plan:
    if data.get('format') not in (
        PLAN_FORMAT_VERSION,
        plan_rows.SELECTIVE_FORMAT,
    ):
        raise PlanError(
            f'unsupported plan file format {data.get("format")!r} '
            f'(expected {PLAN_FORMAT_VERSION})'
        )
    try:
        steps = {}
        for raw in data['steps']:
            step = Step.from_dict(raw)
            steps[step.id] = step
        edges = {(a, b) for a, b in data['edges']}
        soft_edges = {(a, b) for a, b in data.get('soft_edges', [])}
        projects = [
            {'id': p['id'], 'name': p.get('name', '')}
            for p in data['projects']
        ]
        notes = list(data.get('notes', []))
        made_for = {
            k: data['made_for'][k] for k in ('cloud', 'regions', 'made_at')
        }
        datetime.datetime.fromisoformat(made_for['made_at'])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # a clear refusal, not a bare KeyError from deep inside
        raise PlanError(
            f'malformed plan file: {type(exc).__name__}: {exc}'
        ) from exc
    unknown = {s for e in edges | soft_edges for s in e} - steps.keys()
    if unknown:
        raise PlanError(
            f'plan file has edges to unknown steps: '
            f'{", ".join(sorted(unknown))}'
        )
    # the owner check of build_plan, again: a file can be edited
    project_ids = {p['id'] for p in projects}
    foreign = [
        s for s in steps.values() if s.target.project_id not in project_ids
    ]
    if foreign:
        raise PlanError(
            'plan file has steps on resources owned by '
            'another project: ' + ', '.join(s.target.label() for s in foreign)
        )
    plan = Plan(
        made_for=made_for,
        projects=projects,
        steps=steps,
        edges=edges,
        notes=notes,
        soft_edges=soft_edges & edges,
    )
    _check_acyclic(plan)
    plan_rows.read(data, plan)
    return plan


def _check_acyclic(plan: Plan) -> None:
    cycle = find_cycle(plan.steps, plan.edges)
    if cycle is not None:
        raise PlanError(
            'plan has a dependency cycle: ' + ' -> '.join(cycle + cycle[:1])
        )


def save(path: str, plan: Plan) -> None:
    with open(path, 'w') as f:
        f.write(to_json(plan))


def made_for(cloud: str, regions: list[str]) -> dict[str, Any]:
    """What a plan made now, for this cloud and these regions, is for."""
    return {
        'cloud': cloud.rstrip('/'),
        'regions': sorted(regions),
        'made_at': datetime.datetime.now(datetime.UTC).isoformat(
            timespec='seconds'
        ),
    }


def load(
    path: str,
    project_ids: Collection[str] | None,
    here: Mapping[str, Any],
    max_age: float,
) -> Plan:
    """The plan in ``path``, refused unless it was made for these projects
    (None: the caller checks them), for the cloud and regions of ``here``
    (``made_for``), at most ``max_age`` seconds ago."""
    if not os.path.exists(path):
        raise CascadeError(
            f'Plan file {path} does not exist; make one with '
            f'--dry-run --plan-file {path}'
        )
    with open(path) as f:
        try:
            plan = from_dict(json.load(f))
        except ValueError as exc:
            raise PlanError(f'plan file {path} is not JSON: {exc}') from exc
    planned = {p['id'] for p in plan.projects}
    if project_ids is not None and planned != set(project_ids):
        raise CascadeError(
            f'Plan file {path} is for project(s) '
            f'{", ".join(sorted(planned))}, not for the project(s) given.'
        )
    for what in ('cloud', 'regions'):
        if plan.made_for.get(what) != here[what]:
            raise CascadeError(
                f'Plan file {path} was made for {what} '
                f'{plan.made_for.get(what)}, not for {here[what]}.'
            )
    made = datetime.datetime.fromisoformat(plan.made_for['made_at'])
    now = datetime.datetime.fromisoformat(here['made_at'])
    age = (now - made).total_seconds()
    if not 0 <= age <= max_age:
        raise CascadeError(
            f'Plan file {path} was made {made.isoformat()}, '
            f'{age / 3600:.1f} hours ago: more than --plan-max-age allows. '
            f'Make a new plan with --dry-run --plan-file {path}.'
        )
    return plan
