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

"""``--report-file`` of ``project delete --cascade``, and the benchmark's
critical-path bound computed from it."""

import json

from benchmarks import bound
from tests.unit import scenarios
from tests.unit.fakes.common import step_id


def test_report_file_has_plan_and_step_times(cloud, external, osc, tmp_path):
    a = scenarios.full_project(cloud, 'A', external)
    path = tmp_path / 'report.json'
    result = osc(
        'project',
        'delete',
        '--cascade',
        '--yes',
        'A',
        '--report-file',
        str(path),
    )
    assert result.code == 0, result.stderr
    report = json.loads(path.read_text())
    assert report['ok'] is True
    assert report['projects'] == [{'id': a['project']['id'], 'name': 'A'}]
    assert set(report['phases']) == {'plan', 'execute'}
    planned = {bound.step_id(s) for s in report['plan']['steps']}
    first = report['rounds'][0]
    assert {r['id'] for r in first} == planned
    server = step_id('delete', 'compute.server', a['server']['id'])
    row = next(r for r in first if r['id'] == server)
    assert row['outcome'] == 'done' and row['attempts'] >= 1
    assert row['seconds'] >= row['queued'] >= 0 and row['started'] >= 0
    # no project step: the project is deleted by OSC after verification
    assert not any(r['kind'] == 'identity.project' for r in first)
    b = bound.bounds(report['plan'], first, report['parallel'])
    assert b['steps'] == len(planned)
    assert 0 <= b['critical_path'] <= b['work']


def test_report_file_needs_cascade(cloud, osc, tmp_path):
    result = osc(
        'project', 'delete', 'A', '--report-file', str(tmp_path / 'r.json')
    )
    assert result.code != 0
    assert '--report-file needs --cascade' in result.stderr


def test_critical_path_weights_steps():
    steps = ['a', 'b', 'c', 'd']
    edges = [('a', 'b'), ('b', 'd'), ('c', 'd')]
    length, path = bound.critical_path(
        steps, edges, {'a': 1, 'b': 2, 'c': 5, 'd': 1}
    )
    assert (length, path) == (6, ['c', 'd'])
    length, path = bound.critical_path(
        steps, edges, {'a': 3, 'b': 2, 'c': 1, 'd': 1}
    )
    assert (length, path) == (6, ['a', 'b', 'd'])


def test_critical_path_edge_cases():
    assert bound.critical_path([], [], {}) == (0.0, [])
    # unknown steps in edges are ignored, missing times weigh nothing
    assert bound.critical_path(['a'], [('a', 'zz')], {}) == (0.0, ['a'])
    try:
        bound.critical_path(['a', 'b'], [('a', 'b'), ('b', 'a')], {})
    except ValueError as exc:
        assert 'cycle' in str(exc)
    else:
        raise AssertionError('a cycle must be refused')


def test_a_long_chain_does_not_recurse():
    n = 20000
    steps = [str(i) for i in range(n)]
    edges = [(str(i), str(i + 1)) for i in range(n - 1)]
    length, path = bound.critical_path(steps, edges, dict.fromkeys(steps, 0.5))
    assert length == n * 0.5 and len(path) == n


def test_bounds_summary_and_graham():
    plan = {
        'steps': [
            {'action': 'delete', 'target': {'kind': 'k', 'id': '1'}},
            {'action': 'delete', 'target': {'kind': 'k', 'id': '2'}},
            {
                'action': 'remove_router_interface',
                'target': {'kind': 'r', 'id': '3'},
                'params': {'port_id': 'p'},
            },
        ],
        'edges': [['remove_router_interface:r:3[port_id=p]', 'delete:k:1']],
    }
    results = [
        {'id': 'delete:k:1', 'seconds': 2.0, 'started': 1.0},
        {'id': 'delete:k:2', 'seconds': 4.0, 'started': 0.0},
        {
            'id': 'remove_router_interface:r:3[port_id=p]',
            'seconds': 1.0,
            'started': 0.0,
        },
    ]
    b = bound.bounds(plan, results, parallel=1)
    assert b['critical_path'] == 4.0
    assert b['work'] == 7.0
    assert b['graham'] == 7.0  # one worker: the work is the bound
    assert b['executed_span'] == 4.0
    assert bound.bounds(plan, results, parallel=8)['graham'] == 4.0


def test_time_waiting_for_a_slot_is_not_the_clouds():
    plan = {'steps': [{'id': 'a'}, {'id': 'b'}], 'edges': [['a', 'b']]}
    results = [
        {'id': 'a', 'seconds': 5.0, 'queued': 3.0, 'started': 0.0},
        {'id': 'b', 'seconds': 1.0, 'queued': 0.0, 'started': 5.0},
    ]
    b = bound.bounds(plan, results, parallel=1)
    assert b['critical_path'] == 3.0
    assert b['work'] == 3.0
    assert b['queued_total'] == 3.0 and b['queued_max'] == 3.0
    assert b['executed_span'] == 6.0  # the wall time of the run still


def test_slot_waits_are_summed_per_service():
    plan = {'steps': [{'id': s} for s in 'abc'], 'edges': []}
    results = [
        {'id': 'a', 'kind': 'compute.server', 'seconds': 5, 'queued': 3},
        {'id': 'b', 'kind': 'compute.keypair', 'seconds': 2, 'queued': 1},
        {'id': 'c', 'kind': 'network.port', 'seconds': 1, 'queued': 0.5},
    ]
    b = bound.bounds(plan, results, parallel=1)
    assert b['queued_by_service'] == {'compute': 4.0, 'network': 0.5}


def test_ready_delays():
    results = [
        {'id': 'a', 'seconds': 2.0, 'started': 10.0},
        {'id': 'b', 'seconds': 1.0, 'started': 13.5},  # ready at 12
        {'id': 'c', 'seconds': 1.0, 'started': 11.0},  # no preds: origin 10
        {'id': 'd', 'seconds': 1.0, 'started': None},  # never ran
    ]
    delays = bound.ready_delays(
        ['a', 'b', 'c', 'd'], [('a', 'b'), ('b', 'd')], results
    )
    assert sorted(delays) == [0.0, 1.0, 1.5]
    plan = {
        'steps': [{'id': s} for s in 'abcd'],
        'edges': [['a', 'b'], ['b', 'd']],
    }
    b = bound.bounds(plan, results, parallel=2)
    assert b['ready_delay_max'] == 1.5
    assert b['ready_delay_mean'] == round(2.5 / 3, 3)
