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

"""The executor CPU benchmark's plan: the cascade's real plan of one block
of the simulated cloud's mix, copied under new ids; and its measure."""

from __future__ import annotations

from benchmarks import executor_cpu


def test_the_block_plan_is_the_cascades_plan_of_the_mix():
    plan = executor_cpu.block_plan()
    kinds = {s.target.kind for s in plan.steps.values()}
    # every service of the simulated cloud's mix, ordered by edges
    assert {
        'compute.server',
        'block_storage.volume',
        'network.network',
        'network.router',
        'orchestration.stack',
        'load_balancer.load_balancer',
        'object_store.container',
    } <= kinds
    assert 'identity.project' not in kinds
    assert len(plan.edges) > len(plan.steps) / 2


def test_copies_keep_the_shape_under_new_ids():
    plan = executor_cpu.block_plan()
    three = executor_cpu.copied(plan, 3)
    assert len(three.steps) == 3 * len(plan.steps)
    assert len(three.edges) == 3 * len(plan.edges)
    assert len(three.soft_edges) == 3 * len(plan.soft_edges)
    assert all(a in three.steps and b in three.steps for a, b in three.edges)
    # a copy's chains stay inside it
    copy = {i: s.target.id.rsplit('-', 1)[1] for i, s in three.steps.items()}
    assert all(copy[a] == copy[b] for a, b in three.edges)
    assert set(copy.values()) == {'0', '1', '2'}


def test_measure_runs_every_step():
    row = executor_cpu.measure(200, executor_cpu.block_plan(), parallel=4)
    block = len(executor_cpu.block_plan().steps)
    assert row['steps'] == 2 * block
    assert row['executor_cpu_s'] >= 0
    assert row['executor_ms_per_step'] > row['baseline_ms_per_step'] >= 0
