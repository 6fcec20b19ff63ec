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

"""Neutron kinds against the fake cloud."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import Step
from osc_cascade.kinds import compute, network
from osc_cascade.kinds.facts import Facts
from osc_cascade.kinds.network import common, core
from osc_cascade.kinds.network import rbac as rbac_kinds
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud, ignoring_filters
from tests.unit.fakes.kinds import kinds_of
from tests.unit.fakes.run import cascade_for

PORT, ROUTER, FIP = (
    core.Port.name,
    core.Router.name,
    (core.FloatingIP.name),
)
SUBNET, NET, SG = (
    core.Subnet.name,
    core.Network.name,
    (core.SecurityGroup.name),
)
TRUNK, RBAC, SERVER = (
    core.Trunk.name,
    rbac_kinds.RBACPolicy.name,
    (compute.Server.name),
)
LISTS = {
    core.FloatingIP: 'floatingips',
    core.Router: 'routers',
    core.Port: 'ports',
    core.Trunk: 'trunks',
    core.Subnet: 'subnets',
    core.Network: 'networks',
    core.SecurityGroup: 'security-groups',
    rbac_kinds.RBACPolicy: 'rbac-policies',
}


def discover(conn, pid):
    kinds = [*kinds_of(network), compute.Server]
    return [r for k in kinds for r in k().list(conn, pid)]


def plan_for(conn, pid):
    return build_plan(
        Inventory(discover(conn, pid)),
        kinds_mod.build(),
        [{'id': pid, 'name': 'A'}],
    )


def d(kind, id_):
    return f'delete:{kind}:{id_}'


def interface_removal(router, port):
    return (
        f'remove_router_interface:{ROUTER}:{router["id"]}'
        f'[port_id={port["id"]}]'
    )


def run_plan(conn, plan):
    return Executor(conn, kinds_mod.build(), clock=FakeClock()).run(plan)


def trunk(cloud, pid, parent, subports=()):
    return cloud.add(
        'trunks',
        name='trunk',
        project_id=pid,
        tenant_id=pid,
        port_id=parent['id'],
        sub_ports=[
            {
                'port_id': s['id'],
                'segmentation_type': 'vlan',
                'segmentation_id': 100 + i,
            }
            for i, s in enumerate(subports)
        ],
    )


def rbac(cloud, pid, object_type, object_id, target='*'):
    return cloud.add(
        'rbac_policies',
        project_id=pid,
        tenant_id=pid,
        object_type=object_type,
        object_id=object_id,
        target_tenant=target,
        action='access_as_shared',
    )


@pytest.mark.parametrize(
    'kind',
    [k for k in LISTS if k is not core.SecurityGroup],
    ids=lambda k: k.name,
)
def test_list_calls_carry_the_project_filter(cloud, conn, pid, kind):
    # security groups are the exception, on purpose: see
    # test_security_groups_are_listed_without_a_project_filter
    assert list(kind().list(conn, pid)) == []
    calls = [
        p for m, p in cloud.requests if p.startswith(f'/v2.0/{LISTS[kind]}')
    ]
    assert calls == [f'/v2.0/{LISTS[kind]}?project_id={pid}']


def test_other_projects_network_resources_never_get_in():
    with ignoring_filters(FakeCloud)() as cloud:
        ext = scenarios.external_network(cloud)[0]
        a = scenarios.full_project(cloud, 'A', ext)['project']['id']
        b = scenarios.full_project(cloud, 'B', ext)['project']['id']
        conn = cloud.connection()
        assert len(list(conn.network.networks(project_id=a))) == 3
        refs = [r for k in kinds_of(network) for r in k().list(conn, a)]
        assert refs and {r.project_id for r in refs} == {a}
        mine = {r.id for r in refs}
        assert not mine & {id_ for _, id_ in cloud.owned_by(b)}
        assert ext['id'] not in mine


def test_owned_ports_have_no_step_of_their_own(cloud, conn, pid, external):
    net, subnet = scenarios.network(cloud, pid)
    _r, iface = scenarios.router(cloud, pid, subnet, external)
    plain = scenarios.port(cloud, pid, net, subnet)
    for owner in (
        'network:router_gateway',
        'network:floatingip',
        'network:router_interface_distributed',
        'Octavia',
    ):
        scenarios.port(cloud, pid, net, subnet, owner, device_owner=owner)
    plan = plan_for(conn, pid)
    ports = [s.target.id for s in plan.steps.values() if s.target.kind == PORT]
    assert ports == [plain['id']]
    assert d(PORT, iface['id']) not in plan.steps


def test_port_goes_after_its_server_and_before_subnet_network_and_groups(
    cloud, conn, pid
):
    net, subnet = scenarios.network(cloud, pid)
    group = scenarios.security_group(cloud, pid, 'web')
    vm = scenarios.server(cloud, pid, net=net, subnet=subnet, sg=group)
    [port] = [p for p in cloud.all('ports') if p['device_id'] == vm['id']]
    plan = plan_for(conn, pid)
    me = d(PORT, port['id'])
    assert (d(SERVER, vm['id']), me) in plan.edges
    assert (me, d(SUBNET, subnet['id'])) in plan.edges
    assert (me, d(NET, net['id'])) in plan.edges
    assert (me, d(SG, group['id'])) in plan.edges
    assert (d(SUBNET, subnet['id']), d(NET, net['id'])) in plan.edges


def test_port_bound_to_another_projects_server_has_no_server_edge(
    cloud, conn, pid
):
    net, subnet = scenarios.network(cloud, pid)
    port = scenarios.port(
        cloud,
        pid,
        net,
        subnet,
        device_owner='compute:az',
        device_id='their-server',
    )
    plan = plan_for(conn, pid)
    assert not [e for e in plan.edges if e[1] == d(PORT, port['id'])]


def test_floating_ip_goes_before_interface_removal_gateway_and_router(
    cloud, conn, pid, external
):
    net, subnet = scenarios.network(cloud, pid)
    r, iface = scenarios.router(cloud, pid, subnet, external)
    port = scenarios.port(cloud, pid, net, subnet)
    fip = scenarios.floating_ip(cloud, pid, external, r, port)
    lone = scenarios.floating_ip(cloud, pid, external)
    plan = plan_for(conn, pid)
    me = d(FIP, fip['id'])
    remove = interface_removal(r, iface)
    clear = f'clear_router_gateway:{ROUTER}:{r["id"]}'
    assert {remove, clear} <= set(plan.steps)
    assert {(me, remove), (me, clear), (me, d(ROUTER, r['id']))} <= (
        plan.edges
    )
    assert not [e for e in plan.edges if e[0] == d(FIP, lone['id'])]


def test_router_interfaces_are_removed_before_subnet_network_and_router(
    cloud, conn, pid, external
):
    net, subnet = scenarios.network(cloud, pid)
    r, iface = scenarios.router(cloud, pid, subnet, external)
    plan = plan_for(conn, pid)
    remove = interface_removal(r, iface)
    clear = f'clear_router_gateway:{ROUTER}:{r["id"]}'
    assert {
        (remove, d(SUBNET, subnet['id'])),
        (remove, d(NET, net['id'])),
        (remove, d(ROUTER, r['id'])),
        (clear, d(ROUTER, r['id'])),
    } <= (plan.edges)
    # the external network is not the project's: never in the plan
    assert d(NET, external['id']) not in plan.steps


def test_router_without_gateway_or_routes_needs_no_clearing(cloud, conn, pid):
    _net, subnet = scenarios.network(cloud, pid)
    _r, _iface = scenarios.router(cloud, pid, subnet)
    plan = plan_for(conn, pid)
    actions = {s.action for s in plan.steps.values() if s.is_break_action}
    assert actions == {'remove_router_interface'}


def test_static_routes_are_cleared_before_interfaces_are_removed(
    cloud, conn, pid
):
    _net, subnet = scenarios.network(cloud, pid)
    r, iface = scenarios.router(cloud, pid, subnet)
    r['routes'] = [{'destination': '10.9.0.0/24', 'nexthop': '10.0.0.9'}]
    plan = plan_for(conn, pid)
    routes = f'clear_router_routes:{ROUTER}:{r["id"]}'
    remove = interface_removal(r, iface)
    assert {(routes, remove), (routes, d(ROUTER, r['id']))} <= plan.edges


def test_router_actions_make_the_right_calls(cloud, conn, pid, external):
    _net, subnet = scenarios.network(cloud, pid)
    r, iface = scenarios.router(cloud, pid, subnet, external)
    r['routes'] = [{'destination': '10.9.0.0/24', 'nexthop': '10.0.0.9'}]
    [ref] = core.Router().list(conn, pid)
    kind = core.Router()
    kind.apply(conn, Step('clear_router_routes', ref))
    kind.apply(
        conn, Step('remove_router_interface', ref, {'port_id': iface['id']})
    )
    kind.apply(conn, Step('clear_router_gateway', ref))
    base = f'/v2.0/routers/{r["id"]}'
    assert cloud.changes == [
        ('PUT', base),
        ('PUT', base + '/remove_router_interface'),
        ('PUT', base),
    ]
    assert r['routes'] == [] and r['external_gateway_info'] == {}
    assert not cloud.exists('ports', iface['id'])
    with pytest.raises(NotImplementedError):
        kind.apply(conn, Step('unplug', ref))


def test_gateway_needed_by_a_floating_ip_is_in_use(cloud, conn, pid, external):
    net, subnet = scenarios.network(cloud, pid)
    r, _ = scenarios.router(cloud, pid, subnet, external)
    scenarios.floating_ip(
        cloud, pid, external, r, scenarios.port(cloud, pid, net, subnet)
    )
    [ref] = core.Router().list(conn, pid)
    with pytest.raises(sdk_exc.ConflictException) as err:
        core.Router().apply(conn, Step('clear_router_gateway', ref))
    # a 409 is retried: the floating IP is being deleted meanwhile
    assert core.Router().is_in_use(err.value)


def test_trunk_goes_after_its_server_and_before_its_ports(cloud, conn, pid):
    net, subnet = scenarios.network(cloud, pid)
    vm = scenarios.server(cloud, pid)
    parent = scenarios.port(
        cloud,
        pid,
        net,
        subnet,
        'parent',
        device_owner='compute:nova',
        device_id=vm['id'],
    )
    sub = scenarios.port(
        cloud, pid, net, subnet, 'sub', device_owner='trunk:subport'
    )
    t = trunk(cloud, pid, parent, [sub])
    [ref] = core.Trunk().list(conn, pid)
    assert ref.attrs == {'port_id': parent['id'], 'sub_port_ids': [sub['id']]}
    plan = plan_for(conn, pid)
    me = d(TRUNK, t['id'])
    assert {
        (d(SERVER, vm['id']), me),
        (me, d(PORT, parent['id'])),
        (me, d(PORT, sub['id'])),
    } <= plan.edges


def test_unbound_trunk_has_no_server_edge(cloud, conn, pid):
    net, subnet = scenarios.network(cloud, pid)
    t = trunk(cloud, pid, scenarios.port(cloud, pid, net, subnet))
    plan = plan_for(conn, pid)
    assert not [e for e in plan.edges if e[1] == d(TRUNK, t['id'])]


def test_a_trunk_port_delete_is_refused_until_the_trunk_is_gone(
    cloud, conn, pid
):
    net, subnet = scenarios.network(cloud, pid)
    parent = scenarios.port(cloud, pid, net, subnet)
    trunk(cloud, pid, parent)
    ref = next(r for r in core.Port().list(conn, pid) if r.id == parent['id'])
    with pytest.raises(sdk_exc.ConflictException, match='trunk'):
        core.Port().delete(conn, ref)


def test_security_groups_rules_and_default_group(cloud, conn, pid):
    default = scenarios.security_group(cloud, pid, 'default')
    web = scenarios.security_group(cloud, pid, 'web', rules_to=[default])
    db = scenarios.security_group(cloud, pid, 'db', rules_to=[web])
    scenarios.add_rule(cloud, db, db)  # a rule naming its own group
    refs = {r.name: r for r in core.SecurityGroup().list(conn, pid)}
    rule = web['security_group_rules'][0]
    assert refs['web'].attrs['remote_rules'] == [[rule['id'], default['id']]]
    # a rule naming its own group orders nothing
    assert len(refs['db'].attrs['remote_rules']) == 1
    plan = plan_for(conn, pid)
    assert plan.order()[-1] == d(SG, default['id'])
    assert (d(SG, db['id']), d(SG, web['id'])) in plan.edges
    assert not any(s.is_break_action for s in plan.steps.values())


def test_the_default_group_goes_after_the_projects_other_groups(
    cloud, conn, pid
):
    # no rule names it: only its name puts it last ('default' < 'zzz')
    default = scenarios.security_group(cloud, pid, 'default')
    other = scenarios.security_group(cloud, pid, 'zzz')
    plan = plan_for(conn, pid)
    assert plan.edges == {(d(SG, other['id']), d(SG, default['id']))}
    assert plan.order() == [d(SG, other['id']), d(SG, default['id'])]


def test_security_group_rule_delete_ignores_a_rule_already_gone(
    cloud, conn, pid
):
    a = scenarios.security_group(cloud, pid, 'a')
    b = scenarios.security_group(cloud, pid, 'b', rules_to=[a])
    rule = b['security_group_rules'][0]
    [ref] = [
        r for r in core.SecurityGroup().list(conn, pid) if r.id == b['id']
    ]
    step = Step('delete_security_group_rule', ref, {'rule_id': rule['id']})
    core.SecurityGroup().apply(conn, step)
    assert not cloud.exists('security_group_rules', rule['id'])
    core.SecurityGroup().apply(conn, step)  # 404: fine
    assert (
        cloud.deleted_order()
        == [f'/v2.0/security-group-rules/{rule["id"]}'] * 2
    )


def test_groups_that_name_each_other_are_deleted_in_a_plan_that_runs(
    cloud, conn, pid
):
    a = scenarios.security_group(cloud, pid, 'a')
    b = scenarios.security_group(cloud, pid, 'b', rules_to=[a])
    scenarios.add_rule(cloud, a, b)
    plan = plan_for(conn, pid)
    assert [s.action for s in plan.steps.values() if s.is_break_action] == [
        'delete_security_group_rule'
    ]
    assert run_plan(conn, plan).ok
    assert cloud.owned_by(pid) == []


def test_rbac_policies_go_before_what_they_share(cloud, conn, pid):
    net, _subnet = scenarios.network(cloud, pid)
    group = scenarios.security_group(cloud, pid, 'shared')
    p1 = rbac(cloud, pid, 'network', net['id'])
    p2 = rbac(cloud, pid, 'security_group', group['id'], 'p-other')
    p3 = rbac(cloud, pid, 'qos_policy', 'q1')
    [ref] = [
        r for r in rbac_kinds.RBACPolicy().list(conn, pid) if r.id == p2['id']
    ]
    assert ref.attrs == {
        'object_type': 'security_group',
        'object_id': group['id'],
        'target': 'p-other',
    }
    plan = plan_for(conn, pid)
    assert (d(RBAC, p1['id']), d(NET, net['id'])) in plan.edges
    assert (d(RBAC, p2['id']), d(SG, group['id'])) in plan.edges
    assert not [e for e in plan.edges if e[0] == d(RBAC, p3['id'])]


def test_network_attributes(cloud, conn, pid):
    net, _ = scenarios.network(cloud, pid)
    net['shared'] = True
    [ref] = core.Network().list(conn, pid)
    assert ref.attrs == {'shared': True}


@pytest.mark.parametrize(
    'kind,coll',
    [
        (core.FloatingIP, 'floatingips'),
        (core.Port, 'ports'),
        (core.Subnet, 'subnets'),
        (core.Network, 'networks'),
        (core.SecurityGroup, 'security-groups'),
        (core.Router, 'routers'),
    ],
)
def test_neutron_deletes_are_synchronous_and_404_is_raised(
    cloud, conn, pid, external, kind, coll
):
    net, subnet = scenarios.network(cloud, pid)
    scenarios.router(cloud, pid, subnet)
    scenarios.security_group(cloud, pid, 'g')
    scenarios.floating_ip(cloud, pid, external)
    if coll == 'ports':
        scenarios.port(cloud, pid, net, subnet)
    if coll in ('subnets', 'networks', 'routers'):
        for p in cloud.all('ports'):
            cloud._remove('ports', p['id'])
    ref = next(iter(kind().list(conn, pid)))
    assert kind.synchronous_delete
    kind().delete(conn, ref)
    assert cloud.deleted_order() == [f'/v2.0/{coll}/{ref.id}']
    with pytest.raises(sdk_exc.NotFoundException):
        kind().delete(conn, ref)


def test_subnet_in_use_is_a_409(cloud, conn, pid):
    net, subnet = scenarios.network(cloud, pid)
    scenarios.port(cloud, pid, net, subnet)
    [ref] = core.Subnet().list(conn, pid)
    with pytest.raises(sdk_exc.ConflictException) as err:
        core.Subnet().delete(conn, ref)
    assert core.Subnet().is_in_use(err.value)


def test_a_whole_routed_network_is_deleted_in_an_order_neutron_accepts(
    cloud, conn, pid, external
):
    net, subnet = scenarios.network(cloud, pid)
    default = scenarios.security_group(cloud, pid, 'default')
    web = scenarios.security_group(cloud, pid, 'web', rules_to=[default])
    r, _ = scenarios.router(cloud, pid, subnet, external)
    r['routes'] = [{'destination': '10.9.0.0/24', 'nexthop': '10.0.0.9'}]
    vm = scenarios.server(cloud, pid, net=net, subnet=subnet, sg=web)
    vm_port = next(p for p in cloud.all('ports') if p['device_id'] == vm['id'])
    user_port = scenarios.port(
        cloud, pid, net, subnet, security_groups=[default['id']]
    )
    scenarios.floating_ip(cloud, pid, external, r, vm_port)
    scenarios.floating_ip(cloud, pid, external, r, user_port)
    trunk(cloud, pid, scenarios.port(cloud, pid, net, subnet, 'parent'))
    rbac(cloud, pid, 'network', net['id'])
    plan = plan_for(conn, pid)
    result = run_plan(conn, plan)
    assert result.ok, [r.error for r in result.results.values() if r.error]
    assert {r.outcome for r in result.results.values()} == {DONE}
    assert cloud.owned_by(pid) == []
    assert cloud.exists('networks', external['id'])


def test_security_groups_are_listed_without_a_project_filter(cloud, conn, pid):
    # Neutron creates a project's default group when a list is filtered by
    # that project: a verification round would always find a new one
    mine = scenarios.security_group(cloud, pid, 'default')
    other = scenarios.security_group(cloud, 'someone-else', 'default')
    refs = core.SecurityGroup().list(conn, pid)
    assert [r.id for r in refs] == [mine['id']]
    assert other['id'] not in [r.id for r in refs]
    lists = [
        path
        for method, path in cloud.requests
        if method == 'GET' and '/security-groups' in path
    ]
    assert lists and not any(
        'project_id' in p or 'tenant_id' in p for p in lists
    )


def test_neutron_extensions_are_asked_once_per_connection():
    # every extension kind needs them, in every discovery round: one GET
    from tests.unit.fakes.clouds import ServicesCloud

    with ServicesCloud() as services:
        conn = services.connection()
        kinds = [
            k
            for k in kinds_of(network)
            if issubclass(k, common._ExtensionKind)
        ]
        assert len(kinds) > 1
        facts = Facts()  # as kinds.build shares it
        for _round in range(2):
            for kind in kinds:
                list(kind(facts=facts).list(conn, 'p1'))
        gets = [
            p
            for m, p in services.requests
            if m == 'GET' and p.startswith('/v2.0/extensions')
        ]
        assert gets == ['/v2.0/extensions']
        # another connection asks again
        list(kinds[0](facts=facts).list(services.connection(), 'p1'))
        assert (
            len(
                [
                    p
                    for m, p in services.requests
                    if p.startswith('/v2.0/extensions')
                ]
            )
            == 2
        )


# -- what another project uses is kept ---------------------------------------


def test_a_group_another_projects_rule_names_is_kept_and_the_rule_stays(
    cloud, pid
):
    # the reproduction: deleting the group made Neutron delete the other
    # project's rule that names it (remote_group_id is ON DELETE CASCADE)
    mine = scenarios.security_group(cloud, pid, 'web')
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.security_group(cloud, other, 'db', rules_to=[mine])
    rule = theirs['security_group_rules'][0]
    assert kept_and_refused(cloud, pid, mine['id']) == (
        f'rule {rule["id"]} of project {other} names it as remote group '
        f'(Neutron would delete that rule with it)'
    )
    assert cloud.exists('security_group_rules', rule['id'])
    assert cloud.exists('security_groups', mine['id'])


def test_the_fake_neutron_deletes_the_rules_naming_a_group(cloud, conn, pid):
    # what the keep prevents, as Neutron does it
    mine = scenarios.security_group(cloud, pid, 'web')
    theirs = scenarios.security_group(cloud, 'p-b', 'db', rules_to=[mine])
    conn.network.delete_security_group(mine['id'])
    assert theirs['security_group_rules'] == []


def test_rules_naming_a_group_cost_no_call_and_own_ones_keep_nothing(
    cloud, conn, pid
):
    web = scenarios.security_group(cloud, pid, 'web')
    scenarios.security_group(cloud, pid, 'db', rules_to=[web])
    scenarios.security_group(cloud, 'p-b', 'b1', rules_to=[web])
    scenarios.security_group(cloud, 'p-c', 'c1', rules_to=[web])
    refs = {r.name: r for r in core.SecurityGroup().list(conn, pid)}
    assert [p for _m, p in cloud.requests if p.startswith('/v2.0/')] == [
        '/v2.0/security-groups'
    ]
    assert [o for _r, o in refs['web'].attrs['named_by']] == ['p-b', 'p-c']
    assert 'named_by' not in refs['db'].attrs
    step = core.SecurityGroup().primary_step(refs['web'])
    assert step.action == 'keep' and '(and 1 more)' in step.params['reason']
    assert core.SecurityGroup().primary_step(refs['db']).is_delete


def test_the_orphan_search_keeps_a_group_a_live_project_names(cloud, conn):
    gone = scenarios.security_group(cloud, 'p-gone', 'web')
    scenarios.security_group(cloud, 'p-live', 'db', rules_to=[gone])
    refs = {r.id: r for r in core.SecurityGroup().list(conn, None)}
    step = core.SecurityGroup().primary_step(refs[gone['id']])
    reason = step.params['reason']
    assert step.action == 'keep'
    assert 'of project p-live names it as remote group' in reason


def test_a_floating_ip_on_another_projects_port_is_kept(cloud, pid, external):
    other = scenarios.project(cloud, 'B')['id']
    net, subnet = scenarios.network(cloud, other)
    their_port = scenarios.port(cloud, other, net, subnet)
    fip = scenarios.floating_ip(cloud, pid, external, port_=their_port)
    assert kept_and_refused(cloud, pid, fip['id']) == (
        f'associated with port {their_port["id"]} of project {other}, '
        f'whose address it is'
    )
    assert cloud.get('floatingips', fip['id'])['port_id'] == their_port['id']


def test_floating_ips_cost_one_port_list_and_a_get_per_foreign_port(
    cloud, conn, pid, external
):
    net, subnet = scenarios.network(cloud, pid)
    for i in range(3):
        port = scenarios.port(cloud, pid, net, subnet, name=f'p{i}')
        scenarios.floating_ip(cloud, pid, external, port_=port)
    b_net, b_subnet = scenarios.network(cloud, 'p-b')
    their_port = scenarios.port(cloud, 'p-b', b_net, b_subnet)
    scenarios.floating_ip(cloud, pid, external, port_=their_port)
    refs = core.FloatingIP().list(conn, pid)
    steps = [core.FloatingIP().primary_step(r) for r in refs]
    assert [s.action for s in steps].count('keep') == 1
    ports = [p for _m, p in cloud.requests if p.startswith('/v2.0/ports')]
    assert ports == [
        f'/v2.0/ports?project_id={pid}',
        f'/v2.0/ports/{their_port["id"]}',
    ]
    # none associated: no port call at all
    cloud.requests.clear()
    for fip in cloud.all('floatingips'):
        fip['port_id'] = None
    list(core.FloatingIP().list(conn, pid))
    assert [p for _m, p in cloud.requests if p.startswith('/v2.0/')] == [
        f'/v2.0/floatingips?project_id={pid}'
    ]


def test_a_group_another_project_names_after_the_plan_is_kept(cloud):
    """The simulation's ``o-names-t-group-later``: project O adds a rule
    naming T's group as its remote group after the cascade listed the
    groups. Deleting T's group would make Neutron delete O's rule (ON
    DELETE CASCADE): the delete reads the rules naming it again first
    (one GET) and keeps the group, and the project."""
    t = scenarios.project(cloud, 'T')['id']
    o = scenarios.project(cloud, 'O')['id']
    mine = scenarios.security_group(cloud, t, 'web')
    theirs = scenarios.security_group(cloud, o, 'db')
    pc, targets, plan = cascade_for(cloud, t)
    assert plan.kept() == []
    added = []

    def o_adds_a_rule(event):
        step = event.step
        if (
            event.kind == 'started'
            and step.is_delete
            and step.target.id == mine['id']
            and not added
        ):
            added.append(scenarios.add_rule(cloud, theirs, mine))

    pc.on_event = o_adds_a_rule
    with pytest.raises(CascadeError) as refused:
        pc.execute(plan, targets)
    [rule] = added
    why = (
        f'rule {rule["id"]} of project {o} names it as remote group: '
        'deleting the group would delete that rule'
    )
    assert why in str(refused.value)
    assert cloud.exists('security_group_rules', rule['id'])
    assert cloud.exists('security_groups', mine['id'])
    assert rule in theirs['security_group_rules']
    gets = [
        p
        for m, p in cloud.requests
        if m == 'GET' and p.startswith('/v2.0/security-group-rules')
    ]
    assert gets == [f'/v2.0/security-group-rules?remote_group_id={mine["id"]}']


def test_a_group_only_its_own_projects_rules_name_is_deleted(cloud):
    t = scenarios.project(cloud, 'T')['id']
    web = scenarios.security_group(cloud, t, 'web')
    scenarios.security_group(cloud, t, 'db', rules_to=[web])
    pc, targets, plan = cascade_for(cloud, t)
    pc.execute(plan, targets)
    assert not cloud.exists('security_groups', web['id'])
