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
no SDK resource per item (which cost more than the rest of a poll); Heat's
stacks and Octavia's load balancers are polled with one listing of the
project's too."""

from openstack.block_storage.v3 import backup, snapshot, volume
from openstack.compute.v2 import server
import pytest

from osc_cascade.kinds import (
    block_storage,
    compute,
    load_balancer,
    orchestration,
)
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud


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


@pytest.fixture
def services():
    """The fake cloud with Heat and Octavia too."""
    with ServicesCloud() as c:
        yield c


def test_heat_polls_list_the_projects_stacks_once(services):
    cloud, conn = services, services.connection()
    pid = scenarios.project(cloud, 'A')['id']
    other = scenarios.project(cloud, 'other')['id']
    going = cloud.stack('going', pid, status='DELETE_IN_PROGRESS')
    failed = cloud.stack('failed', pid, status='DELETE_FAILED')
    cloud.stack('theirs', other, status='DELETE_IN_PROGRESS')
    cloud.requests.clear()
    assert orchestration.ProjectStack().list_statuses(conn, pid) == {
        going['id']: 'DELETE_IN_PROGRESS',
        failed['id']: orchestration.STUCK,  # as its own poll says
    }
    [listing] = [p for m, p in cloud.requests if '/stacks' in p]
    assert listing.endswith(f'/stacks?tenant={pid}')


def test_octavia_polls_list_the_projects_load_balancers_once(services):
    cloud, conn = services, services.connection()
    pid = scenarios.project(cloud, 'A')['id']
    other = scenarios.project(cloud, 'other')['id']
    _net, subnet = scenarios.network(cloud, pid)
    _their_net, their_subnet = scenarios.network(cloud, other, 'theirs')
    mine = cloud.load_balancer(pid, subnet, status='PENDING_DELETE')
    mine['pending_left'] = 5  # Octavia is still at it
    cloud.load_balancer(other, their_subnet)
    cloud.requests.clear()
    assert load_balancer.LoadBalancer().list_statuses(conn, pid) == {
        mine['id']: 'PENDING_DELETE'
    }
    [listing] = [p for m, p in cloud.requests if 'loadbalancers' in p]
    assert f'project_id={pid}' in listing
