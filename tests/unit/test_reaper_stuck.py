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

"""The reaper forces what is stuck only with its own switch ([reaper]
force_stuck, off by default), as --force-stuck does for the commands
(issue #33)."""

from oslo_config import cfg
import oslo_messaging
from oslo_messaging._drivers import impl_fake
import pytest

from osc_cascade.kinds import block_storage
from osc_cascade.reaper import config, lock, main, sweep
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.run import zero_delays

VOL = block_storage.Volume.name


@pytest.fixture(autouse=True)
def _keystoneauth_paced_as_it_was(monkeypatch):
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


@pytest.fixture
def locks(tmp_path):
    held = lock.Locks(f'file://{tmp_path / "locks"}', 'reaper-a')
    held.start()
    yield held
    held.stop()


def load(tmp_path, **options):
    path = tmp_path / 'reaper.conf'
    lines = ['[reaper]', f'coordination_url = file://{tmp_path}/locks']
    lines += [f'{k} = {v}' for k, v in options.items()]
    path.write_text('\n'.join(lines) + '\n')
    return config.load(['--config-file', str(path)])


def stuck_volume_of_a_deleted_project(cloud):
    gone = scenarios.project(cloud, 'gone')['id']
    vol = scenarios.volume(cloud, gone, 'stuck')
    vol.update(status='error_deleting', updated_at='2026-11-28T05:10:00Z')
    cloud.db['projects'].pop(gone)
    return gone, vol


def purge(conn, locks, conf, gone, transport):
    """One purge of ``gone`` with the kinds main.build gives the reaper's
    purger, without its waits."""
    reaper, _listener, _locks = main.build(
        conf, conn=conn, transport=transport
    )
    purger = sweep.Purger(
        conn,
        reaper.purger.kinds,
        locks,
        clock=FakeClock(),
        retry=zero_delays(),
    )
    return purger.purge([gone])[gone]


def test_the_switch_is_off_by_default(tmp_path):
    assert load(tmp_path).reaper.force_stuck is False
    assert load(tmp_path, force_stuck='true').reaper.force_stuck is True
    names = {o.name for _g, opts in config.list_opts() for o in opts}
    assert 'force_stuck' in names


def test_without_the_switch_a_stuck_volume_is_left(
    cloud, conn, tmp_path, locks, transport
):
    gone, vol = stuck_volume_of_a_deleted_project(cloud)
    outcome = purge(conn, locks, load(tmp_path), gone, transport)
    assert outcome.state == sweep.FAILED
    assert "is 'error_deleting'" in outcome.detail
    assert cloud.reset_calls == []
    assert cloud.get('volumes', vol['id'])['status'] == 'error_deleting'


def test_with_the_switch_a_stuck_volume_is_reset_and_purged(
    cloud, conn, tmp_path, locks, transport
):
    gone, vol = stuck_volume_of_a_deleted_project(cloud)
    outcome = purge(
        conn, locks, load(tmp_path, force_stuck='true'), gone, transport
    )
    assert outcome.state == sweep.PURGED, outcome
    assert cloud.reset_calls == [(vol['id'], {'status': 'error'})]
    assert cloud.get('volumes', vol['id']) is None
