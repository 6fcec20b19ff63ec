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

"""FWaaS v2 through a token scoped to the project (the cascade without
admin): neutron-fwaas makes the project's default firewall group at every
list, and lets admins alone delete it; and a port forwarding to a port the
token cannot see."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade.kinds.network import fwaas, port_forwarding
from tests.unit import scenarios
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import scoped_cascade
from tests.unit.fakes.scoped import ScopedFirewallCloud
from tests.unit.test_kinds_network_services import DEFAULTS, project_firewall

DOMAIN = 'dom-managed'


@pytest.fixture
def cloud():
    with ScopedFirewallCloud() as c:
        yield c


@pytest.fixture
def world(cloud):
    """A project with a firewall group, its policy and rule, and its
    member alice."""
    project = scenarios.project(
        cloud, 'target', domain_id=DOMAIN, parent_id=DOMAIN
    )
    pid = project['id']
    alice = cloud.add_user('alice', DOMAIN)
    cloud.assign(alice, 'member', project=project)
    rule = cloud.neutron_more('fwaas/firewall_rules', pid, name='r')
    policy = cloud.neutron_more(
        'fwaas/firewall_policies', pid, name='p', firewall_rules=[rule['id']]
    )
    group = cloud.neutron_more(
        'fwaas/firewall_groups',
        pid,
        name='g',
        ports=[],
        ingress_firewall_policy_id=policy['id'],
        egress_firewall_policy_id=None,
    )
    return {
        'pid': pid,
        'alice': alice,
        'ids': [rule['id'], policy['id'], group['id']],
    }


def test_the_fake_lets_admins_alone_delete_a_default_firewall_group(
    cloud, world
):
    pid = world['pid']
    conn = cloud.connection_as(world['alice'], project_id=pid)
    list(conn.network.firewall_groups())  # the token's project's
    [default] = [
        g
        for g in cloud.all('firewall_groups')
        if g['project_id'] == pid and g['name'] == 'default'
    ]
    with pytest.raises(sdk_exc.ConflictException, match='default'):
        conn.network.delete_firewall_group(default['id'])
    cloud.connection().network.delete_firewall_group(default['id'])
    # its policies go with it, not their rules
    assert project_firewall(cloud, pid) == {
        'firewall_groups': ['g'],
        'firewall_policies': ['p'],
        'firewall_rules': sorted(['r', *DEFAULTS['firewall_rules']]),
    }


def test_without_admin_the_default_firewall_group_stays_and_the_rest_goes(
    cloud, world
):
    """The project's token makes the default group at its first list and
    may not delete it: before, the cascade planned its delete (refused)
    and its policies' (in use); now they stay, with a reason that blocks
    nothing, and the project's other firewall objects go."""
    pid = world['pid']
    wf = scoped_cascade(
        cloud.connection_as(world['alice'], project_id=pid),
        keep_project=True,
    )
    targets = wf.resolve(['target'])
    plan = wf.plan(targets)
    kept = [
        s
        for s in plan.steps.values()
        if s.action == 'keep' and s.target.kind.startswith('network.firewall')
    ]
    assert sorted(s.target.name for s in kept) == sorted(
        n for names in DEFAULTS.values() for n in names
    )
    assert all(
        s.params['reason'] == fwaas.DEFAULT_FIREWALL_STAYS
        and s.params['blocking'] is False
        for s in kept
    )
    rule, policy, group = world['ids']
    for kind, id_ in (
        (fwaas.FirewallRule, rule),
        (fwaas.FirewallPolicy, policy),
        (fwaas.FirewallGroup, group),
    ):
        assert step_id('delete', kind.name, id_) in plan.steps
    wf.execute(plan, targets)
    assert project_firewall(cloud, pid) == DEFAULTS


def test_without_admin_a_forwarding_to_a_port_it_cannot_see_is_kept(
    cloud, world
):
    """A project's token reads no other project's port (404, as gone): a
    forwarding of its floating IP to such a port is kept, not deleted with
    the floating IP."""
    pid = world['pid']
    other = scenarios.project(cloud, 'other', domain_id=DOMAIN)['id']
    net, subnet = scenarios.network(cloud, other, cidr='10.9.0.0/24')
    theirs = scenarios.port(cloud, other, net, subnet, 'theirs')
    fip = cloud.add('floatingips', project_id=pid, tenant_id=pid)
    pf = cloud.add(
        'port_forwardings',
        floatingip_id=fip['id'],
        internal_port_id=theirs['id'],
    )
    conn = cloud.connection_as(world['alice'], project_id=pid)
    kind = port_forwarding.PortForwarding(scoped=True)
    [ref] = kind.list(conn, pid)
    step = kind.primary_step(ref)
    assert (ref.id, step.action) == (pf['id'], 'keep')
    assert step.params['reason'] == (
        f'it forwards to port {theirs["id"]}, which this token cannot see: '
        f"deleting it would cut that project's traffic"
    )
