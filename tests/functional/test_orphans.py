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

import openstack
import pytest

from osc_cascade.api import keystone
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
    assert monitored.code == 3  # orphans found

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


def project_listing_is_truncated(admin):
    """The minicloud runs Keystone with a low [resource] list_limit: a
    listing of the projects is cut short and only says "truncated"."""
    found = keystone.projects(admin)
    if not found.truncated:
        pytest.fail(
            'Keystone did not truncate GET /v3/projects: the minicloud '
            'runs with [resource] list_limit = 3 (tools/minicloud stop '
            'keystone && tools/minicloud up rewrites its config)'
        )
    return {p['id'] for p in found.items}


def unlisted_project(admin, tries=5):
    """A new project the truncated listing leaves out. Keystone gives a
    random ID and the listing shows the lowest few, so a new project is
    now and then among them: such a one proves nothing and is replaced."""
    for _ in range(tries):
        project = topology.make_project(admin, unique('unlisted'))
        if project.id not in project_listing_is_truncated(admin):
            return project
        admin.identity.delete_project(project)
    pytest.fail(f'{tries} new projects were all in the truncated listing')


def really_gone(admin, owner_id):
    """Keystone's own 404, for the project and for the domain."""
    try:
        return not keystone.owner_exists(admin, owner_id)
    except openstack.exceptions.HttpException:
        return False


def test_a_truncated_project_listing_does_not_orphan_the_admin_project(
    admin, cli
):
    project_listing_is_truncated(admin)
    public = admin.network.find_network('public')
    assert public is not None and public.is_router_external
    admin_id = public.project_id
    admin_owned = {
        public.id,
        *public.subnet_ids,
        *(p.id for p in admin.network.rbac_policies(object_id=public.id)),
        *(
            g.id
            for g in admin.network.security_groups(
                project_id=admin_id, name='default'
            )
        ),
    }
    assert len(admin_owned) >= 3, admin_owned
    # the listing sorts by ID, so the admin project may be one of the
    # list_limit lowest and shown: a live project the listing certainly
    # leaves out, with a network, is what is at stake either way
    hidden = unlisted_project(admin)
    hidden_conn = topology.scoped(admin, hidden)
    hidden_net = hidden_conn.network.create_network(name='unlisted')
    try:
        listed = cli('orphan', 'list', '-f', 'json')
        assert listed.code == 0, listed.stderr
        rows = listed.json()
    finally:
        hidden_conn.network.delete_network(hidden_net)
        admin.identity.delete_project(hidden)
    reported = {r['ID'] for r in rows}
    assert not admin_owned & reported
    assert hidden_net.id not in reported
    assert not {admin_id, hidden.id} & {r['Project ID'] for r in rows}
    # the listing (the fast path) did not show every owner that exists,
    # and each owner reported is gone by Keystone's own word, asked after
    # the listing. Not whether it was among those shown before it: the
    # other worker's tests make and delete projects meanwhile, and one of
    # the three lowest IDs that a test then deletes is as gone as any
    # (a live one shown and reported gone fails here, on Keystone's word)
    owners = {
        r['Project ID']
        for r in rows
        if r['Reason'] == 'owner project does not exist'
    }
    assert all(really_gone(admin, o) for o in owners), owners


def test_purge_with_a_truncated_listing_deletes_only_a_deleted_projects(
    admin, cli
):
    project_listing_is_truncated(admin)
    gone = light_project(admin, unique('orphaned'))
    live = light_project(admin, unique('alive'))
    expected = topology.owned(admin, gone.id)
    live_owned = topology.owned(admin, live.id)
    assert cli('project', 'delete', gone.id).code == 0

    # the whole cloud's plan, read only: what others left may be in it,
    # but nothing of a project that exists
    dry = cli('orphan', 'purge', '--dry-run', '-f', 'json')
    assert dry.code == 0, dry.stderr
    planned = dry.json()
    assert {
        (r['Kind'], r['ID'])
        for r in planned
        if r['Project'] == gone.id and r['Action'] == 'delete'
    } == expected
    owners = {r['Project'] for r in planned}
    assert live.id not in owners
    assert all(really_gone(admin, o) for o in owners), owners

    # the live project named too: it is asked for, and it exists
    purged = cli(
        'orphan',
        'purge',
        '--yes',
        '--project',
        gone.id,
        '--project',
        live.id,
    )
    assert purged.code == 0, purged.stdout + purged.stderr
    assert topology.owned(admin, gone.id) == set()
    assert topology.owned(admin, live.id) == live_owned
    assert admin.identity.get_project(live.id).id == live.id
