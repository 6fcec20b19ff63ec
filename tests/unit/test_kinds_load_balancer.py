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

"""Octavia load balancers: listed by owner, deleted by cascade once out of
PENDING_*, before the subnets and networks they sit on."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import DONE, FAILED
from osc_cascade.kinds import load_balancer
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import cascade_for, run_kind

LB = load_balancer.LoadBalancer.name


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def kind():
    return kinds_mod.build()[LB]


@pytest.fixture
def topology(cloud):
    a = scenarios.project(cloud, 'A')['id']
    net, subnet = scenarios.network(cloud, a)
    _members_net, members_subnet = scenarios.network(
        cloud, a, 'members', '10.1.0.0/24'
    )
    return a, net, subnet, members_subnet


def test_lists_the_projects_load_balancers_with_what_they_sit_on(
    cloud, kind, topology
):
    a, net, subnet, members_subnet = topology
    b = scenarios.project(cloud, 'B')['id']
    _b_net, b_subnet = scenarios.network(cloud, b)
    lb = cloud.load_balancer(a, subnet, members=[members_subnet])
    cloud.load_balancer(b, b_subnet)

    [ref] = kind.list(cloud.connection(), a)

    assert ref.id == lb['id']
    assert ref.attrs['subnet_ids'] == sorted(
        [subnet['id'], members_subnet['id']]
    )
    assert ref.attrs['vip_network_id'] == net['id']
    assert any(
        p.startswith('/v2.0/lbaas/loadbalancers') and f'project_id={a}' in p
        for _, p in cloud.requests
    )


def test_it_goes_before_the_subnets_and_network_it_sits_on(cloud, topology):
    a, net, subnet, members_subnet = topology
    lb = cloud.load_balancer(a, subnet, members=[members_subnet])
    _pc, _t, plan = cascade_for(cloud, a)
    me = step_id('delete', LB, lb['id'])
    for then in (
        step_id('delete', 'network.subnet', subnet['id']),
        step_id('delete', 'network.subnet', members_subnet['id']),
        step_id('delete', 'network.network', net['id']),
    ):
        assert (me, then) in plan.edges
        assert (me, then) not in plan.soft_edges
    # Octavia's VIP port goes with it: no step of its own
    vip_port = step_id('delete', 'network.port', lb['vip_port_id'])
    assert vip_port not in plan.steps


def test_a_vip_port_the_user_made_goes_after_it(cloud, topology):
    a, _net, subnet, _ = topology
    lb = cloud.load_balancer(a, subnet)
    vip = cloud.get('ports', lb['vip_port_id'])
    vip['device_owner'] = ''  # given by the user: Octavia only detaches
    _pc, _t, plan = cascade_for(cloud, a)
    assert (
        step_id('delete', LB, lb['id']),
        step_id('delete', 'network.port', vip['id']),
    ) in plan.edges


def test_a_pending_load_balancer_is_retried_then_cascade_deleted(
    cloud, kind, topology
):
    a, _net, subnet, _ = topology
    lb = cloud.load_balancer(a, subnet, pending=3)
    [ref] = kind.list(cloud.connection(), a)

    [result] = run_kind(cloud, kind, [ref]).results.values()

    assert result.outcome == DONE
    assert result.attempts == 4  # three 409s while PENDING_UPDATE
    deletes = [p for m, p in cloud.changes if m == 'DELETE']
    assert deletes and all('cascade=True' in p for p in deletes)
    assert not cloud.exists('loadbalancers', lb['id'])
    assert not cloud.exists('ports', lb['vip_port_id'])


def test_a_load_balancer_that_stays_pending_fails_naming_the_state(
    cloud, kind, topology
):
    a, _net, subnet, _ = topology
    cloud.load_balancer(a, subnet, pending=50)
    [ref] = kind.list(cloud.connection(), a)
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == FAILED
    assert 'gave up after 8 attempts' in result.error
    assert 'PENDING_UPDATE' in result.error


def test_a_delete_that_ends_in_error_fails(cloud, kind, topology):
    a, _net, subnet, _ = topology
    lb = cloud.load_balancer(a, subnet)
    lb['fail_delete'] = True
    [ref] = kind.list(cloud.connection(), a)
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == FAILED
    assert result.error == 'delete failed: status is ERROR'


def test_a_floating_ip_on_the_vip_needs_no_order_of_its_own(cloud, external):
    a = scenarios.project(cloud, 'A')['id']
    _net, subnet = scenarios.network(cloud, a)
    router, _iface = scenarios.router(cloud, a, subnet, external)
    fip = scenarios.floating_ip(cloud, a, external, router)
    lb = cloud.load_balancer(a, subnet, vip_fip=fip)
    pc, targets, plan = cascade_for(cloud, a)
    lb_step, fip_step = (
        step_id('delete', LB, lb['id']),
        step_id('delete', 'network.floating_ip', fip['id']),
    )
    assert not {(lb_step, fip_step), (fip_step, lb_step)} & plan.edges

    pc.execute(plan, targets)

    assert cloud.owned_by(a) == []
    assert cloud.index_of_delete('/loadbalancers', lb['id']) < (
        cloud.index_of_delete('/subnets', subnet['id'])
    )


def test_members_are_listed_only_of_pools_whose_body_names_some(
    cloud, kind, topology
):
    a, _net, subnet, members_subnet = topology
    with_members = cloud.load_balancer(a, subnet, members=[members_subnet])
    without = cloud.load_balancer(a, subnet)
    cloud.requests.clear()
    refs = {r.id: r for r in kind.list(cloud.connection(), a)}
    assert refs[with_members['id']].attrs['subnet_ids'] == sorted(
        [subnet['id'], members_subnet['id']]
    )
    assert refs[without['id']].attrs['subnet_ids'] == [subnet['id']]
    listed = [p for _, p in cloud.requests if p.endswith('/members')]
    [pool] = with_members['pools']
    assert listed == [f'/v2.0/lbaas/pools/{pool["id"]}/members']
