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

"""Every region, on the minicloud's RegionOne and RegionTwo (its own
Neutron and Glance): a project is deleted only when no region holds
anything of it."""

from __future__ import annotations

import openstack
import pytest

from tests.functional import topology
from tests.functional.conftest import ADMIN_CLOUD, needs
from tests.functional.topology import unique

pytestmark = pytest.mark.functional

REGIONS = ('RegionOne', 'RegionTwo')


@pytest.fixture(scope='module')
def region_admins(admin):
    """An admin connection to each region."""
    regions = {r.id for r in admin.identity.regions()}
    if 'RegionTwo' not in regions:
        reason = (
            f'NO REGIONTWO: the cloud has regions {sorted(regions)}; '
            '`tools/minicloud up` starts RegionTwo'
        )
        needs(False, reason)
    return {
        region: openstack.connect(
            cloud=ADMIN_CLOUD, region_name=region, connect_retries=3
        )
        for region in REGIONS
    }


def fill(region_admins, project, cidr):
    """A network with a subnet and a port, and a private image, in each
    region: {(region, kind, id)}."""
    made = set()
    for region, admin in region_admins.items():
        conn = admin.connect_as_project(project)
        net = conn.network.create_network(name=f'net-{region}')
        subnet = conn.network.create_subnet(
            network_id=net.id, ip_version=4, cidr=cidr
        )
        port = conn.network.create_port(network_id=net.id, name='port')
        image = conn.image.create_image(
            name=f'img-{region}',
            data=b'\0' * 512,
            disk_format='raw',
            container_format='bare',
            visibility='private',
            allow_duplicates=True,
        )
        made |= {
            (region, 'network.network', net.id),
            (region, 'network.subnet', subnet.id),
            (region, 'network.port', port.id),
            (region, 'image.image', image.id),
        }
    return made


def held(region_admins, project_id):
    """What the project holds in each region, by admin listings with the
    owner checked: {(region, kind, id)}."""
    found = set()
    for region, admin in region_admins.items():
        for kind, items in (
            ('network.network', admin.network.networks()),
            ('network.subnet', admin.network.subnets()),
            ('network.port', admin.network.ports()),
            ('network.security_group', admin.network.security_groups()),
            ('image.image', admin.image.images(owner=project_id)),
        ):
            found |= {
                (region, kind, o.id)
                for o in items
                if (
                    getattr(o, 'project_id', None) or getattr(o, 'owner', None)
                )
                == project_id
            }
    return found


def test_one_cascade_empties_every_region_and_the_twin_stays(
    admin, cli, region_admins
):
    project = topology.make_project(admin, unique('regions'))
    twin = topology.make_project(admin, unique('twin'))
    made = fill(region_admins, project, '10.61.0.0/24')
    twin_made = fill(region_admins, twin, '10.61.0.0/24')
    assert made <= held(region_admins, project.id)

    plan = cli(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '-f',
        'json',
        project.id,
    )
    assert plan.code == 0, plan.stderr
    planned = {(r['Region'], r['Kind'], r['ID']) for r in plan.json()}
    assert made <= planned
    assert ('', 'identity.project', project.id) in planned

    # narrowed to RegionOne: RegionTwo's resources, and the project, stay
    narrowed = cli(
        'project',
        'delete',
        '--cascade',
        '--yes',
        '--region',
        'RegionOne',
        project.id,
    )
    assert narrowed.code == 1, narrowed.stdout + narrowed.stderr
    assert 'RegionTwo still holds' in narrowed.stderr
    left = held(region_admins, project.id)
    assert {r for r in left if r[0] == 'RegionOne'} == set()
    assert {m for m in made if m[0] == 'RegionTwo'} <= left
    assert admin.identity.get_project(project.id).is_enabled is False

    # the whole cascade finishes the job
    result = cli('project', 'delete', '--cascade', '--yes', project.id)
    assert result.code == 0, result.stdout + result.stderr
    assert held(region_admins, project.id) == set()
    assert admin.identity.find_project(project.id) is None
    assert twin_made <= held(region_admins, twin.id)


def test_orphan_list_finds_what_a_plain_delete_left_in_regiontwo(
    admin, cli, region_admins
):
    project = topology.make_project(admin, unique('orphaned-r2'))
    conn = region_admins['RegionTwo'].connect_as_project(project)
    net = conn.network.create_network(name='left-behind')
    assert cli('project', 'delete', project.id).code == 0

    listed = cli(
        'orphan',
        'list',
        '--project',
        project.id,
        '--service',
        'network',
        '-f',
        'json',
    )
    assert listed.code == 0, listed.stderr
    rows = {(r['Region'], r['Kind'], r['ID']) for r in listed.json()}
    assert ('RegionTwo', 'network.network', net.id) in rows
    assert {r[0] for r in rows} == {'RegionTwo'}

    purged = cli(
        'orphan',
        'purge',
        '--project',
        project.id,
        '--service',
        'network',
        '--yes',
    )
    assert purged.code == 0, purged.stdout + purged.stderr
    assert held(region_admins, project.id) == set()
