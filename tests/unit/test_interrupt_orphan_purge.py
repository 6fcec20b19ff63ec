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

"""`openstack orphan purge` stopped by SIGINT or SIGTERM: what is in flight
finishes, the summary says what was done, exit 130/143, and a re-run
finishes the job."""

import io
import json
import os
import signal
import sys

from openstackclient import shell
import pytest

from osc_cascade.kinds import block_storage
from tests.unit import scenarios
from tests.unit.fakes.clock import patch_wall_clock
from tests.unit.fakes.clouds import FakeCloud


@pytest.fixture
def gone(cloud):
    """A deleted project's five volumes and a live project's one."""
    p = scenarios.project(cloud, 'gone')
    for i in range(5):
        scenarios.volume(cloud, p['id'], f'v{i}')
    live = scenarios.project(cloud, 'live')
    scenarios.volume(cloud, live['id'], 'kept')
    cloud.db['projects'].pop(p['id'])
    cloud.add('domains', id='default', name='Default')
    return p['id'], live['id']


def signal_after_first_delete(monkeypatch, signum):
    real_delete = block_storage.Volume.delete
    signalled = []

    def delete_then_signal(self, conn, ref):
        real_delete(self, conn, ref)
        if not signalled:  # a second one would end the process at once
            signalled.append(ref.id)
            os.kill(os.getpid(), signum)

    monkeypatch.setattr(block_storage.Volume, 'delete', delete_then_signal)
    return signalled


@pytest.mark.parametrize(
    ('signum', 'code'), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_a_signal_stops_the_purge_and_a_rerun_finishes_it(
    cloud, osc, monkeypatch, gone, signum, code, capsys, shell_signal_handlers
):
    gone_id, live_id = gone
    signal_after_first_delete(monkeypatch, signum)
    with pytest.raises(SystemExit) as exit_:
        osc('orphan', 'purge', '--yes', '--parallel', '1', '-f', 'json')
    assert exit_.value.code == code
    assert (
        signal.getsignal(signal.SIGINT) is shell_signal_handlers[signal.SIGINT]
    )
    assert (
        signal.getsignal(signal.SIGTERM)
        is shell_signal_handlers[signal.SIGTERM]
    )
    deletes = [p for p in cloud.deleted_order() if '/volumes/' in p]
    # the delete in flight finished; the signal reaches the main thread a
    # moment later, so one more may have started meanwhile, no more
    assert 1 <= len(deletes) <= 2
    assert len(cloud.owned_by(live_id)) == 1

    monkeypatch.undo()  # the real delete again, and the shell's stdio
    again = osc('orphan', 'purge', '--yes', '-f', 'json')
    assert again.code == 0, again.stderr
    assert cloud.owned_by(gone_id) == []
    assert len(cloud.owned_by(live_id)) == 1


def test_the_interrupted_purge_shows_its_summary_and_what_remains(
    cloud, monkeypatch, gone
):
    """Through the command's own streams: the summary on stdout, the
    interruption's line last on stderr."""
    patch_wall_clock(monkeypatch)
    signal_after_first_delete(monkeypatch, signal.SIGINT)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, 'stdin', io.StringIO(''))
    monkeypatch.setattr(sys, 'stdout', out)
    monkeypatch.setattr(sys, 'stderr', err)
    app = shell.OpenStackShell()
    app.stdout, app.stderr = out, err
    with pytest.raises(SystemExit):
        app.run(
            [
                *FakeCloud.cli_auth_args(),
                'orphan',
                'purge',
                '--yes',
                '--parallel',
                '1',
                '-f',
                'json',
            ]
        )
    rows = json.loads(out.getvalue())
    assert [r['Kind'] for r in rows] == ['block_storage.volume']
    last = err.getvalue().strip().splitlines()[-1]
    assert last.startswith('Interrupted (SIGINT): ')
    assert 'run `openstack orphan purge` again to finish' in last
