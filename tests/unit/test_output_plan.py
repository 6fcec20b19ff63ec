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

"""The plan a person reads, its graph, and the summary of a run."""

import os
import stat

from osc_lib import exceptions
import pytest

from osc_cascade.engine import executor, resource
from osc_cascade.engine.executor import RunResult, StepResult
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.v1 import output
from tests.unit.fakes.kinds import PROJECT, make_plan


def at(id_, kind='network.port', region='RegionOne', name=''):
    return ResourceRef(
        kind, id_, name=name or id_, project_id=PROJECT, region=region
    )


def regional_plan():
    router = at('r', 'network.router', name='router')
    steps = [
        resource.delete(at('pb', region='RegionTwo')),
        resource.delete(at('pa')),
        resource.delete(at('s1', 'compute.server', name='vm')),
        Step('remove_router_interface', router, {'port_id': 'pa'}),
        resource.delete(router),
        resource.keep(at('img', 'image.image', name='pub'), 'it is public'),
        resource.delete(
            ResourceRef('identity.project', PROJECT, 'p', PROJECT)
        ),
    ]
    plan = make_plan(steps)
    ids = {s.target.id + s.action: s.id for s in steps}
    edges = [
        ('s1delete', 'padelete'),
        ('padelete', 'rremove_router_interface'),
        ('rremove_router_interface', 'rdelete'),
    ] + [
        (k, PROJECT + 'delete')
        for k in ids
        if k not in (PROJECT + 'delete', 'imgkeep')
    ]
    plan.edges = {(ids[a], ids[b]) for a, b in edges}
    return plan


def test_rows_are_sorted_by_stage_region_kind_and_name():
    columns, rows = output.plan_table(regional_plan())
    assert columns == [
        c for c in output.CASCADE_PLAN_COLUMNS if c != 'Project'
    ]
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        (1, 'RegionOne', 'compute.server', 's1'),
        (1, 'RegionOne', 'image.image', 'img'),
        (1, 'RegionTwo', 'network.port', 'pb'),
        (2, 'RegionOne', 'network.port', 'pa'),
        (3, 'RegionOne', 'network.router', 'r'),
        (4, 'RegionOne', 'network.router', 'r'),
        (5, '', 'identity.project', PROJECT),
    ]


def test_after_is_a_count_in_a_table_and_whole_for_machines():
    plan = regional_plan()
    columns, rows = output.plan_table(plan)
    assert 'Project' not in columns  # the project's ID: 32 columns
    by = {(r[2], r[4]): r for r in rows}
    assert by['delete', 'pa'][6] == '1'
    assert by['delete', PROJECT][6] == '5'
    assert by['delete', 's1'][6] == ''
    columns, full = output.plan_table(plan, full=True)
    assert columns == list(output.CASCADE_PLAN_COLUMNS)
    by = {(r[2], r[4]): r for r in full}
    assert len(by['delete', PROJECT][7]) == 5
    assert all(':' in s for s in by['delete', PROJECT][7])
    assert by['delete', 's1'][6] == PROJECT


def test_reason_only_for_what_is_kept():
    _c, rows = output.plan_table(regional_plan())
    reasons = {r[4]: r[7] for r in rows if r[7]}
    assert reasons == {'img': 'it is public'}


def test_an_allocation_is_removed_in_the_plan_and_in_the_progress():
    step = resource.delete(at('c', 'placement.allocation'))
    assert output.verb(step) == 'remove'
    assert output.step_text(step).startswith('remove placement.allocation')
    kept = resource.keep(at('c', 'placement.allocation'), 'migrating')
    assert output.verb(kept) == 'block'
    assert output.verb(resource.delete(at('x'))) == 'delete'


def test_the_graph_has_a_box_per_region():
    dot = output.plan_dot(regional_plan())
    lines = dot.splitlines()
    assert '  subgraph cluster_RegionOne {' in lines
    assert '  subgraph cluster_RegionTwo {' in lines
    assert '    label="RegionTwo";' in lines
    two = lines.index('  subgraph cluster_RegionTwo {')
    assert lines[two + 3].startswith('    "delete:network.port:pb@RegionTwo"')
    # Keystone's project is global: outside every box
    assert any(
        line.startswith(f'  "delete:identity.project:{PROJECT}"')
        for line in lines
    )
    assert lines[-1] == '}'


def test_graph_needs_a_known_extension():
    with pytest.raises(exceptions.CommandError, match=r'\.svg, \.png, \.pdf'):
        output.graph_format('plan.txt')
    assert output.graph_format('x/plan.SVG') == 'svg'


def test_graph_without_graphviz_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setenv('PATH', str(tmp_path))
    with pytest.raises(exceptions.CommandError) as err:
        output.render_graph('digraph {}', str(tmp_path / 'plan.svg'))
    assert "Graphviz's dot command, which is not installed" in str(err.value)
    assert '\n' not in str(err.value)


def test_graph_is_drawn_by_dot(monkeypatch, tmp_path):
    fake = tmp_path / 'dot'
    fake.write_text(
        '#!/bin/sh\n# dot -Tsvg -o FILE, the graph on stdin\n'
        'echo "$1" > "$3"; cat >> "$3"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv('PATH', f'{tmp_path}{os.pathsep}/bin:/usr/bin')
    target = tmp_path / 'plan.svg'
    output.render_graph('digraph {}\n', str(target))
    assert target.read_text() == '-Tsvg\ndigraph {}\n'


def test_summary_separates_deletions_actions_and_kept():
    router = at('r', 'network.router')
    results = {
        'a': StepResult(resource.delete(router), executor.DONE),
        'b': StepResult(Step('clear_router_gateway', router), executor.DONE),
        'c': StepResult(
            Step('remove_router_interface', router, {'port_id': 'x'}),
            executor.DONE,
        ),
        'd': StepResult(
            resource.delete(at('r2', 'network.router', 'RegionTwo')),
            executor.FAILED,
        ),
        'e': StepResult(
            resource.keep(at('i', 'image.image'), 'public'), executor.KEPT
        ),
        'f': StepResult(resource.delete(at('p')), executor.SKIPPED),
    }
    assert RunResult(results).summary() == [
        ('image.image', 'RegionOne', 0, 0, 1, 0, 0),
        ('network.port', 'RegionOne', 0, 0, 0, 0, 1),
        ('network.router', 'RegionOne', 1, 2, 0, 0, 0),
        ('network.router', 'RegionTwo', 0, 0, 0, 1, 0),
    ]
