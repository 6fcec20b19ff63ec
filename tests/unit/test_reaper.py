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

"""The reaper against the fake cloud, on oslo.messaging's fake bus and a
fake clock: a deleted project's orphans purged after the grace period,
duplicates, failures tried again with backoff, the dry run, projects
another actor holds, domains, the sweep."""

import logging
import threading

from oslo_config import cfg
import oslo_messaging
from oslo_messaging._drivers import impl_fake
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine import executor as executor_mod
from osc_cascade.reaper import listener, lock, service, sweep
from osc_cascade.workflows import orphans
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.run import zero_delays

GRACE = 300.0


class Lines(logging.Handler):
    """The reaper's log lines (pytest runs with -p no:logging)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(f'{record.levelname} {record.getMessage()}')

    def having(self, text):
        return [line for line in self.lines if text in line]


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
def world(cloud, external):
    """A project deleted with plain `project delete` (its resources stay)
    and a live twin."""
    gone = scenarios.full_project(cloud, 'gone', external)
    live = scenarios.full_project(cloud, 'live', external)
    cloud.db['projects'].pop(gone['project']['id'])
    cloud.add('domains', id='default', name='Default')
    cloud.add('users', id='user-gone', name='gone-user')
    return {
        'gone': gone['project']['id'],
        'live': live['project']['id'],
        'server': gone['server'],
    }


@pytest.fixture
def lock_url(tmp_path):
    return f'file://{tmp_path / "locks"}'


@pytest.fixture
def locks(lock_url):
    held = lock.Locks(lock_url, 'reaper-a')
    held.start()
    yield held
    held.stop()


@pytest.fixture
def clock():
    return FakeClock()


def make_reaper(cloud, locks, clock, dry_run=False, **timing):
    purger = sweep.Purger(
        cloud.connection(),
        orphans.select_kinds(kinds_mod.build()),
        locks,
        dry_run=dry_run,
        clock=clock,
        retry=zero_delays(),
    )
    timing.setdefault('grace_period', GRACE)
    timing.setdefault('sweep_interval', 0)
    return service.Reaper(purger, service.Timing(**timing), clock=clock)


@pytest.fixture
def reaper(cloud, locks, clock):
    return make_reaper(cloud, locks, clock)


class Bus:
    """oslo.messaging's fake driver, as Keystone's notifier and the
    reapers' listeners see it."""

    def __init__(self):
        self.conf = cfg.ConfigOpts()
        oslo_messaging.get_notification_transport(self.conf, url='fake://')
        # as keystone.conf sets it
        self.conf.set_override('control_exchange', 'keystone')
        self.transport = oslo_messaging.get_notification_transport(
            self.conf, url='fake://'
        )
        self.notifier = oslo_messaging.Notifier(
            self.transport,
            'identity.keystone-host',
            driver='messagingv2',
            topics=['notifications'],
        )
        self.listeners = []
        self._received = threading.Condition()
        self.received = 0

    def listen(self, on_deleted, pool='osc-cascade-reaper'):
        def counted(project_id, why):
            on_deleted(project_id, why)
            with self._received:
                self.received += 1
                self._received.notify_all()

        server = listener.listener(
            self.transport,
            listener.DeletionEndpoint(counted),
            exchange='keystone',
            topics=['notifications'],
            pool=pool,
        )
        server.start()
        self.listeners.append(server)
        return server

    def deleted(self, payload, what='project'):
        self.notifier.info({}, f'identity.{what}.deleted', payload)

    def wait_for(self, count):
        """Until ``count`` deletions have reached the listeners."""
        with self._received:
            assert self._received.wait_for(
                lambda: self.received >= count, timeout=10
            )

    def close(self):
        for server in self.listeners:
            server.stop()
            server.wait()
        self.transport.cleanup()
        impl_fake.FakeExchangeManager.cleanup()


@pytest.fixture
def bus():
    b = Bus()
    yield b
    b.close()


def basic(project_id):
    return {'resource_info': project_id}


def cadf(project_id, outcome='success'):
    """As keystone.notifications._create_cadf_payload sends it."""
    return {
        'typeURI': 'http://schemas.dmtf.org/cloud/audit/1.0/event',
        'id': 'event-id',
        'eventType': 'activity',
        'action': 'deleted.project',
        'outcome': outcome,
        'initiator': {'typeURI': 'service/security/account/user', 'id': 'u'},
        'target': {'typeURI': 'data/security/project', 'id': project_id},
        'observer': {'typeURI': 'service/security', 'id': 'keystone'},
        'resource_info': project_id,
    }


