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

"""The tables of benchmarks/run.py, from synthetic runs (no cloud)."""

from benchmarks import results, run


def _row(tool, wall, left=0, **extra):
    return dict(
        {
            'tool': tool,
            'wall': wall,
            'requests': 10,
            'requests_by_service': {'network': {'GET': 6, 'DELETE': 4}},
            'before': 5,
            'left': left,
            'left_by_kind': {'network.port': left} if left else {},
            'twin_intact': True,
            'exit_code': 0,
            'cpu': {'cloud_cpu_s': wall, 'cloud_busy': 0.5, 'cores': 2},
        },
        **extra,
    )


def _cascade(wall, cp):
    return _row(
        run.CASCADE,
        wall,
        bound=cp,
        phases={'plan': 2.0, 'execute': 6.0},
        executed_span=5.0,
        ready_delay_mean=0.1,
    )


RUNS = [
    {
        'n': 10,
        'latency_ms': 50,
        'tools': {
            run.CLEANUP: _row(run.CLEANUP, 40.0, left=2),
            run.CASCADE: _cascade(10.0, 5.0),
        },
    },
    {
        'n': 10,
        'latency_ms': 50,
        'tools': {
            run.CLEANUP: _row(run.CLEANUP, 44.0, left=1),
            run.CASCADE: _cascade(12.0, 5.0),
        },
    },
]


def test_summary_takes_medians_and_the_worst_leftover():
    summary = {s['tool']: s for s in results.summarize(RUNS)}
    assert summary[run.CASCADE]['wall'] == 11.0
    assert summary[run.CASCADE]['bound'] == 5.0
    assert summary[run.CLEANUP]['left'] == 2
    assert summary[run.CLEANUP]['by_method'] == {'DELETE': 4, 'GET': 6}


def test_tables():
    table = results.markdown(results.summarize(RUNS))
    assert '| 10 | cascade | 11.0 (10.0-12.0) |' in table
    # a tool that leaves resources does not win on time unremarked
    assert '3.8x (cleanup left 2: it did not finish)' in table
    assert '2 (2 port)' in table
    # cloud CPU; critical path 5 s, cloud CPU / 2 cores 5 and 6 s: the
    # walls of 10 and 12 s are twice the larger bound
    assert '| yes | 11 (50%) | 5.0 | 5.5 | 2.00 |' in table
    phases = results.phases_markdown(RUNS)
    assert (
        '| 10 | 11.0 | 3.0 | 2.0 | 5.0 | 1.0 | 5.0 | 1.00 | 0.10 |' in phases
    )


def test_a_tool_run_second_has_no_twin_and_says_not_checked():
    # its twin would be the project the first tool worked on
    runs = [
        {
            'n': 10,
            'latency_ms': 50,
            'tools': {
                run.CLEANUP: _row(run.CLEANUP, 40.0, twin_intact=None),
                run.CASCADE: _cascade(10.0, 5.0),
            },
        }
    ]
    table = results.markdown(results.summarize(runs))
    assert '| 10 | cleanup | 40.0 (40.0-40.0) |' in table
    assert '| not checked |' in table
    assert results.twin_intact([{'twin_intact': None}, {'twin_intact': True}])
    assert (
        results.twin_intact([{'twin_intact': False}, {'twin_intact': True}])
        is False
    )
    assert results.twin_intact([{'twin_intact': None}]) is None


def test_cleanup_never_touches_stacks_or_load_balancers():
    cmd = run.tool_command(run.CLEANUP, 'p', cloud='c', parallel=3)
    assert cmd[-4:] == [
        '--skip-resource',
        'orchestration.stack',
        '--skip-resource',
        'load_balancer.load_balancer',
    ]
    cmd = run.tool_command(
        run.CASCADE, 'p', cloud='c', parallel=3, report='r.json'
    )
    assert cmd[-5:] == ['--parallel', '3', '--report-file', 'r.json', 'p']


def test_superseded_runs_stay_out_of_the_tables():
    runs = [
        *RUNS,
        {
            'n': 10,
            'superseded': 'older code',
            'tools': {
                run.CLEANUP: _row(run.CLEANUP, 1000.0),
                run.CASCADE: _cascade(1000.0, 5.0),
            },
        },
    ]
    assert results.summarize(runs) == results.summarize(RUNS)
    assert results.phases_markdown(runs) == results.phases_markdown(RUNS)


def test_list_table_for_the_readme():
    rst = results.list_table(
        '| N | tool |\n|---|---|\n| 10 | cascade |\n| 30 |  |\n'
    )
    assert rst == (
        '.. list-table::\n   :header-rows: 1\n\n'
        '   * - N\n     - tool\n'
        '   * - 10\n     - cascade\n'
        '   * - 30\n     -\n'
    )
