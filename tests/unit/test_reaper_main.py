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

"""The reaper's console script: its options, how it is put together, the
rate limits it sets, a clean stop on SIGTERM within a bounded time, and
its own switch for forcing what is stuck ([reaper] force_stuck, off by
default, issue #33)."""

import logging
import os
import signal
import threading

from oslo_config import cfg
import oslo_messaging
from oslo_messaging._drivers import impl_fake
import pytest

from osc_cascade.reaper import config, main, service, sweep
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.run import zero_delays


@pytest.fixture(autouse=True)
def _keystoneauth_paced_as_it_was(monkeypatch):
    """build() paces keystoneauth's rate limit for the whole process: put
    it back after each test."""
    from keystoneauth1 import _fair_semaphore

    semaphore = _fair_semaphore.FairSemaphore
    monkeypatch.setattr(semaphore, '_advance_timer', semaphore._advance_timer)


@pytest.fixture
def transport():
    conf = cfg.ConfigOpts()
    t = oslo_messaging.get_notification_transport(conf, url='fake://')
    yield t
    t.cleanup()
    impl_fake.FakeExchangeManager.cleanup()


def load(tmp_path, *argv, **options):
    path = tmp_path / 'reaper.conf'
    lines = ['[reaper]'] + [f'{k} = {v}' for k, v in options.items()]
    path.write_text('\n'.join(lines) + '\n')
    return config.load(['--config-file', str(path), *argv])


def test_options_come_from_the_file_and_the_command_line(tmp_path):
    conf = load(tmp_path, grace_period=30, cloud='from-file', dry_run='false')
    assert conf.reaper.grace_period == 30
    assert conf.reaper.sweep_interval == 3600
    assert config.cloud(conf) == 'from-file'
    assert not config.dry_run(conf)
    conf = load(tmp_path, '--os-cloud', 'cli', '--dry-run', cloud='file')
    assert config.cloud(conf) == 'cli'
    assert config.dry_run(conf)
    assert [g for g, _opts in config.list_opts()] == ['reaper']


def test_keystoneauths_rate_limit_saves_up_no_calls_while_idle(monkeypatch):
    from keystoneauth1 import _fair_semaphore

    semaphore = _fair_semaphore.FairSemaphore
    now = [1000.0]

    def sleep(seconds):
        now[0] += seconds

    monkeypatch.setattr(_fair_semaphore.time, 'time', lambda: now[0])
    monkeypatch.setattr(_fair_semaphore.time, 'sleep', sleep)
    main.pace_from_now()
    two_per_second = semaphore(None, 0.5)  # made at 1000
    now[0] = 1010.0  # 10 s idle
    starts = []
    for _ in range(4):
        with two_per_second:
            starts.append(now[0])
    assert starts == [1010.0, 1010.5, 1011.0, 1011.5]


def test_a_bad_value_is_refused(tmp_path):
    conf = load(tmp_path, grace_period=-1)
    with pytest.raises(ValueError):
        conf.reaper.grace_period


def test_build_puts_the_service_together(cloud, conn, tmp_path, transport):
    conf = load(
        tmp_path,
        '--dry-run',
        grace_period=10,
        rate_limit=3,
        coordination_url=f'file://{tmp_path}/locks',
        listener_pool='mine',
    )
    reaper, listener, locks = main.build(conf, conn=conn, transport=transport)
    assert reaper.timing == service.Timing(grace_period=10)
    assert reaper.purger.dry_run
    assert reaper.purger.conn is conn
    assert conn.config.get_rate_limit('compute') == 3.0
    assert locks.url == f'file://{tmp_path}/locks'
    assert listener.dispatcher.endpoints[0].on_deleted == reaper.deleted


def test_without_a_rate_limit_the_connection_is_left_alone(
    cloud, conn, tmp_path, transport
):
    conf = load(tmp_path, coordination_url=f'file://{tmp_path}/locks')
    main.build(conf, conn=conn, transport=transport)
    assert 'rate_limit' not in conn.config.config


class Idle:
    """A reaper with nothing to do, stopped as the real one is."""

    def __init__(self, stops=True):
        self.purger = sweep.Purger.__new__(sweep.Purger)
        self.purger.dry_run = False
        self._stop = threading.Event()
        self.stops = stops
        self.ran = threading.Event()

    def run(self):
        self.ran.set()
        if self.stops:
            self._stop.wait()
        else:
            threading.Event().wait()  # a purge that never ends

    def stop(self):
        self._stop.set()


class Part:
    def __init__(self):
        self.calls = []

    def start(self):
        self.calls.append('start')

    def stop(self):
        self.calls.append('stop')

    def wait(self):
        self.calls.append('wait')


