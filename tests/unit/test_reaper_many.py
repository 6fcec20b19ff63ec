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

"""The reaper's backlog after a mass deletion: the due projects purged in
one plan and one run, each ending on its own (one in doubt, or one whose
delete fails, is tried again alone; the others are done); a stop mid-run
and the next tick finish."""

import pytest

from osc_cascade.engine import executor as executor_mod
from osc_cascade.reaper import sweep
from osc_cascade.workflows import orphans
from tests.unit import scenarios, test_reaper
from tests.unit.test_reaper import GRACE, make_reaper

# the reaper's own fixtures: its locks, its clock, the reaper
lock_url = test_reaper.lock_url
locks = test_reaper.locks
clock = test_reaper.clock
reaper = test_reaper.reaper


@pytest.fixture
def backlog(cloud):
    """Five projects deleted with plain `project delete`, a network each,
    and a live one."""
    cloud.add('domains', id='default', name='Default')
    gone = []
    for n in range(5):
        pid = scenarios.project(cloud, f'gone-{n}')['id']
        scenarios.network(cloud, pid, f'net-{n}')
        cloud.db['projects'].pop(pid)
        gone.append(pid)
    live = scenarios.project(cloud, 'live')['id']
    scenarios.network(cloud, live, 'live-net')
    return gone, live


def runs(monkeypatch):
    """The plans the executor runs, as their owners."""
    seen = []
    real = executor_mod.Executor.run

    def run(executor, plan):
        seen.append(sorted({s.target.project_id for s in plan.steps.values()}))
        return real(executor, plan)

    monkeypatch.setattr(executor_mod.Executor, 'run', run)
    return seen


def test_the_backlog_is_one_plan_and_one_run(
    cloud, backlog, reaper, clock, monkeypatch
):
    gone, live = backlog
    seen = runs(monkeypatch)
    for pid in gone:
        reaper.deleted(pid)
    clock.time += GRACE
    reaper.tick()
    assert seen == [sorted(gone)]
    for pid in gone:
        assert cloud.owned_by(pid) == []
    assert cloud.owned_by(live) != []
    assert reaper.schedule.ids() == set()


def test_one_owner_in_doubt_at_the_purge_fails_alone(
    cloud, backlog, reaper, clock, monkeypatch
):
    gone, _live = backlog
    doubt = gone[2]
    real = orphans.OrphanSearch.reconfirm

    def then_refused(search, findings):
        cloud.forbidden.add(rf'/v3/projects/{doubt}$')
        return real(search, findings)

    monkeypatch.setattr(orphans.OrphanSearch, 'reconfirm', then_refused)
    outcomes = reaper.purger.purge(gone)
    assert outcomes[doubt].state == sweep.FAILED
    assert f'owner {doubt} is gone was refused' in outcomes[doubt].detail
    assert 'Its resources were not purged' in outcomes[doubt].detail
    assert cloud.owned_by(doubt) != []
    for pid in gone:
        if pid != doubt:
            assert outcomes[pid].state == sweep.PURGED
            assert cloud.owned_by(pid) == []


def test_one_failing_delete_is_tried_again_alone(
    cloud, backlog, reaper, clock
):
    gone, _live = backlog
    bad = gone[0]
    net = next(n for n in cloud.all('networks') if n['project_id'] == bad)
    cloud.forbidden.add(rf'/networks/{net["id"]}$')
    for pid in gone:
        reaper.deleted(pid)
    clock.time += GRACE
    reaper.tick()
    assert reaper.schedule.ids() == {bad}
    assert reaper.schedule.get(bad).failures == 1
    for pid in gone[1:]:
        assert cloud.owned_by(pid) == []
    cloud.forbidden.clear()
    clock.time += 60
    reaper.tick()
    assert cloud.owned_by(bad) == []
    assert reaper.schedule.ids() == set()


def test_a_stop_mid_run_then_a_restart_finishes(
    cloud, backlog, reaper, clock, monkeypatch
):
    """The stop comes once the run's first delete is done: what was not
    started fails (tried again), and a new reaper's tick (a restart: its
    schedule is lost, the sweep finds them) purges the rest."""
    gone, live = backlog
    real = executor_mod.Executor.run

    def run_then_stop(executor, plan):
        real_on_event = executor.on_event

        def on_event(event):
            if real_on_event:
                real_on_event(event)
            if event.kind == executor_mod.DONE:
                reaper.stop()

        executor.on_event = on_event
        return real(executor, plan)

    monkeypatch.setattr(executor_mod.Executor, 'run', run_then_stop)
    outcomes = reaper.purger.purge(gone)
    monkeypatch.undo()
    failed = [p for p in gone if outcomes[p].state == sweep.FAILED]
    assert failed  # not all of them went
    assert any(cloud.owned_by(p) != [] for p in failed)
    # a restarted reaper's sweep finds them all and ends each
    again = make_reaper(cloud, reaper.purger.locks, clock, sweep_interval=1)
    again.tick()
    for pid in gone:
        assert cloud.owned_by(pid) == []
    assert cloud.owned_by(live) != []