# -- the notifications ------------------------------------------------------


@pytest.mark.parametrize(
    'payload, found',
    [
        (basic('p1'), 'p1'),
        (cadf('p1'), 'p1'),
        ({**cadf('p1'), 'resource_info': None}, 'p1'),
        ({**cadf(''), 'resource_info': 'p1'}, 'p1'),
        (cadf('p1', outcome='failure'), None),
        ({'resource_info': ''}, None),
        ({'resource_info': 42}, None),
        ({}, None),
        ('p1', None),
    ],
)
def test_the_id_is_read_from_basic_and_cadf_payloads(payload, found):
    assert listener.deleted_id(payload) == found


def test_a_notification_purges_the_project_after_the_grace(
    cloud, world, reaper, clock, bus, log
):
    gone = world['gone']
    live_before = cloud.owned_by(world['live'])
    bus.listen(reaper.deleted)
    bus.deleted(basic(gone))
    bus.wait_for(1)
    assert reaper.schedule.get(gone).due == clock.now() + GRACE
    assert log.having(f'project {gone} deleted (identity.project.deleted')

    # nothing due: it sleeps until the purge, or at most IDLE
    assert reaper.tick() == service.IDLE
    clock.time += GRACE - 30
    assert reaper.tick() == 30
    clock.time -= GRACE - 30
    clock.time += GRACE - 1
    reaper.tick()
    assert cloud.changes == []

    clock.time += 1
    reaper.tick()
    assert cloud.owned_by(gone) == []
    assert cloud.owned_by(world['live']) == live_before
    assert reaper.schedule.ids() == set()
    assert log.having(f'plan for {gone}: ')
    assert log.having(f'project {gone}: purged: ')
    assert log.having(': done')


def test_a_cadf_notification_is_purged_too(cloud, world, reaper, clock, bus):
    bus.deleted(cadf(world['gone']))  # sent before the listener starts
    bus.listen(reaper.deleted)
    bus.wait_for(1)
    clock.time += GRACE
    reaper.tick()
    assert cloud.owned_by(world['gone']) == []


def test_other_events_and_payloads_without_an_id_are_ignored(
    world, reaper, bus, log
):
    bus.listen(reaper.deleted)
    bus.notifier.info({}, 'identity.project.created', basic('new'))
    bus.notifier.info({}, 'identity.project.deleted', {'nothing': 1})
    bus.deleted(basic(world['gone']))
    bus.wait_for(1)
    assert reaper.schedule.ids() == {world['gone']}
    assert log.having('names no project: ignored')


def test_a_duplicate_changes_nothing_more(cloud, world, reaper, clock, bus):
    gone = world['gone']
    bus.listen(reaper.deleted)
    bus.deleted(basic(gone))
    bus.wait_for(1)
    due = reaper.schedule.get(gone).due
    clock.time += 10
    reaper.deleted(gone, 'redelivered')  # while it waits: one entry
    assert reaper.schedule.get(gone).due == due
    clock.time += GRACE
    reaper.tick()
    purged = list(cloud.changes)
    assert cloud.owned_by(gone) == []

    bus.deleted(cadf(gone))  # after the purge: the same once more
    bus.wait_for(2)
    clock.time += GRACE
    reaper.tick()
    assert cloud.changes == purged


def test_own_pool_gets_a_copy_and_one_pool_shares_the_work(bus):
    """Beside another consumer (a pool of its own, like Ceilometer), each
    notification reaches the reapers' pool once, whichever reaper."""
    seen = {'a': [], 'b': [], 'other': []}
    bus.listen(lambda p, why: seen['a'].append(p))
    bus.listen(lambda p, why: seen['b'].append(p))
    bus.listen(lambda p, why: seen['other'].append(p), pool='ceilometer')
    for i in range(6):
        bus.deleted(basic(f'p{i}'))
    bus.wait_for(12)
    assert sorted(seen['a'] + seen['b']) == [f'p{i}' for i in range(6)]
    assert sorted(seen['other']) == [f'p{i}' for i in range(6)]


