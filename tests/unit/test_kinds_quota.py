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

"""Quotas: listed while a project's differ from the defaults, gone after
the reset; no steps of a cascade (the drain freezes them and resets them
after the project), but in an orphan purge reset after every delete of
their service."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.executor import DONE
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import quota
from osc_cascade.kinds.quota.block_storage import BlockStorageQuota
from osc_cascade.kinds.quota.compute import ComputeQuota
from osc_cascade.kinds.quota.container_infra import ContainerInfraQuota
from osc_cascade.kinds.quota.key_manager import KeyManagerQuota
from osc_cascade.kinds.quota.load_balancer import LoadBalancerQuota
from osc_cascade.kinds.quota.network import NetworkQuota
from osc_cascade.kinds.quota.shared_file_system import (
    SharedFileSystemQuota,
    SharedFileSystemQuotaApi,
)
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import cascade_for, run_kind

#: quota kind -> the fake's service, and a value of its own
QUOTAS = {
    ComputeQuota.name: ('nova', {'instances': 50}),
    BlockStorageQuota.name: ('cinder', {'volumes': 50}),
    NetworkQuota.name: ('neutron', {'network': 50}),
    LoadBalancerQuota.name: ('octavia', {'load_balancer': 5}),
    SharedFileSystemQuota.name: ('manila', {'shares': 5}),
    KeyManagerQuota.name: ('barbican', {'secrets': 5}),
    ContainerInfraQuota.name: ('magnum', {'Cluster': 3, 'NodeGroup': 4}),
}


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.mark.parametrize('name', sorted(QUOTAS))
def test_listed_only_while_the_project_has_its_own_then_reset(cloud, name):
    service, values = QUOTAS[name]
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    c = scenarios.project(cloud, 'C')['id']
    cloud.set_quota(service, a, **values)
    cloud.set_quota(service, b, **values)
    kind = kinds_mod.build()[name]
    conn = cloud.connection()
    assert kind.list(conn, c) == []
    refs = kind.list(conn, a)
    assert [(r.id, r.project_id) for r in refs] == [(a, a)]

    [result] = run_kind(cloud, kind, refs).results.values()

    assert result.outcome == DONE
    assert kind.list(conn, a) == []  # what ends a verification round
    assert kind.list(conn, b) != []


def test_an_octavia_row_of_defaults_is_not_a_quota_of_its_own(cloud):
    a = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('octavia', a)  # the row Octavia keeps for usage
    kind = kinds_mod.build()[LoadBalancerQuota.name]
    assert kind.list(cloud.connection(), a) == []


def test_quotas_are_no_steps_of_a_cascade(cloud, external):
    # the drain freezes them and resets them after the project is gone
    a = scenarios.full_project(cloud, 'A', external)
    pid = a['project']['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    cloud.keypair('user-A', 'laptop')
    pc, _t, plan = cascade_for(cloud, pid)
    assert not [s for s in plan.steps if ':quota.' in s]
    assert not [k for k in pc.kinds if k.startswith('quota.')]
    assert step_id('delete', 'compute.server', a['server']['id']) in (
        plan.steps
    )
    assert set(kinds_mod.build()) - set(
        quota.without_quotas(kinds_mod.build())
    ) == set(QUOTAS)


def test_in_an_orphan_purge_a_quota_is_reset_after_its_services_deletes(
    cloud, external
):
    a = scenarios.full_project(cloud, 'A', external)
    pid = a['project']['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    cloud.keypair('user-A', 'laptop')
    kinds = kinds_mod.build()
    refs, _notes = Discovery(cloud.connection(), kinds).run([pid])
    plan = build_plan(Inventory(refs), kinds, [{'id': pid, 'name': 'A'}])
    preds = plan.predecessors()
    compute = preds[step_id('delete', 'quota.compute', pid)]
    network = preds[step_id('delete', 'quota.network', pid)]
    assert step_id('delete', 'compute.server', a['server']['id']) in compute
    assert step_id('delete', 'network.network', a['network']['id']) in network
    assert not [s for s in compute if ':network.' in s]
    # a member's keypair is only reported: nothing to wait for
    assert step_id('keep', 'compute.keypair', 'user-A/laptop') in plan.steps
    assert not [s for s in compute if 'keypair' in s]


def test_the_orphan_search_lists_what_a_service_can_list(cloud):
    a = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('neutron', a, network=50)
    cloud.set_quota('nova', a, instances=50)
    kinds = kinds_mod.build()
    conn = cloud.connection()
    assert [r.id for r in kinds[NetworkQuota.name].list(conn, None)] == [a]
    assert kinds[ComputeQuota.name].list(conn, None) == []
    assert not [p for _, p in cloud.requests if 'os-quota-sets' in p]


@pytest.mark.parametrize(
    'name',
    [
        LoadBalancerQuota.name,
        KeyManagerQuota.name,
        ContainerInfraQuota.name,
    ],
)
def test_a_list_of_quotas_is_read_page_by_page(cloud, name):
    # the fakes cut a list at two rows and link the next page with its
    # paging only (Octavia's and Magnum's links drop the filters)
    service, values = QUOTAS[name]
    projects = [scenarios.project(cloud, f'P{n}')['id'] for n in range(5)]
    for pid in projects:
        cloud.set_quota(service, pid, **values)
    kind = kinds_mod.build()[name]
    conn = cloud.connection()

    assert sorted(r.id for r in kind.list(conn, None)) == sorted(projects)
    last = sorted(projects)[-1]
    assert [r.id for r in kind.list(conn, last)] == [last]
    lists = [p for m, p in cloud.requests if m == 'GET' and 'quotas' in p]
    assert len(lists) >= 3 + 1


def test_manilas_quota_sets_are_asked_at_their_microversion(cloud, conn):
    # Manila routes /quota-sets from 2.7 on: a call naming none (2.0) was
    # answered 404, read as "no quota API", and the project's own rows
    # were neither listed nor reset (seen on the minicloud)
    pid = scenarios.project(cloud, 'A')['id']
    cloud.set_quota('manila', pid, shares=57)
    kind = SharedFileSystemQuota()
    [ref] = kind.list(conn, pid)
    assert SharedFileSystemQuotaApi().own(conn, pid) == {'shares': 57}
    kind.delete(conn, ref)
    assert not cloud.has_quota('manila', pid)