def test_serve_stops_everything_in_order():
    reaper, listener, locks = Idle(), Part(), Part()
    stop = threading.Event()
    threading.Timer(0.05, stop.set).start()
    assert main.serve(reaper, listener, locks, stop, 5)
    assert reaper.ran.is_set() and reaper._stop.is_set()
    assert listener.calls == ['start', 'stop', 'wait']
    assert locks.calls == ['start', 'stop']


def test_the_purge_stops_while_the_listener_does():
    reaper, locks = Idle(), Part()

    class SlowListener(Part):
        """oslo.messaging's, which returns from stop up to 5 s later."""

        def stop(self):
            super().stop()
            self.purge_told = reaper._stop.is_set()

    listener = SlowListener()
    stop = threading.Event()
    stop.set()
    assert main.serve(reaper, listener, locks, stop, 5)
    assert listener.purge_told


def test_a_purge_that_does_not_stop_is_abandoned_in_bounded_time():
    stop = threading.Event()
    stop.set()
    assert not main.serve(Idle(stops=False), Part(), Part(), stop, 0.05)


@pytest.fixture
def signals():
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)
    root.handlers[:] = handlers
    root.setLevel(level)
    for noisy in ('keystoneauth', 'openstack', 'stevedore', 'urllib3'):
        logging.getLogger(noisy).setLevel(logging.NOTSET)


def test_sigterm_stops_the_reaper(signals, monkeypatch):
    reaper = Idle()
    monkeypatch.setattr(main, 'build', lambda conf: (reaper, Part(), Part()))

    def term():
        reaper.ran.wait(5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=term).start()
    assert main.main([]) == 0
    assert reaper._stop.is_set()


def test_a_reaper_that_cannot_start_says_why(signals, monkeypatch):
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logging.getLogger('osc_cascade.reaper').addHandler(handler)

    def broken(conf):
        raise RuntimeError('no cloud named x')

    monkeypatch.setattr(main, 'build', broken)
    try:
        assert main.main([]) == 1
    finally:
        logging.getLogger('osc_cascade.reaper').removeHandler(handler)
    assert lines == ['cannot start: no cloud named x']


def test_logs_are_plain_lines_for_journald(signals):
    main.setup_logging(debug=False)
    root = logging.getLogger()
    assert root.level == logging.INFO
    assert root.handlers[0].formatter._fmt == (
        '%(levelname)s %(name)s: %(message)s'
    )
    assert logging.getLogger('keystoneauth').level == logging.WARNING
    main.setup_logging(debug=True)
    assert root.level == logging.DEBUG


# -- [reaper] force_stuck (issue #33) ----------------------------------------


def stuck_volume_of_a_deleted_project(cloud):
    gone = scenarios.project(cloud, 'gone')['id']
    vol = scenarios.volume(cloud, gone, 'stuck')
    vol.update(status='error_deleting', updated_at='2026-11-28T05:10:00Z')
    cloud.db['projects'].pop(gone)
    return gone, vol


def purge(conn, conf, gone, transport):
    """One purge of ``gone`` with the kinds and the locks main.build gives
    the reaper, without its waits."""
    reaper, _listener, locks = main.build(conf, conn=conn, transport=transport)
    locks.start()
    try:
        purger = sweep.Purger(
            conn,
            reaper.purger.kinds,
            locks,
            clock=FakeClock(),
            retry=zero_delays(),
        )
        return purger.purge([gone])[gone]
    finally:
        locks.stop()


def force_stuck_conf(tmp_path, **options):
    return load(
        tmp_path, coordination_url=f'file://{tmp_path}/locks', **options
    )


def test_the_switch_is_off_by_default(tmp_path):
    assert load(tmp_path).reaper.force_stuck is False
    assert load(tmp_path, force_stuck='true').reaper.force_stuck is True
    names = {o.name for _g, opts in config.list_opts() for o in opts}
    assert 'force_stuck' in names


def test_without_the_switch_a_stuck_volume_is_left(
    cloud, conn, tmp_path, transport
):
    gone, vol = stuck_volume_of_a_deleted_project(cloud)
    outcome = purge(conn, force_stuck_conf(tmp_path), gone, transport)
    assert outcome.state == sweep.FAILED
    assert "is 'error_deleting'" in outcome.detail
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id'])['status'] == 'error_deleting'


def test_with_the_switch_a_stuck_volume_is_reset_and_purged(
    cloud, conn, tmp_path, transport
):
    gone, vol = stuck_volume_of_a_deleted_project(cloud)
    outcome = purge(
        conn, force_stuck_conf(tmp_path, force_stuck='true'), gone, transport
    )
    assert outcome.state == sweep.PURGED, outcome
    assert cloud.reset_calls == [(vol['id'], {'status': 'error'})]
    assert cloud.get('volumes', vol['id']) is None
