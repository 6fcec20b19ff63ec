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

"""Who else uses the project's Neutron resources (issue #29): the owners
of the servers its ports are the NICs of, and the other projects whose
ports, subnets, routers and floating IPs are on its networks."""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.kinds import calls
from osc_cascade.kinds.base import GONE
from osc_cascade.kinds.compute import server_owners
from osc_cascade.kinds.network.common import (
    neutron_items,
    neutron_items_where,
    neutron_listed,
    neutron_project,
)


def is_nic(port) -> bool:
    """Whether the port is a server's NIC (Nova binds it so)."""
    return bool(port.get('device_id')) and (
        port.get('device_owner') or ''
    ).startswith('compute:')


#: IDs a list's filter names at once (``?network_id=a&network_id=b``):
#: 40 keep the request line under 2 KB, far below what a server in front
#: of Neutron takes
CHUNK = 40
#: the owners of a port whose project Neutron leaves empty: its device
#: (a router's gateway, HA and SNAT ports; a floating IP's port)
_DEVICE_OWNERS = {
    'network:router_gateway': (
        '/routers',
        'routers',
        'router {} (gateway)',
    ),
    'network:router_ha_interface': ('/routers', 'routers', 'router {}'),
    'network:router_centralized_snat': ('/routers', 'routers', 'router {}'),
    'network:floatingip': ('/floatingips', 'floatingips', 'floating IP {}'),
}


def chunks(ids):
    ids = sorted(ids)
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def on_networks(conn, path, key, network_ids, every):
    """The items of ``path`` on the networks: asked by network, CHUNK at a
    time, the chunks at once (``calls.fan_out``: one after another, the
    175 of a 100,000-resource project took 17 s of its dry run's 56), or
    all of them at once for the orphan search (``every``). One network
    (an interface's check before its removal) is asked with the networks
    other threads ask at the same moment (``neutron_items_by``)."""
    if every:
        yield from neutron_items(conn, path, key)
        return
    if len(network_ids) == 1:
        yield from neutron_items_where(
            conn, path, key, 'network_id', next(iter(network_ids))
        )
        return
    for items in calls.fan_out(
        lambda chunk: list(neutron_items(conn, path, key, network_id=chunk)),
        chunks(network_ids),
        service='network',
    ):
        yield from items


def network_users(conn, project_id, networks) -> dict[str, list[list[str]]]:
    """For each network (raw items), what of another project is on it:
    ``[what, project]``: a port (a server's NIC, a router's interface),
    a subnet, a router's gateway, a floating IP. DHCP ports are the
    network's own. Cost: nothing without networks; else a list of the
    ports and one of the subnets on them per CHUNK networks (at N=300:
    8 + 8), every project's ports and subnets once for the orphan search;
    and where ports have no project (gateways, floating IPs), a list of
    their routers and one of their floating IPs per CHUNK such ports
    (every router and floating IP once for the orphan search)."""
    owner = {n['id']: neutron_project(n) for n in networks}
    if not owner:
        return {}
    every = project_id is None
    found: dict[str, list[list[str]]] = {}
    ownerless: list[dict] = []
    for port in on_networks(conn, '/ports', 'ports', owner, every):
        if port.get('network_id') not in owner:
            continue
        if port.get('device_owner') == 'network:dhcp':
            continue
        if not neutron_project(port):
            ownerless.append(port)
            continue
        what = _port_label(port)
        found.setdefault(port['network_id'], []).append(
            [what, neutron_project(port)]
        )
    for port, what, project in _device_owners(conn, ownerless, every):
        found.setdefault(port['network_id'], []).append([what, project])
    for subnet in on_networks(conn, '/subnets', 'subnets', owner, every):
        if subnet.get('network_id') in owner:
            found.setdefault(subnet['network_id'], []).append(
                [f'subnet {subnet["id"]}', neutron_project(subnet)]
            )
    elsewhere = {
        net: sorted({(w, p) for w, p in uses if p != owner[net]})
        for net, uses in found.items()
    }
    return {
        net: [list(u) for u in uses] for net, uses in elsewhere.items() if uses
    }


def _port_label(port) -> str:
    device, device_owner = port.get('device_id'), port.get('device_owner')
    if device and (device_owner or '').startswith('network:router'):
        return f'router {device}'
    if device and (device_owner or '').startswith('compute:'):
        return f'port {port["id"]} of server {device}'
    return f'port {port["id"]}'


def _device_owners(conn, ports, every):
    """``(port, what, project)`` of each port Neutron made with no project,
    the project its device's (unknown: '(unknown)', which keeps); every
    router and floating IP at once for the orphan search (``every``)."""
    by_path: dict[tuple[str, str], set[str]] = {}
    for port in ports:
        path, key, _label = _DEVICE_OWNERS.get(
            port.get('device_owner'), ('', '', '')
        )
        if path and port.get('device_id'):
            by_path.setdefault((path, key), set()).add(port['device_id'])
    owners: dict[str, str] = {}
    for (path, key), ids in sorted(by_path.items()):
        for chunk in [None] if every else chunks(ids):
            owners.update(
                (item['id'], neutron_project(item))
                for item in neutron_items(conn, path, key, id=chunk)
            )
    for port in ports:
        _path, _key, label = _DEVICE_OWNERS.get(
            port.get('device_owner'), ('', '', 'port {}')
        )
        device = port.get('device_id') or ''
        what = label.format(device if _path else port['id'])
        yield port, what, owners.get(device) or '(unknown)'


def nic_since_plan(conn, ref, found, *, scoped=False) -> str:
    """Why a port read again before its delete may not go: it became the
    NIC of another project's server since the plan (an admin plugged it
    in), or ''. Costs a server lookup only when its binding changed."""
    port = {
        'device_id': getattr(found, 'device_id', '') or '',
        'device_owner': getattr(found, 'device_owner', '') or '',
    }
    if not is_nic(port) or port['device_id'] == ref.attrs.get('device_id'):
        return ''
    server = port['device_id']
    owner = server_owners(conn, ref.project_id, {server}, scoped=scoped).get(
        server, ''
    )
    if owner is GONE or owner == ref.project_id:
        return ''
    return (
        f'NIC of server {server} of project {owner or "(unknown)"} since '
        'the plan: deleting it would take that guest off its network'
    )


def _read(conn, path, singular, id_):
    """A Neutron item, read with other threads' reads of the moment, or
    alone where that listing does not hold it (a 404 raised) or failed."""
    found = neutron_listed(conn, path, f'{singular}s', id_)
    if found is not None:
        return found
    return request(conn.network, 'GET', f'{path}/{id_}').json()[singular]


def interface_serves_others_now(conn, port_id) -> str:
    """Why a router interface (its port) may not be removed now: another
    project's port, subnet, gateway or floating IP came onto its network
    since the plan (an orphan purge plans once, with no drain to keep
    others out and no re-plan), or ''. Costs a GET of the port and of its
    network, and the lists ``network_users`` makes for one network."""
    try:
        port = _read(conn, '/ports', 'port', port_id)
        network = _read(conn, '/networks', 'network', port['network_id'])
    except sdk_exc.NotFoundException:
        return ''  # gone: the removal finds that out
    net_id = network['id']
    users = network_users(conn, neutron_project(network), [network])
    if not users.get(net_id):
        return ''
    what, other = users[net_id][0]
    return (
        f'{what} of project {other} is on network {net_id} since the plan: '
        "removing this interface would cut that project's traffic"
    )
