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

"""Stage 1 of many projects (``ManyProjects.drain``): the drains run at
once (``parallel`` at most), children before their parents; one refused
keeps its project and its parents, not the others; a stop or a crash
mid-drain leaves each project drained or untouched, and a re-run
finishes."""

import signal
import threading

import pytest

from osc_cascade.engine.errors import CascadeError, Interrupted
from osc_cascade.workflows import drain_record
from tests.unit import scenarios
from tests.unit.test_many_projects import many, network


def projects(cloud, count):
    made = [scenarios.project(cloud, f'P{n}') for n in range(count)]
    for p in made:
        network(cloud, p)
    return made


def wrap(wf, before):
    """Call ``before(project_id)`` ahead of each project's drain."""
    real = wf.drainer.drain

    def drain(project_id):
        before(project_id)
        return real(project_id)

    wf.drainer.drain = drain


def test_the_drains_run_at_once(cloud):
    made = projects(cloud, 4)
    wf, targets, plan = many(cloud, *(p['name'] for p in made), parallel=4)
    # each drain waits for the three others to start: one after another,
    # the first would wait for ever (here: 10 s, then BrokenBarrierError)
    barrier = threading.Barrier(4, timeout=10)
    wrap(wf, lambda _id: barrier.wait())
    outcome = wf.execute(plan, targets)
    assert len(outcome.empty_projects) == 4
    assert outcome.stays == {}
    assert len(wf.records) == 4


def test_no_more_at_once_than_parallel(cloud):
    made = projects(cloud, 6)
    wf, targets, plan = many(cloud, *(p['name'] for p in made), parallel=2)
    lock, now, most = threading.Lock(), [0], [0]
    real = wf.drainer.drain

    def drain(project_id):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        try:
            return real(project_id)
        finally:
            with lock:
                now[0] -= 1

    wf.drainer.drain = drain
    wf.execute(plan, targets)
    assert most[0] <= 2
    assert len(wf.records) == 6


def test_a_parent_is_drained_after_its_children(cloud):
    top = scenarios.project(cloud, 'top')
    kids = [
        scenarios.project(cloud, f'kid{n}', parent_id=top['id'])
        for n in range(3)
    ]
    wf, targets, plan = many(cloud, 'top', parallel=8)
    order = []
    real = wf.drainer.drain

    def drain(project_id):
        order.append(('start', project_id))
        result = real(project_id)
        order.append(('end', project_id))
        return result

    wf.drainer.drain = drain
    outcome = wf.execute(plan, targets)
    started = order.index(('start', top['id']))
    for kid in kids:
        assert order.index(('end', kid['id'])) < started
    assert [t.id for t in outcome.empty_projects] == [top['id']]


def test_a_refused_drain_keeps_its_project_and_parents_alone(cloud):
    top = scenarios.project(cloud, 'top')
    child = scenarios.project(cloud, 'child', parent_id=top['id'])
    a, b = scenarios.project(cloud, 'A'), scenarios.project(cloud, 'B')
    for p in (top, child, a, b):
        network(cloud, p)
    wf, targets, plan = many(cloud, 'top', 'A', 'B', parallel=4)

    def changed(body):
        raise CascadeError(f'Project {child["id"]} changed since listed.')

    wf.drainer.expected[child['id']] = changed
    outcome = wf.execute(plan, targets)
    assert sorted(t.name for t in outcome.empty_projects) == ['A', 'B']
    assert set(outcome.stays) == {top['id'], child['id']}
    assert 'changed since listed' in outcome.stays[child['id']]
    assert outcome.stays[top['id']] == 'a child project of it stays'
    assert child['id'] in wf.refusals
    # neither was drained: both as they were, no record
    for p in (top, child):
        body = cloud.get('projects', p['id'])
        assert body['enabled'] is True
        assert not body.get(drain_record.RECORD)
    # the others emptied (their roots deleted by the caller)
    assert cloud.owned_by(a['id']) == [] and cloud.owned_by(b['id']) == []
    assert cloud.owned_by(child['id']) != []


def test_a_stop_mid_drain_starts_no_more_and_a_rerun_finishes(cloud):
    made = projects(cloud, 4)
    names = [p['name'] for p in made]
    wf, targets, plan = many(cloud, *names, parallel=1)
    nets = len(cloud.all('networks'))
    calls = []

    def stop_at_first(project_id):
        calls.append(project_id)
        wf.interrupt(signal.SIGTERM)

    wrap(wf, stop_at_first)
    with pytest.raises(Interrupted, match='run the same command again'):
        wf.execute(plan, targets)
    # the drain under way finished, recorded; no other began
    [first] = calls
    for p in made:
        body = cloud.get('projects', p['id'])
        drained = p['id'] == first
        assert body['enabled'] is not drained
        assert bool(body.get(drain_record.RECORD)) is drained
    # nothing was deleted
    assert len(cloud.all('networks')) == nets
    wf, targets, plan = many(cloud, *names, parallel=4)
    outcome = wf.execute(plan, targets)
    assert len(outcome.empty_projects) == 4
    for p in made:
        assert cloud.owned_by(p['id']) == []


def test_a_crash_mid_drain_lets_the_others_finish_and_a_rerun_ends(cloud):
    made = projects(cloud, 4)
    names = [p['name'] for p in made]
    wf, targets, plan = many(cloud, *names, parallel=4)
    doomed = made[1]['id']

    def crash(project_id):
        if project_id == doomed:
            raise RuntimeError('killed')

    wrap(wf, crash)
    with pytest.raises(RuntimeError, match='killed'):
        wf.execute(plan, targets)
    # nothing was deleted; each other drain that began ended recorded
    for p in made:
        assert cloud.exists('projects', p['id'])
        body = cloud.get('projects', p['id'])
        if not body['enabled']:
            record = drain_record.DrainRecord.record_in(p['id'], body)
            assert record['stage'] == drain_record.DRAINED
    assert cloud.get('projects', doomed)['enabled'] is True
    wf, targets, plan = many(cloud, *names, parallel=4)
    outcome = wf.execute(plan, targets)
    assert len(outcome.empty_projects) == 4