def test_a_domain_deletion_purges_each_of_its_projects(
    cloud, external, reaper, clock, bus
):
    """Keystone sends identity.project.deleted for each project of the
    domain, for the domain (a project too), then identity.domain.deleted:
    one purge of them all."""
    domain = cloud.add('domains', id='d' * 32, name='dom')
    projects = [
        scenarios.project(cloud, f'in-dom-{i}', domain_id=domain['id'])['id']
        for i in range(2)
    ]
    for pid in projects:
        scenarios.network(cloud, pid, f"net-{pid}")
        cloud.db['projects'].pop(pid)
    cloud.db['domains'].pop(domain['id'])
    bus.listen(reaper.deleted)
    for pid in projects:
        bus.deleted(cadf(pid))
    bus.deleted(cadf(domain['id']))
    bus.deleted(basic(domain['id']), what='domain')
    bus.wait_for(4)
    assert reaper.schedule.ids() == {*projects, domain['id']}
    clock.time += GRACE
    reaper.tick()
    for pid in projects:
        assert cloud.owned_by(pid) == []
    assert reaper.schedule.ids() == set()


# -- failures, locks, the dry run -------------------------------------------


def test_a_failed_purge_is_tried_again_with_backoff(
    cloud, world, reaper, clock, log
):
    gone = world['gone']
    server = world['server']['id']
    cloud.forbidden.add(rf'/servers/{server}$')
    reaper.deleted(gone, 'test')
    clock.time += GRACE
    reaper.tick()
    entry = reaper.schedule.get(gone)
    assert (entry.failures, entry.due) == (1, clock.now() + 60)
    assert cloud.exists('servers', server)
    assert log.having(f'ERROR project {gone}: purge failed (1 time(s)): ')

    clock.time += 60
    reaper.tick()
    entry = reaper.schedule.get(gone)
    assert (entry.failures, entry.due) == (2, clock.now() + 120)

    cloud.forbidden.clear()
    clock.time += 119
    reaper.tick()
    assert cloud.exists('servers', server)  # not yet due
    clock.time += 1
    reaper.tick()
    assert cloud.owned_by(gone) == []
    assert reaper.schedule.ids() == set()


def test_backoff_doubles_up_to_its_ceiling():
    retry = service.Timing(retry_delay=60, retry_max_delay=600).retry
    waits = [retry.delay(n) for n in range(1, 7)]
    assert waits == [60, 120, 240, 480, 600, 600]


def test_a_failure_of_the_search_is_tried_again(cloud, world, reaper, clock):
    gone = world['gone']
    cloud.forbidden.add(rf'/v3/projects/{gone}$')  # cannot prove it gone
    reaper.deleted(gone)
    clock.time += GRACE
    reaper.tick()
    assert reaper.schedule.get(gone).failures == 1
    assert cloud.changes == []


def test_an_unexpected_error_is_an_outcome_not_a_crash(
    cloud, world, locks, clock, monkeypatch, log
):
    reaper = make_reaper(cloud, locks, clock)

    def broken(*args, **kwargs):
        raise RuntimeError('bug')

    monkeypatch.setattr(orphans.OrphanSearch, 'find', broken)
    outcome = reaper.purger.purge([world['gone']])
    assert outcome == {world['gone']: sweep.Outcome(sweep.FAILED, 'bug')}
    assert log.having('ERROR purge of')


def test_the_dry_run_only_logs(cloud, world, locks, clock, log):
    reaper = make_reaper(cloud, locks, clock, dry_run=True)
    gone = world['gone']
    reaper.deleted(gone)
    clock.time += GRACE
    reaper.tick()
    assert cloud.changes == []
    assert log.having('dry run: would delete compute.server')
    assert log.having(f'project {gone}: dry run: ')
    assert reaper.schedule.ids() == set()  # not tried again


def test_a_project_held_by_another_actor_is_skipped_and_tried_later(
    cloud, world, reaper, clock, lock_url, log
):
    gone = world['gone']
    other = lock.Locks(lock_url, 'reaper-b')
    other.start()
    try:
        with other.held(gone) as taken:
            assert taken
            reaper.deleted(gone)
            clock.time += GRACE
            before = len(cloud.requests)
            reaper.tick()
            assert cloud.requests[before:] == []  # not even searched
            entry = reaper.schedule.get(gone)
            assert (entry.failures, entry.due) == (0, clock.now() + 60)
            assert log.having(f'project {gone} is held by another actor')
    finally:
        other.stop()
    clock.time += 60
    reaper.tick()
    assert cloud.owned_by(gone) == []


