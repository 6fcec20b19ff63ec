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

"""The executor's own CPU per step, at up to 100,000 steps.

    python -m benchmarks.executor_cpu --sweep 1000,10000,100000

The plan is the cascade's real plan of one block of the simulated cloud's
mix (benchmarks.simcloud: 100 resources, discovered and planned in-process
on the unit tests' fake services), copied N/100 times under new ids. Its
steps run on kinds that answer at once: a delete returns, an asynchronous
one is gone at its first poll (from the kind's shared listing, as in a
real run). So what the process spends is the executor's own work: the
scheduling (readiness, per-service queues by chain length, threads), the
API slots, the polls' bookkeeping and the events (handed to a function
that drops them). The baseline, in the same run, is the least any
executor spends on that plan: the same calls made one after the other in
the plan's order, on one thread. Prints JSON: per N, CPU seconds (the
process's, every thread) and milliseconds per step of both, and the
executor's wall.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from benchmarks import simshard
from osc_cascade import kinds
from osc_cascade.engine.executor import Executor
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds.base import GONE
from tests.unit import scenarios
from tests.unit.fakes.run import cascade_for


def block_plan() -> Plan:
    """The cascade's plan of one block of 100 resources (the run's
    project-level steps left out: they are not the executor's)."""
    with simshard.Shard() as shard:
        external, _ = scenarios.external_network(shard)
        project = scenarios.project(shard, 'bench')
        simshard.fill_block(shard, project['id'], external, 'bench')
        _cascade, _targets, plan = cascade_for(shard, project['id'])
    return plan.subplan(lambda s: s.target.kind != 'identity.project')


def copied(plan: Plan, copies: int) -> Plan:
    """``copies`` of the plan, each one's ids suffixed with its number."""
    steps: dict[str, Step] = {}
    edges: set[tuple[str, str]] = set()
    soft: set[tuple[str, str]] = set()
    for c in range(copies):
        ids = {}
        for old_id, step in plan.steps.items():
            target = dataclasses.replace(
                step.target, id=f'{step.target.id}-{c}'
            )
            new = dataclasses.replace(step, target=target)
            ids[old_id] = new.id
            steps[new.id] = new
        edges |= {(ids[a], ids[b]) for a, b in plan.edges}
        soft |= {(ids[a], ids[b]) for a, b in plan.soft_edges}
    return Plan(plan.projects, steps, edges, soft_edges=soft)


class InstantKind:
    """A kind as the executor sees it, answering at once; its asynchronous
    deletes are gone at the first poll of the shared listing."""

    def __init__(self, real: Any):
        self.name = real.name
        self.service_type = real.service_type
        self.synchronous_delete = real.synchronous_delete
        self.error_statuses = real.error_statuses
        self.unfinished_statuses = real.unfinished_statuses

    def parts(self, conn, ref: ResourceRef):
        return ()

    def delete(self, conn, ref: ResourceRef) -> None:
        pass

    def apply(self, conn, step: Step) -> None:
        pass

    def list_statuses(self, conn, project_id: str) -> dict[str, str]:
        return {}

    def status(self, conn, ref: ResourceRef) -> Any:
        return GONE

    def is_in_use(self, exc: Exception) -> bool:
        return False


class _Conn:
    """No clouds.yaml: every service's slots adaptive, no rate limit."""

    config = None


def instant_kinds(plan: Plan) -> dict[str, InstantKind]:
    real = kinds.build()
    return {
        name: InstantKind(real[name])
        for name in {s.target.kind for s in plan.steps.values()}
    }


def baseline(plan: Plan, kinds: dict[str, InstantKind]) -> None:
    """The least work: each step's calls, in the plan's order, inline."""
    for step_id in plan.order():
        step = plan.steps[step_id]
        kind = kinds[step.target.kind]
        if step.is_delete:
            kind.delete(None, step.target)
            if not kind.synchronous_delete:
                kind.list_statuses(None, step.target.project_id)
        else:
            kind.apply(None, step)


def measure(n: int, block: Plan, parallel: int) -> dict[str, Any]:
    plan = copied(block, max(1, n // 100))
    instant = instant_kinds(plan)
    steps = len(plan.steps)
    cpu = time.process_time()
    baseline(plan, instant)
    base_cpu = time.process_time() - cpu
    executor = Executor(
        _Conn(),
        instant,
        parallel=parallel,
        retry=RetryPolicy(poll_min=0.0, poll_max=0.0),
        on_event=lambda event: None,
    )
    cpu, wall = time.process_time(), time.monotonic()
    result = executor.run(plan)
    run_cpu, run_wall = time.process_time() - cpu, time.monotonic() - wall
    if not result.ok:
        raise RuntimeError('the executor failed steps of the benchmark')
    return {
        'n': n,
        'steps': steps,
        'edges': len(plan.edges),
        'parallel': parallel,
        'executor_cpu_s': round(run_cpu, 2),
        'executor_ms_per_step': round(1000 * run_cpu / steps, 3),
        'executor_wall_s': round(run_wall, 2),
        'baseline_cpu_s': round(base_cpu, 3),
        'baseline_ms_per_step': round(1000 * base_cpu / steps, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument(
        '--sweep',
        default='1000,10000,100000',
        type=lambda s: [int(x) for x in s.split(',')],
    )
    parser.add_argument('--parallel', type=int, default=10)
    args = parser.parse_args(argv)
    block = block_plan()
    for n in args.sweep:
        print(json.dumps(measure(n, block, args.parallel)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
