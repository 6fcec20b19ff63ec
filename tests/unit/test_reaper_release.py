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

"""Issue #29 (8), the reaper's part: the quotas a cascade without
``--settle`` left frozen are released by the reaper only after its grace
period (or a grace period after its sweep found the owner), by a purge
that finds nothing left; what a token still in a service's cache made in
the window is purged first."""

import logging

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.regions import Regions
from osc_cascade.reaper import lock, service, sweep
from osc_cascade.workflows import after_delete, late_release, orphans
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_for, zero_delays
from tests.unit.test_reaper import GRACE, Lines


@pytest.fixture
def log():
    lines = Lines()
    logger = logging.getLogger('osc_cascade.reaper')
    logger.addHandler(lines)
    old = logger.level
    logger.setLevel(logging.DEBUG)
    yield lines
    logger.removeHandler(lines)
    logger.setLevel(old)


@pytest.fixture
def locks(tmp_path):
    held = lock.Locks(f'file://{tmp_path / "locks"}', 'reaper-a')
    held.start()
    yield held
    held.stop()


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def gone(cloud):
    """A project cascaded without --settle: deleted, its quotas frozen."""
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    scenarios.network(cloud, pid)
    pc, targets, plan = cascade_for(cloud, pid)
    outcome = pc.execute(plan, targets)
    pc.conn.identity.delete_project(pid)
    after_delete.finish(pc, outcome)
    cloud.add('domains', id='default', name='Default')
    assert frozen(cloud, pid)
    return pid


def frozen(cloud, pid):
    return cloud.quota_of('nova', pid).get(
        'instances'
    ) == 0 and cloud.has_quota('cinder', pid)


def released(cloud, pid):
    return not any(
        cloud.has_quota(s, pid) for s in ('nova', 'neutron', 'cinder')
    )


def reaper_of(cloud, locks, clock, **timing):
    conn = cloud.connection()
    purger = sweep.Purger(
        conn,
        orphans.select_kinds(kinds_mod.build()),
        locks,
        clock=clock,
        retry=zero_delays(),
    )
    timing.setdefault('grace_period', GRACE)
    timing.setdefault('sweep_interval', 0)
    return service.Reaper(
        purger,
        service.Timing(**timing),
        clock=clock,
        release=late_release.QuotaRelease(
            conn, Regions(conn), retry=zero_delays(), clock=clock
        ),
    )


def test_the_reaper_purges_the_window_then_releases(
    cloud, gone, locks, clock, log
):
    reaper = reaper_of(cloud, locks, clock)
    reaper.deleted(gone, 'identity.project.deleted')
    # in the window, with a token a service validated before the drain:
    # Glance has no quota; a Neutron freeze that did not take
    image = scenarios.image(cloud, gone, 'late')
    net, _subnet = scenarios.network(cloud, gone, name='late')
    clock.time += GRACE - 1
    reaper.tick()
    assert frozen(cloud, gone)

    clock.time += 1
    reaper.tick()
    assert not cloud.exists('images', image['id'])
    assert not cloud.exists('networks', net['id'])
    # it deleted something: the release waits for a purge that finds
    # nothing
    assert frozen(cloud, gone)
    assert log.having(f'project {gone}: purged: ')

    clock.time = reaper.schedule.get(gone).due
    reaper.tick()
    assert released(cloud, gone)
    assert log.having(f'project {gone}: its frozen quotas are released')
    assert reaper.schedule.ids() == set()


def test_a_purge_that_finds_nothing_releases(cloud, gone, locks, clock, log):
    reaper = reaper_of(cloud, locks, clock)
    reaper.deleted(gone)
    clock.time += GRACE
    reaper.tick()  # Neutron's frozen row is an orphan: purged
    clock.time = reaper.schedule.get(gone).due
    reaper.tick()
    assert log.having(f'project {gone}: clean: nothing left')
    assert released(cloud, gone)