def test_a_project_that_exists_again_is_kept(cloud, world, reaper, clock):
    """Proven gone by the search, back by the re-check before the purge."""
    gone = world['gone']
    project = {'id': gone, 'name': 'back', 'domain_id': 'default'}
    calls = []
    real = orphans.OrphanSearch.reconfirm

    def back_then(search, findings):
        calls.append(gone)
        cloud.db['projects'][gone] = project
        return real(search, findings)

    orphans_patch = pytest.MonkeyPatch()
    orphans_patch.setattr(orphans.OrphanSearch, 'reconfirm', back_then)
    try:
        outcome = reaper.purger.purge([gone])
    finally:
        orphans_patch.undo()
    assert calls == [gone]
    assert outcome[gone] == sweep.Outcome(
        sweep.CLEAN, 'the project exists again'
    )
    assert cloud.changes == []


def test_a_stopped_purger_deletes_nothing(cloud, world, reaper):
    reaper.stop()
    assert reaper.stopped
    outcome = reaper.purger.purge([world['gone']])
    assert outcome[world['gone']].state == sweep.FAILED
    assert 'stopping' in outcome[world['gone']].detail
    assert cloud.changes == []
    reaper.run()  # returns at once
    reaper.deleted(world['gone'])
    reaper.tick()
    assert cloud.changes == []


def test_a_notification_after_the_stop_is_left_to_the_sweep(
    world, reaper, log
):
    reaper.stop()
    reaper.deleted(world['gone'], 'late')
    assert reaper.schedule.ids() == set()
    assert log.having(
        f'project {world["gone"]} deleted (late): stopping, left to the '
        'next sweep'
    )


def test_stop_stops_the_purge_under_way(cloud, world, reaper, clock):
    """A SIGTERM during the purge: the executor stops, what was not
    started is left (the project is tried again by a later sweep)."""
    stopped = []
    real_run = executor_mod.Executor.run

    def run_then_stop(executor, plan):
        reaper.stop()
        stopped.append(executor.stopped)
        return real_run(executor, plan)

    patch = pytest.MonkeyPatch()
    patch.setattr(executor_mod.Executor, 'run', run_then_stop)
    try:
        outcome = reaper.purger.purge([world['gone']])
    finally:
        patch.undo()
    assert stopped == [True]
    assert outcome[world['gone']].state == sweep.FAILED
    assert 'interrupted' in outcome[world['gone']].detail
    assert cloud.changes == []


# -- the sweep --------------------------------------------------------------


def test_the_sweep_purges_what_no_notification_announced(
    cloud, world, locks, clock, log
):
    reaper = make_reaper(cloud, locks, clock, sweep_interval=3600)
    waiting = scenarios.project(cloud, 'waiting')['id']
    net, _subnet = scenarios.network(cloud, waiting, 'waiting-net')
    cloud.db['projects'].pop(waiting)
    reaper.deleted(waiting)  # in its grace period: the sweep leaves it
    reaper.tick()
    assert cloud.owned_by(world['gone']) == []
    assert cloud.exists('networks', net['id'])
    assert log.having('sweep: 1 deleted project(s) left something')
    assert log.having(f'project {world["gone"]}: purged')

    clock.time = reaper.schedule.get(waiting).due
    reaper.tick()
    assert reaper.schedule.ids() == set()
    assert not cloud.exists('networks', net['id'])


def test_a_sweep_that_fails_is_logged_and_runs_again(
    cloud, world, locks, clock, log
):
    reaper = make_reaper(cloud, locks, clock, sweep_interval=3600)
    cloud.forbidden.add(r'/v3/projects$')  # the listing of projects
    reaper.tick()
    assert log.having('ERROR sweep failed: ')
    assert cloud.changes == []
    cloud.forbidden.clear()
    clock.time += 3600
    reaper.tick()
    assert cloud.owned_by(world['gone']) == []


def test_the_sweep_skips_held_projects_and_retries_failures(
    cloud, world, locks, clock, lock_url, log
):
    reaper = make_reaper(cloud, locks, clock, sweep_interval=3600)
    other_gone = scenarios.project(cloud, 'other-gone')['id']
    scenarios.network(cloud, other_gone, 'other-net')
    cloud.db['projects'].pop(other_gone)
    server = world['server']['id']
    cloud.forbidden.add(rf'/servers/{server}$')
    other = lock.Locks(lock_url, 'reaper-b')
    other.start()
    try:
        with other.held(other_gone):
            reaper.tick()
    finally:
        other.stop()
    assert log.having(f'sweep: project {other_gone} is held by another')
    assert other_gone not in reaper.schedule.ids()  # the holder's work
    assert reaper.schedule.get(world['gone']).failures == 1
    assert cloud.owned_by(other_gone)
