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

"""What of a project's Neutron resources another project uses, and the
cascade keeps (issue #29): a port that is another project's server's NIC,
a network that other projects' ports, subnets or routers are on, and what
of the project's serves such a network."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import compute, network
from osc_cascade.kinds.network import core
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.kinds import kinds_of
from tests.unit.fakes.run import cascade_for


def cascade(osc, *argv):
    return osc('project', 'delete', '--cascade', '--yes', *argv)


# -- #29 item 2: a port that is another project's server's NIC ------------


def nic_of_their_server(cloud, pid):
    """A's port that an admin attached to B's server."""
    other = scenarios.project(cloud, 'B')['id']
    net, subnet = scenarios.network(cloud, pid)
    vm = scenarios.server(cloud, other, 'their-vm')
    port = scenarios.port(
        cloud,
        pid,
        net,
        subnet,
        'lent',
        device_id=vm['id'],
        device_owner='compute:nova',
    )
    return other, vm, port


def test_a_port_that_is_another_projects_servers_nic_is_kept(cloud, pid):
    other, vm, port = nic_of_their_server(cloud, pid)
    assert kept_and_refused(cloud, pid, port['id']) == (
        f'NIC of server {vm["id"]} of project {other}: deleting it would '
        f'take that guest off its network'
    )
    assert cloud.get('ports', port['id'])['device_id'] == vm['id']


def test_the_cli_refuses_with_the_nics_line(cloud, osc, pid):
    other, vm, port = nic_of_their_server(cloud, pid)
    result = cascade(osc, 'A')
    assert result.code == 1, result.stdout
    assert (
        f'keep network.port lent ({port["id"]}) in RegionOne: NIC of server '
        f'{vm["id"]} of project {other}: deleting it would take that guest '
        f'off its network.'
    ) in result.stderr
    assert cloud.changes == []


def test_a_nic_of_the_projects_own_server_goes_with_the_server(
    cloud, conn, pid
):
    net, subnet = scenarios.network(cloud, pid)
    vm = scenarios.server(cloud, pid, 'vm')
    port = scenarios.port(
        cloud, pid, net, subnet, device_id=vm['id'], device_owner='compute:x'
    )
    [ref] = [r for r in core.Port().list(conn, pid) if r.id == port['id']]
    assert core.Port().primary_step(ref).is_delete


def test_a_nic_of_a_server_that_is_gone_is_stale_and_deleted(cloud, conn, pid):
    net, subnet = scenarios.network(cloud, pid)
    port = scenarios.port(
        cloud, pid, net, subnet, device_id='gone', device_owner='compute:x'
    )
    [ref] = [r for r in core.Port().list(conn, pid) if r.id == port['id']]
    assert core.Port().primary_step(ref).is_delete


def test_the_orphan_search_keeps_a_nic_of_a_live_projects_server(cloud, conn):
    live = scenarios.project(cloud, 'live')['id']
    net, subnet = scenarios.network(cloud, 'p-gone')
    vm = scenarios.server(cloud, live, 'vm')
    port = scenarios.port(
        cloud,
        'p-gone',
        net,
        subnet,
        device_id=vm['id'],
        device_owner='compute:nova',
    )
    refs = {r.id: r for r in core.Port().list(conn, None)}
    step = core.Port().primary_step(refs[port['id']])
    assert step.action == 'keep'
    assert f'of project {live}' in step.params['reason']


def test_nic_owners_cost_one_server_list_and_a_get_per_foreign_server(
    cloud, conn, pid
):
    _other, vm, _port = nic_of_their_server(cloud, pid)
    net, subnet = scenarios.network(cloud, pid, 'n2')
    for i in range(3):
        mine = scenarios.server(cloud, pid, f'vm{i}', net, subnet)
    cloud.requests.clear()
    list(core.Port().list(conn, pid))
    servers = [p for _m, p in cloud.requests if '/servers' in p]
    assert len(servers) == 2, servers
    assert servers[1].endswith(f'/servers/{vm["id"]}')
    assert mine['id'] not in servers[1]
    # no NIC at all: no server call
    for p in cloud.all('ports'):
        p['device_owner'] = ''
    cloud.requests.clear()
    list(core.Port().list(conn, pid))
    assert not [p for _m, p in cloud.requests if '/servers' in p]


# -- #29 item 3: a network another project is on, and what serves it -----


def routed_shared_network(cloud, pid, external):
    """A's shared network, routed by A's router (a gateway, a floating IP
    of A's server), and B's port on it."""
    other = scenarios.project(cloud, 'B')['id']
    net, subnet = scenarios.network(cloud, pid, 'shared-net')
    net['shared'] = True
    router, iface = scenarios.router(cloud, pid, subnet, external, 'r')
    scenarios.server(cloud, pid, 'vm', net, subnet)
    theirs = scenarios.port(cloud, other, net, subnet, 'theirs')
    return other, net, subnet, router, iface, theirs


def kept_rows(plan):
    return {s.target.id: s.params['reason'] for s in plan.kept()}


def test_a_network_another_projects_port_is_on_is_kept_with_what_serves_it(
    cloud, pid, external
):
    other, net, subnet, router, _iface, theirs = routed_shared_network(
        cloud, pid, external
    )
    _pc, _targets, plan = cascade_for(cloud, pid)
    assert kept_rows(plan) == {
        net['id']: f'port {theirs["id"]} of project {other} is on it: '
        f"deleting it would cut that project's traffic",
        subnet['id']: f'serves network.network shared-net ({net["id"]}), '
        f'which stays',
        router['id']: 'remove_router_interface is not done: it serves '
        f'network.network shared-net ({net["id"]}), which stays',
    }
    assert not [s for s in plan.steps.values() if s.is_break_action]


def test_the_cli_refuses_a_shared_network_in_use_before_any_change(
    cloud, osc, pid, external
):
    other, net, _subnet, _router, _iface, theirs = routed_shared_network(
        cloud, pid, external
    )
    result = cascade(osc, 'A')
    assert result.code == 1, result.stdout
    assert (
        f'keep network.network shared-net ({net["id"]}) in RegionOne: port '
        f'{theirs["id"]} of project {other} is on it'
    ) in result.stderr
    assert cloud.changes == []


def test_delete_shared_does_not_delete_a_network_in_use(cloud, pid, external):
    _other, net, *_rest = routed_shared_network(cloud, pid, external)
    _pc, _targets, plan = cascade_for(cloud, pid, delete_shared=True)
    assert net['id'] in kept_rows(plan)


def test_a_run_with_the_network_kept_leaves_what_routes_it(
    cloud, conn, pid, external
):
    """As the orphan purge runs a plan that keeps some: the interface and
    the gateway stay, and so B's traffic; A's own server port goes."""
    _other, net, subnet, router, iface, theirs = routed_shared_network(
        cloud, pid, external
    )
    kinds = [*kinds_of(network), compute.Server]
    plan = build_plan(
        Inventory([r for k in kinds for r in k().list(conn, pid)]),
        kinds_mod.build(),
        [{'id': pid, 'name': 'A'}],
    )
    Executor(conn, kinds_mod.build(), clock=FakeClock()).run(plan)
    assert cloud.get('ports', iface['id']) is not None
    assert cloud.get('routers', router['id'])['external_gateway_info']
    for collection, kept in (('networks', net), ('subnets', subnet)):
        assert cloud.get(collection, kept['id']) is not None
    assert cloud.get('ports', theirs['id']) is not None
    assert not [
        p for p in cloud.all('ports') if p['device_owner'] == 'compute:nova'
    ]


def test_an_interface_another_project_came_to_use_since_the_plan_stays(
    cloud, conn, pid, external
):
    """B plugs a port into A's shared network after the plan (an orphan
    purge plans once, with no drain and no re-plan): the interface that
    routes it is read again before its removal and kept, with what it
    serves; the simulation found the interface removed (invariant 1)."""
    net, subnet = scenarios.network(cloud, pid, 'shared-net')
    net['shared'] = True
    router, iface = scenarios.router(cloud, pid, subnet, external, 'r')
    kinds = [*kinds_of(network), compute.Server]
    plan = build_plan(
        Inventory([r for k in kinds for r in k().list(conn, pid)]),
        kinds_mod.build(),
        [{'id': pid, 'name': 'A'}],
    )
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.port(cloud, other, net, subnet, 'theirs')
    result = Executor(conn, kinds_mod.build(), clock=FakeClock()).run(plan)
    assert cloud.get('ports', iface['id']) is not None
    assert cloud.get('routers', router['id']) is not None
    assert cloud.get('networks', net['id']) is not None
    [kept] = [
        r
        for r in result.results.values()
        if r.step.action == 'remove_router_interface'
    ]
    assert kept.outcome == 'kept'
    assert kept.error == (
        f'port {theirs["id"]} of project {other} is on network '
        f'{net["id"]} since the plan: removing this interface would cut '
        "that project's traffic"
    )


def test_another_projects_router_interface_and_subnet_keep_the_network(
    cloud, conn, pid
):
    other = scenarios.project(cloud, 'B')['id']
    net, subnet = scenarios.network(cloud, pid)
    their_router, _ = scenarios.router(cloud, other, subnet, name='their-r')
    [ref] = core.Network().list(conn, pid)
    assert (
        core.Network()
        .primary_step(ref)
        .params['reason']
        .startswith(f'router {their_router["id"]} of project {other} is on it')
    )
    for p in list(cloud.all('ports')):
        if p['project_id'] == other:
            cloud._remove('ports', p['id'])
    cloud.add(
        'subnets',
        name='theirs',
        network_id=net['id'],
        project_id=other,
        tenant_id=other,
    )
    [ref] = core.Network().list(conn, pid)
    assert 'of project' in core.Network().primary_step(ref).params['reason']
    assert ref.attrs['used_by'][0][0].startswith('subnet ')


def test_another_projects_gateway_and_floating_ip_keep_an_external_network(
    cloud, conn, pid
):
    """Neutron makes a router's gateway port and a floating IP's port
    with no project: their router's or floating IP's owner is asked."""
    other = scenarios.project(cloud, 'B')['id']
    net, subnet = scenarios.network(cloud, pid, 'ext')
    net['router:external'] = True
    their_router = cloud.add(
        'routers', name='r', project_id=other, tenant_id=other, routes=[]
    )
    mine = cloud.add(
        'routers', name='mine', project_id=pid, tenant_id=pid, routes=[]
    )
    for owner, device in (
        ('network:router_gateway', their_router['id']),
        ('network:router_gateway', mine['id']),
    ):
        scenarios.port(
            cloud, '', net, subnet, device_owner=owner, device_id=device
        )
    [ref] = core.Network().list(conn, pid)
    assert ref.attrs['used_by'] == [
        [f'router {their_router["id"]} (gateway)', other]
    ]
    cloud._remove('routers', their_router['id'])
    fip = scenarios.floating_ip(cloud, other, net)
    for p in cloud.all('ports'):
        if p['device_id'] == their_router['id']:
            p.update(device_owner='network:floatingip', device_id=fip['id'])
    [ref] = core.Network().list(conn, pid)
    assert ref.attrs['used_by'] == [[f'floating IP {fip["id"]}', other]]


def test_the_orphan_search_keeps_a_gone_projects_network_a_live_one_is_on(
    cloud, conn
):
    live = scenarios.project(cloud, 'live')['id']
    net, subnet = scenarios.network(cloud, 'p-gone')
    scenarios.port(cloud, live, net, subnet)
    refs = {r.id: r for r in core.Network().list(conn, None)}
    step = core.Network().primary_step(refs[net['id']])
    assert step.action == 'keep'
    assert f'of project {live} is on it' in step.params['reason']


def test_network_users_cost_a_port_and_a_subnet_list_per_40_networks(
    cloud, conn, pid
):
    for i in range(41):
        scenarios.network(cloud, pid, f'n{i}')
    cloud.requests.clear()
    refs = core.Network().list(conn, pid)
    assert not [r for r in refs if r.attrs.get('used_by')]
    calls = [
        p.split('?')[0] for _m, p in cloud.requests if p.startswith('/v2.0')
    ]
    assert calls == [
        '/v2.0/networks',
        *['/v2.0/ports'] * 2,
        *['/v2.0/subnets'] * 2,
    ]
    # no network: no call but the list
    cloud.requests.clear()
    assert core.Network().list(conn, 'p-empty') == []
    assert len(cloud.requests) == 1


def test_a_user_on_a_network_of_any_chunk_keeps_it(cloud, conn, pid):
    """The chunks are listed at once (``calls.fan_out``): each one's
    users still reach their network."""
    live = scenarios.project(cloud, 'live')['id']
    nets = [scenarios.network(cloud, pid, f'n{i}') for i in range(121)]
    for net, subnet in (nets[0], nets[60], nets[120]):
        scenarios.port(cloud, live, net, subnet)
    refs = {r.id: r for r in core.Network().list(conn, pid)}
    used = sorted(
        i
        for i, (n, _s) in enumerate(nets)
        if refs[n['id']].attrs.get('used_by')
    )
    assert used == [0, 60, 120]


def test_a_chunk_that_fails_fails_the_list(cloud, conn, pid):
    """No network is taken for unused because its chunk's list failed:
    the list of networks fails, as one chunk at a time failed."""
    for i in range(81):
        scenarios.network(cloud, pid, f'n{i}')
    cloud.faults.append(('GET', r'^/v2\.0/ports\?', 403))
    with pytest.raises(sdk_exc.ForbiddenException):
        core.Network().list(conn, pid)


def test_the_orphan_search_asks_every_router_once_for_gateways(cloud, conn):
    live = scenarios.project(cloud, 'live')['id']
    net, subnet = scenarios.network(cloud, 'p-gone', 'ext')
    their_router = cloud.add(
        'routers', name='r', project_id=live, tenant_id=live, routes=[]
    )
    scenarios.port(
        cloud,
        '',
        net,
        subnet,
        device_owner='network:router_gateway',
        device_id=their_router['id'],
    )
    cloud.requests.clear()
    refs = {r.id: r for r in core.Network().list(conn, None)}
    assert refs[net['id']].attrs['used_by'] == [
        [f'router {their_router["id"]} (gateway)', live]
    ]
    assert ('GET', '/v2.0/routers') in cloud.requests
