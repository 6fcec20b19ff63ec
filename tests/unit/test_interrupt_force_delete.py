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

"""`cluster force-delete` stopped by SIGINT or SIGTERM: it stops at a safe
point (never between the abandon and its manifest), each manifest says what
was done, exit 130/143, and a re-run finishes the job."""

import json
import os
import signal

import pytest

from osc_cascade.api import heat
from osc_cascade.engine import executor
from osc_cascade.engine.errors import Interrupted
from osc_cascade.engine.executor import DONE
from osc_cascade.workflows import clusters, force_delete
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeHeatCloud
from tests.unit.test_cluster_force_delete import (
    find,
    force,
    k8s_stack,
    magnum_k8s,
    read_json,
    resumer,
)

MAGNUM = clusters.MagnumClusters()
REAL_ABANDON = heat.abandon_stack


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # default manifests land here
    with FakeHeatCloud() as c:
        yield c


@pytest.fixture
def clock():
    # a subnet's delete retried "in use" races the server's on it
    return FakeClock(yields=True)


def signal_after_abandon(monkeypatch, engine, signum=signal.SIGINT):
    """The signal comes while Heat answers the abandon."""
    real = heat.abandon_stack

    def abandon_then_signal(*args, **kwargs):
        answer = real(*args, **kwargs)
        engine.interrupt(signum)
        return answer

    monkeypatch.setattr(heat, 'abandon_stack', abandon_then_signal)


def test_a_signal_in_the_grace_period_abandons_nothing(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    engine.notify = lambda text: (
        engine.interrupt(signal.SIGTERM) if 'normal way' in text else None
    )
    previews = engine.preview_all([find(cloud, 'k8s', MAGNUM)])

    with pytest.raises(Interrupted) as err:
        engine.run_all(previews)

    assert err.value.signum == signal.SIGTERM
    assert str(err.value).startswith(
        'Interrupted (SIGTERM): 0 cluster(s) done or failed, 1 interrupted'
    )
    [outcome] = engine.outcomes
    assert outcome.result == force_delete.FAILED
    assert outcome.error.endswith(
        'its normal delete was started; nothing was abandoned'
    )
    assert not any(p.endswith('/abandon') for _, p in cloud.changes)
    assert os.listdir('.') == []  # no manifest
    assert clock.time == clock.start  # the grace period was not waited out
    assert cloud.exists('stacks', built['stack']['id'])

    # a re-run finishes: the cluster is being deleted, its stack abandoned
    again = force(cloud, clock)
    [done] = again.run_all(again.preview_all([find(cloud, 'k8s', MAGNUM)]))
    assert (done.result, done.ok) == ('abandoned', True)
    assert not cloud.exists('stacks', built['stack']['id'])


def test_a_signal_during_the_abandon_keeps_a_consistent_manifest(
    cloud, clock, monkeypatch
):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, delete_leftovers=True)
    signal_after_abandon(monkeypatch, engine)
    previews = engine.preview_all([find(cloud, 'k8s', MAGNUM)])

    with pytest.raises(Interrupted):
        engine.run_all(previews)

    [outcome] = engine.outcomes
    # the abandon was answered: it is recorded, and nothing was deleted
    assert outcome.result == force_delete.ABANDONED
    assert outcome.manifest
    assert f'--delete-leftovers --manifest {outcome.manifest}' in (
        outcome.error
    )
    written = read_json(outcome.manifest)
    assert written['state'] == force_delete.ABANDONED
    assert len(written['resources']) == 6
    assert cloud.exists('networks', built['network']['id'])

    monkeypatch.setattr(heat, 'abandon_stack', REAL_ABANDON)
    resumed = resumer(cloud, clock).resume(
        resumer(cloud, clock).load(outcome.manifest)
    )
    assert resumed.error == ''
    for collection in ('networks', 'subnets', 'routers', 'servers'):
        assert not cloud.exists(collection, built[collection[:-1]]['id'])