def test_the_sweep_waits_a_grace_period_before_the_release(
    cloud, gone, locks, clock, log
):
    # no notification came (the reaper was down): its sweep finds the
    # owner, whose delete may be seconds old
    reaper = reaper_of(cloud, locks, clock, sweep_interval=3600)
    late = scenarios.image(cloud, gone, 'late')
    reaper.tick()
    assert not cloud.exists('images', late['id'])
    assert frozen(cloud, gone)
    assert reaper.schedule.get(gone).due == clock.now() + GRACE

    # the sweep left Neutron's frozen row (the window, counted from the
    # sweep); the purge a grace period later resets it, and one more
    # purge that finds nothing releases the rest
    clock.time += GRACE
    reaper.tick()
    assert not cloud.has_quota('neutron', gone)
    clock.time = reaper.schedule.get(gone).due
    reaper.tick()
    assert released(cloud, gone)


def test_a_dry_run_releases_nothing(cloud, gone, locks, clock, log):
    reaper = reaper_of(cloud, locks, clock)
    reaper.purger.dry_run = True
    reaper.deleted(gone)
    clock.time += GRACE
    reaper.tick()
    assert frozen(cloud, gone)


def test_a_release_that_fails_is_tried_again(cloud, gone, locks, clock, log):
    reaper = reaper_of(cloud, locks, clock)
    reaper.deleted(gone)
    clock.time += GRACE
    reaper.tick()
    cloud.forbidden.add(r'/os-quota-sets/')
    clock.time = reaper.schedule.get(gone).due
    reaper.tick()
    assert frozen(cloud, gone)
    assert log.having(f'project {gone}: purge failed (1 time(s)): ')
    cloud.forbidden.clear()
    clock.time = reaper.schedule.get(gone).due
    reaper.tick()
    assert released(cloud, gone)


def neutron_frozen(cloud, pid):
    return cloud.quota_of('neutron', pid).get('network') == 0


def test_the_sweep_leaves_the_quota_rows_of_an_owner_it_just_found(
    cloud, gone, locks, clock, log
):
    # no notification came: the sweep may run seconds after the delete,
    # inside the token cache window. Neutron's quota row is listed by
    # every project (an orphan row); resetting it now would let a token
    # cached before the drain create networks again
    reaper = reaper_of(cloud, locks, clock, sweep_interval=3600)
    late = scenarios.image(cloud, gone, 'late')
    reaper.tick()
    assert not cloud.exists('images', late['id'])  # the rest is purged
    assert neutron_frozen(cloud, gone)
    assert frozen(cloud, gone)
    assert log.having(f'{gone}: its quota rows stay frozen until')

    clock.time += GRACE
    reaper.tick()
    assert not cloud.has_quota('neutron', gone)
    clock.time = reaper.schedule.get(gone).due
    reaper.tick()
    assert released(cloud, gone)


def test_quota_rows_wait_the_window_after_the_sweep_first_saw_the_owner(
    cloud, gone, locks, clock
):
    late_release.forget(gone)  # the cascade ran on another host
    purger = reaper_of(cloud, locks, clock).purger
    assert purger.sweep()[gone] == sweep.Outcome(
        sweep.CLEAN, 'nothing left but its quota rows, until 300s from now'
    )
    assert neutron_frozen(cloud, gone)
    clock.time += late_release.WINDOW - 1
    purger.sweep()  # a second sweep, still inside the window
    assert neutron_frozen(cloud, gone)
    clock.time += 1
    assert purger.sweep()[gone].state == sweep.PURGED
    assert not cloud.has_quota('neutron', gone)


def test_a_pending_release_later_than_the_window_holds_the_rows(
    cloud, gone, locks, clock
):
    # the pending release of this host says when the window ends: the
    # later of it and the first sighting is kept
    purger = reaper_of(cloud, locks, clock).purger
    entry = late_release.pending(gone)
    assert entry is not None
    entry['release_after'] = '2999-01-01T00:00:00Z'
    late_release._write(late_release.pending_path(gone), entry)
    purger.sweep()
    clock.time += late_release.WINDOW
    purger.sweep()
    assert neutron_frozen(cloud, gone)
