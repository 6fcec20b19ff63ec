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

"""`openstack orphan list` and `openstack orphan purge` on the minicloud."""

from __future__ import annotations

import pytest

from tests.functional import topology
from tests.functional.topology import unique, wait_for

pytestmark = pytest.mark.functional


def light_project(admin, name):
    """A project with resources in Neutron, Cinder and Glance (no servers:
    the orphans of servers are the same listing as any other kind)."""
    project = topology.make_project(admin, name)
    conn = topology.scoped(admin, project)
    public = topology.public_network(admin)
    net = conn.network.create_network(name='net')
    subnet = conn.network.create_subnet(
        network_id=net.id, ip_version=4, cidr='10.30.0.0/24'
    )
    router = conn.network.create_router(
        name='router', external_gateway_info={'network_id': public.id}
    )
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    conn.network.create_port(network_id=net.id, name='port')
    conn.network.create_ip(floating_network_id=public.id)
    conn.network.create_security_group(name='sg')
    volume = conn.block_storage.create_volume(name='vol', size=1)
    wait_for(
        lambda: conn.block_storage.get_volume(volume.id).status == 'available',
        what='the volume',
    )
    conn.image.create_image(
        name='img',
        data=b'\0' * 512,
        disk_format='raw',
        container_format='bare',
        visibility='private',
        allow_duplicates=True,
    )
    return project


def orphans_of(cli, project_id):
    result = cli('orphan', 'list', '--project', project_id, '-f', 'json')
    assert result.code == 0, result.stderr
    return {(r['Kind'], r['ID']) for r in result.json()}


def test_orphans_of_a_plainly_deleted_project_are_listed_and_purged(
    admin, cli
):
    gone = light_project(admin, unique('orphaned'))
    live = light_project(admin, unique('alive'))
    expected = topology.owned(admin, gone.id)
    live_owned = topology.owned(admin, live.id)
    assert expected, 'the project holds nothing to orphan'

    # a plain delete, as before this plugin: everything stays behind
    assert cli('project', 'delete', gone.id).code == 0
    assert topology.owned(admin, gone.id) == expected

    listed = cli('orphan', 'list', '-f', 'json')
    assert listed.code == 0, listed.stderr
    print(listed.stdout)  # the closing note quotes it
    rows = listed.json()
    assert {
        (r['Kind'], r['ID']) for r in rows if r['Project ID'] == gone.id
    } == expected
    assert not [r for r in rows if r['Project ID'] == live.id]
    monitored = cli(
        'orphan', 'list', '--exit-code', '--project', gone.id, '-f', 'value'
    )
    assert monitored.code == 2

    dry = cli(
        'orphan', 'purge', '--dry-run', '--project', gone.id, '-f', 'json'
    )
    assert dry.code == 0, dry.stderr
    assert topology.owned(admin, gone.id) == expected

    purged = cli('orphan', 'purge', '--yes', '--project', gone.id)
    assert purged.code == 0, purged.stdout + purged.stderr
    assert topology.owned(admin, gone.id) == set()
    assert orphans_of(cli, gone.id) == set()
    assert topology.owned(admin, live.id) == live_owned
