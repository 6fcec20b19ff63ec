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

from osc_cascade.kinds.network import core
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused


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
