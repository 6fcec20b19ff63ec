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

"""The shared status polls (``list_statuses``) of Nova's and Cinder's kinds
read the raw JSON of one detail list, with the project filter, and build
no SDK resource per item (which cost more than the rest of a poll)."""

from openstack.block_storage.v3 import backup, snapshot, volume
from openstack.compute.v2 import server
import pytest

from osc_cascade.kinds import block_storage, compute
from tests.unit import scenarios


def refuse_resources(monkeypatch, cls):
    def built(*args, **kwargs):
        raise AssertionError(f'a {cls.__name__} was built')

    monkeypatch.setattr(cls, '__init__', built)


def assert_one_filtered_listing(cloud, pid):
    [listing] = [p for m, p in cloud.requests if '/detail' in p]
    assert f'project_id={pid}' in listing
    assert 'all_tenants=True' in listing


@pytest.mark.parametrize(
    'kind,sdk_class,make',
    [
        (block_storage.Volume, volume.Volume, None),
        (block_storage.Snapshot, snapshot.Snapshot, scenarios.snapshot),
        (block_storage.Backup, backup.Backup, scenarios.backup),
    ],
)
def test_cinder_polls_read_the_raw_listing(
    cloud, conn, pid, monkeypatch, kind, sdk_class, make
):
    other = scenarios.project(cloud, 'other')['id']
    vol = scenarios.volume(cloud, pid)
    theirs = scenarios.volume(cloud, other)
    mine = make(cloud, pid, vol) if make else vol
    if make:
        make(cloud, other, theirs)
    refuse_resources(monkeypatch, sdk_class)
    cloud.requests.clear()
    assert kind().list_statuses(conn, pid) == {mine['id']: mine['status']}
    assert_one_filtered_listing(cloud, pid)


def test_nova_polls_read_the_raw_listing(cloud, conn, pid, monkeypatch):
    other = scenarios.project(cloud, 'other')['id']
    running = scenarios.server(cloud, pid, 'running')
    failed = scenarios.server(cloud, pid, 'failed', status='ERROR')
    failed['task_state'] = None  # nova gave up on its delete
    scenarios.server(cloud, other, 'theirs')
    refuse_resources(monkeypatch, server.Server)
    cloud.requests.clear()
    assert compute.Server().list_statuses(conn, pid) == {
        running['id']: 'ACTIVE',
        failed['id']: 'ERROR (delete failed)',
    }
    assert_one_filtered_listing(cloud, pid)
