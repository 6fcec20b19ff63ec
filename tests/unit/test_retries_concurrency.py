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

"""clouds.yaml's per-service ``concurrency`` and ``rate_limit``: the SDK
gives them to each service's proxy, where keystoneauth bounds the calls in
flight whatever ``--parallel`` says; the one proxy the kinds make
themselves (a project's Swift account) shares that bound."""

from keystoneauth1 import _fair_semaphore

from osc_cascade.kinds import object_store
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud


def test_a_projects_swift_account_shares_the_services_bound():
    with ServicesCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        cloud.container(pid, 'data', objects=3)
        conn = cloud.connection()
        # what keystoneauth makes of ``concurrency: {object-store: 2}`` (the
        # SDK of this venv drops it for a hyphenated type: it looks the
        # type up after the loader turned it into ``object_store``)
        bound = _fair_semaphore.FairSemaphore(2, 0.0)
        conn.object_store._rate_semaphore = bound
        store = object_store.account(conn, pid)
        assert store._rate_semaphore is bound
        assert [c.name for c in store.containers()] == ['data']


def test_without_a_bound_the_account_has_none_either():
    with ServicesCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        conn = cloud.connection()
        store = object_store.account(conn, pid)
        assert store._rate_semaphore is conn.object_store._rate_semaphore