def test_a_signal_while_leftovers_are_deleted_and_the_resume_finishes(
    cloud, clock, monkeypatch
):
    # one step at a time, asleep or not: the signal at the first step
    # done finds the others not started yet (with a step's sleeps free of
    # its thread, they could all be done by the time the event is seen)
    monkeypatch.setattr(executor, 'THREADS_PER_SLOT', 1)
    monkeypatch.setattr(executor, 'SLEEPING_THREADS', 0)
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, delete_leftovers=True, parallel=1)

    def on_event(event):
        if event.kind == DONE:
            engine.interrupt(signal.SIGINT)

    engine.on_event = on_event
    previews = engine.preview_all([find(cloud, 'k8s', MAGNUM)])
    with pytest.raises(Interrupted):
        engine.run_all(previews)

    [outcome] = engine.outcomes
    assert outcome.error.startswith('Interrupted (SIGINT): ')
    written = read_json(outcome.manifest)
    assert written['leftovers'] == outcome.leftovers
    done = [k for k, v in outcome.leftovers.items() if v == 'deleted']
    # what the signal stopped (or what waited on it: under load a step
    # may have failed its instant fake-clock retries before the signal)
    stopped = [
        k
        for k, v in outcome.leftovers.items()
        if v.startswith(('skipped', 'failed'))
    ]
    assert done and stopped
    assert cloud.exists('networks', built['network']['id'])

    resumed = resumer(cloud, clock)
    final = resumed.resume(resumed.load(outcome.manifest))
    assert not [k for k, v in final.leftovers.items() if 'interrupted' in v]
    for collection in ('networks', 'subnets', 'routers', 'servers'):
        assert not cloud.exists(collection, built[collection[:-1]]['id'])


def test_a_signal_stops_the_resume_after_writing_its_manifest(cloud, clock):
    built, path = abandoned(cloud, clock)
    engine = resumer(cloud, clock)
    engine.options.parallel = 1
    engine.on_event = lambda event: (
        engine.interrupt(signal.SIGINT) if event.kind == DONE else None
    )
    with pytest.raises(Interrupted, match='--delete-leftovers --manifest'):
        engine.resume(engine.load(path))
    [outcome] = engine.outcomes
    assert read_json(path)['leftovers'] == outcome.leftovers
    again = resumer(cloud, clock)
    again.resume(again.load(path))
    assert not cloud.exists('networks', built['network']['id'])


def abandoned(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(engine.preview(find(cloud, 'k8s', MAGNUM)))
    assert outcome.result == 'abandoned'
    return built, outcome.manifest


def test_clusters_after_the_signal_are_not_started(cloud, clock):
    built = {}
    for name in ('a', 'b'):
        project = scenarios.project(cloud, name + '-tenant')
        built[name] = k8s_stack(cloud, project['id'], name=name + '-stack')
        cloud.magnum_cluster(name, project['id'], built[name]['stack'])
    engine = force(cloud, clock)
    previews = engine.preview_all([find(cloud, n, MAGNUM) for n in 'ab'])
    engine.notify = lambda text: (
        engine.interrupt(signal.SIGINT) if 'abandoned stack' in text else None
    )
    with pytest.raises(Interrupted, match=r'1 cluster\(s\) done or failed, 1'):
        engine.run_all(previews)
    a, b = engine.outcomes
    assert (a.result, a.ok) == ('abandoned', True)
    assert (b.result, b.error) == (
        force_delete.FAILED,
        force_delete.NOT_STARTED,
    )
    assert cloud.exists('stacks', built['b']['stack']['id'])


@pytest.mark.parametrize(
    ('signum', 'code'), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_the_command_shows_the_outcome_and_exits_with_the_signal(
    cloud, osc, monkeypatch, signum, code, shell_signal_handlers
):
    built = magnum_k8s(cloud)
    real = heat.abandon_stack

    def abandon_then_signal(*args, **kwargs):
        answer = real(*args, **kwargs)
        os.kill(os.getpid(), signum)
        return answer

    monkeypatch.setattr(heat, 'abandon_stack', abandon_then_signal)
    with pytest.raises(SystemExit) as exit_:
        osc(
            'cluster',
            'force-delete',
            '--yes',
            '--grace',
            '1',
            '--delete-leftovers',
            'k8s',
        )
    assert exit_.value.code == code
    assert (
        signal.getsignal(signal.SIGINT) is shell_signal_handlers[signal.SIGINT]
    )
    [path] = [f for f in os.listdir('.') if f.endswith('-abandoned.json')]
    assert json.load(open(path))['state'] == 'abandoned'
    assert cloud.exists('networks', built['network']['id'])

    monkeypatch.setattr(heat, 'abandon_stack', REAL_ABANDON)
    # the fake clock makes a 409's retries instant: under load a delete may
    # spend them all before what it waits for is gone, and then one more
    # resume finishes (each resume looks only for what is left)
    for _resume in range(2):
        again = osc(
            'cluster',
            'force-delete',
            '--yes',
            '--delete-leftovers',
            '--manifest',
            path,
        )
        assert again.code == 1, again.stderr  # the fake has no Swift
        assert 'object-store is not in the catalog' in again.stderr
        if not cloud.exists('networks', built['network']['id']):
            break
    assert not cloud.exists('networks', built['network']['id'])
