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

"""Lower bounds on a cascade's run time, from its own plan and the measured
time of each step (pure: no I/O).

The critical path is the longest chain of steps through the plan's edges,
each weighted by the seconds it took, less the time it waited for a free API
slot (``queued``: the executor's concurrency limit, not the cloud): with
unlimited concurrency and no overhead the run cannot be shorter. With
``parallel`` workers it cannot be shorter than the total work divided by
``parallel`` either (Graham), so ``max(critical path, work / parallel)`` is
the tighter bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def critical_path(
    steps: Iterable[str],
    edges: Iterable[tuple[str, str]],
    seconds: Mapping[str, float],
) -> tuple[float, list[str]]:
    """The heaviest path (seconds, steps in order); a step without a time
    (skipped, or only in the plan) weighs 0; edges to unknown steps are
    ignored."""
    nodes = list(dict.fromkeys(steps))
    known = set(nodes)
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    succs: dict[str, list[str]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for first, then in edges:
        if first in known and then in known:
            preds[then].append(first)
            succs[first].append(then)
            indegree[then] += 1
    ready = [n for n in nodes if indegree[n] == 0]
    finish: dict[str, float] = {}
    best_pred: dict[str, str | None] = {}
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        start, via = 0.0, None
        for p in preds[node]:
            if finish[p] > start:
                start, via = finish[p], p
        finish[node] = start + max(0.0, float(seconds.get(node, 0.0)))
        best_pred[node] = via
        for nxt in succs[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    if done != len(nodes):
        raise ValueError('the plan has a cycle')
    if not finish:
        return 0.0, []
    end = max(finish, key=lambda n: (finish[n], n))
    path = []
    node: str | None = end
    while node is not None:
        path.append(node)
        node = best_pred[node]
    return finish[end], path[::-1]


def bounds(
    plan: Mapping[str, Any],
    results: Iterable[Mapping[str, Any]],
    parallel: int,
) -> dict[str, Any]:
    """Bounds of one executed plan: ``plan`` as ``Plan.to_dict()`` (or the
    ``--plan-file`` JSON), ``results`` as the report's step results (id,
    seconds, started)."""
    steps = [s['id'] if 'id' in s else step_id(s) for s in plan['steps']]
    edges = [tuple(e) for e in plan['edges']]
    results = list(results)
    seconds = {
        r['id']: float(r.get('seconds') or 0.0) - float(r.get('queued') or 0.0)
        for r in results
    }
    queued = [float(r.get('queued') or 0.0) for r in results]
    length, path = critical_path(steps, edges, seconds)
    work = sum(seconds.values())
    span = 0.0
    starts = [r['started'] for r in results if r.get('started') is not None]
    if starts:
        span = max(
            r['started'] + float(r.get('seconds') or 0.0)
            for r in results
            if r.get('started') is not None
        ) - min(starts)
    delays = ready_delays(steps, edges, results)
    return {
        'steps': len(steps),
        'edges': len(edges),
        # how long steps waited for a worker once all before them were
        # done (the executor's scheduling, not the cloud)
        'ready_delay_mean': round(sum(delays) / len(delays), 3)
        if delays
        else 0.0,
        'ready_delay_max': round(max(delays), 3) if delays else 0.0,
        # of the steps' own time, how long they waited for an API slot
        'queued_total': round(sum(queued), 3),
        # ... per service (the kind's prefix: the slots are per service)
        'queued_by_service': queued_by_service(results),
        'queued_max': round(max(queued, default=0.0), 3),
        'critical_path': round(length, 3),
        'critical_steps': len(path),
        'critical_path_head': path[:3] + (['...'] if len(path) > 3 else []),
        'work': round(work, 3),
        'parallel': parallel,
        'graham': round(max(length, work / max(1, parallel)), 3),
        # how long the steps of the plan took from the first start to
        # the last end: the executor's own share of the wall time
        'executed_span': round(span, 3),
    }


def queued_by_service(
    results: Iterable[Mapping[str, Any]],
) -> dict[str, float]:
    """Seconds the steps waited for API slots, summed per service (the
    prefix of the step's kind, as ``compute`` of ``compute.server``)."""
    out: dict[str, float] = {}
    for r in results:
        service = str(r.get('kind', '')).split('.')[0]
        out[service] = out.get(service, 0.0) + float(r.get('queued') or 0.0)
    return {k: round(v, 3) for k, v in sorted(out.items())}


def ready_delays(
    steps: Iterable[str],
    edges: Iterable[tuple[str, str]],
    results: Iterable[Mapping[str, Any]],
) -> list[float]:
    """Per step that ran: its start minus the moment the last step before
    it ended (its start minus the first start, for a step with none)."""
    rows = {r['id']: r for r in results if r.get('started') is not None}
    if not rows:
        return []
    origin = min(r['started'] for r in rows.values())
    preds: dict[str, list[str]] = {s: [] for s in steps}
    for first, then in edges:
        if then in preds:
            preds[then].append(first)
    out = []
    for step, row in rows.items():
        ends = [
            rows[p]['started'] + float(rows[p].get('seconds') or 0.0)
            for p in preds.get(step, [])
            if p in rows
        ]
        ready = max(ends, default=origin)
        out.append(max(0.0, row['started'] - ready))
    return out


def step_id(step: Mapping[str, Any]) -> str:
    """The id of a step of ``Plan.to_dict()`` (which stores the step, not
    its id), as ``osc_cascade.engine.resource.Step.id`` computes it."""
    target = step['target']
    region = target.get('region') or ''
    key = f'{target["kind"]}:{target["id"]}' + (f'@{region}' if region else '')
    action = step['action']
    if action in ('delete', 'keep'):
        return f'{action}:{key}'
    params = step.get('params') or {}
    suffix = ','.join(f'{k}={v}' for k, v in sorted(params.items()))
    return f'{action}:{key}' + (f'[{suffix}]' if suffix else '')
