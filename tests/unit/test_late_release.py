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

"""Issue #29 (8): without ``--settle`` the freeze outlives the project.

The quota rows keyed by a deleted project's ID stay frozen at exit, so a
token a service validated before the drain (and keeps for its token cache
time) creates nothing there; a later purge (the reaper's after its grace
period, ``orphan purge --project``) finds what was made meanwhile where
no quota holds (Glance), and releases the quotas once nothing is left and
the window has passed."""

import pytest

from osc_cascade.workflows import after_delete
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_for


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def pid(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    scenarios.network(cloud, pid)
    return pid


def run(cloud, pid, **options):
    """The cascade run, and the project deleted as OSC does after it."""
    pc, targets, plan = cascade_for(cloud, pid, **options)
    outcome = pc.execute(plan, targets)
    pc.conn.identity.delete_project(pid)
    return pc, outcome


def test_without_settle_the_quotas_stay_frozen_at_exit(cloud, pid):
    pc, outcome = run(cloud, pid)

    after_delete.finish(pc, outcome)

    # the door stays shut: a token issued before the drain, still in a
    # service's cache, meets quotas of 0 (the project is gone: they harm
    # nothing)
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert cloud.quota_of('neutron', pid)['network'] == 0
