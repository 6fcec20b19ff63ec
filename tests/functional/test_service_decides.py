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

"""What only the real service decides, on the minicloud (issue #29).

Each test builds what a user would, through the services' APIs with a
connection of the project, then runs the real `openstack` command:

* Cinder: a volume offered to another project (a pending transfer, the
  volume ``awaiting-transfer``) has its offer withdrawn and goes with the
  project (a transfer accepted between a saved plan and its run is
  test_plan_ownership's);
* Nova: a per-user quota of the project survives ``project drain`` and
  ``project restore``;
* Neutron: the cascade without admin leaves no default security group in
  a region where the project had nothing;
* Heat: ``cluster force-delete --delete-leftovers`` keeps a volume the
  template retains (``deletion_policy: Retain``);
* Swift: the container a plainly deleted project left is an orphan that
  ``orphan purge`` deletes, and a live project's container of the same
  name stays.

"Gone" is the service's 404, never any error.
"""

from __future__ import annotations

import json
import uuid

import openstack
import pytest

from osc_cascade.kinds.object_store import account
from tests.functional import topology
from tests.functional.conftest import ADMIN_CLOUD, needs, run_openstack
from tests.functional.topology import unique, wait_status

pytestmark = pytest.mark.functional

#: shows a transfer's source project (as the plugin asks)
TRANSFERS = '3.57'


def status_of(proxy, path, **kw):
    """The HTTP status of a GET: 200, or the service's own 404."""
    return proxy.get(path, raise_exc=False, **kw).status_code


# -- 1. Cinder: a pending transfer ------------------------------------------


def test_a_volume_offered_to_another_project_has_its_offer_withdrawn(
    admin, cli
):
    a = topology.make_project(admin, unique('offer-a'))
    b = topology.make_project(admin, unique('offer-b'))
    a_conn = topology.scoped(admin, a)
    vol = a_conn.block_storage.create_volume(size=1, name='offered')
    wait_status(
        lambda: a_conn.block_storage.get_volume(vol.id), 'available', 'volume'
    )
    transfer = a_conn.block_storage.create_transfer(
        volume_id=vol.id, name='to-b'
    )
    # Cinder's own state of an offered volume (and it refuses its delete)
    assert admin.block_storage.get_volume(vol.id).status == (
        'awaiting-transfer'
    )
    refused = a_conn.block_storage.delete(
        f'/volumes/{vol.id}', raise_exc=False
    )
    assert refused.status_code == 400, refused.text
    print(f'\nCinder refused the offered volume: {refused.text}')

    dry = cli(
        'project', 'delete', '--cascade', '--dry-run', a.id, '-f', 'json'
    )
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']): r['Action'] for r in dry.json()}
    assert planned[('block_storage.volume_transfer', transfer.id)] == (
        'delete'
    )
    assert planned[('block_storage.volume', vol.id)] == 'delete'

    run = cli('project', 'delete', '--cascade', '--yes', a.id)
    print(run.stdout + run.stderr)
    assert run.code == 0, run.stdout + run.stderr
    # the offer is withdrawn (Cinder's 404, for the admin too), the
    # volume and the project are gone, B never had anything
    assert (
        status_of(
            admin.block_storage,
            f'/volume-transfers/{transfer.id}',
            microversion=TRANSFERS,
        )
        == 404
    )
    assert status_of(admin.block_storage, f'/volumes/{vol.id}') == 404
    assert admin.identity.find_project(a.id) is None
    # the volume never became B's
    assert not list(
        admin.block_storage.volumes(all_projects=True, project_id=b.id)
    )


# -- 2. Nova: a per-user quota through the drain and the restore ------------


def user_quota(admin, project_id, user_id):
    return admin.compute.get(
        f'/os-quota-sets/{project_id}', params={'user_id': user_id}
    ).json()['quota_set']


def project_quota(admin, project_id):
    return admin.compute.get(f'/os-quota-sets/{project_id}').json()[
        'quota_set'
    ]


# A restore that reset Nova's quotas with DELETE /os-quota-sets/{project}
# deleted the project's per-user rows too (issue 29 item 6): the user's GET
# then answered the project's own values (8 and 16), not its 3 and 5. The
# drain's freeze (a PUT of the project's) leaves them alone.
def test_a_per_user_compute_quota_survives_the_drain_and_the_restore(
    admin, cli
):
    project = topology.make_project(admin, unique('per-user'))
    user = admin.identity.create_user(
        name=unique('quota-user'),
        password=uuid.uuid4().hex,
        domain_id=project.domain_id,
    )
    try:
        admin.identity.assign_project_role_to_user(
            project, user, admin.identity.find_role('member')
        )
        # the project's own limit, and a lower one for the user
        admin.compute.put(
            f'/os-quota-sets/{project.id}',
            json={'quota_set': {'instances': 8, 'cores': 16}},
        ).raise_for_status()
        admin.compute.put(
            f'/os-quota-sets/{project.id}',
            params={'user_id': user.id},
            json={'quota_set': {'instances': 3, 'cores': 5}},
        ).raise_for_status()
        before = user_quota(admin, project.id, user.id)
        project_before = project_quota(admin, project.id)
        assert (before['instances'], before['cores']) == (3, 5)
        assert (project_before['instances'], project_before['cores']) == (
            8,
            16,
        )

        drained = cli('project', 'drain', project.id)
        assert drained.code == 0, drained.stdout + drained.stderr
        during = user_quota(admin, project.id, user.id)
        assert project_quota(admin, project.id)['instances'] == 0

        restored = cli('project', 'restore', project.id)
        assert restored.code == 0, restored.stdout + restored.stderr
        after = user_quota(admin, project.id, user.id)
        print(
            f'\nper-user quota of {user.id} in {project.id}: before '
            f'instances={before["instances"]} cores={before["cores"]}; '
            f'drained instances={during["instances"]} '
            f'cores={during["cores"]}; restored '
            f'instances={after["instances"]} cores={after["cores"]}'
        )
        assert project_quota(admin, project.id) == project_before
        assert after == before
    finally:
        admin.identity.delete_user(user, ignore_missing=True)


# -- 3. Neutron: no default security group where the project had nothing ----


MANAGER_CLOUD = 'minicloud-manager'


def groups_of(region_admin, project_id):
    """The project's security groups in the region, by an admin listing
    with no project filter: Neutron makes the default group of the project
    a listing filters by."""
    return {
        (g.name, g.id)
        for g in region_admin.network.security_groups()
        if g.project_id == project_id
    }


def test_the_cascade_without_admin_makes_no_default_group_in_regiontwo(
    admin,
):
    regions = {r.id for r in admin.identity.regions()}
    needs('RegionTwo' in regions, f'NO REGIONTWO: regions {sorted(regions)}')
    two = openstack.connect(
        cloud=ADMIN_CLOUD, region_name='RegionTwo', connect_retries=3
    )
    manager = openstack.connect(cloud=MANAGER_CLOUD)
    domain = admin.identity.find_domain('managed', ignore_missing=False)
    project = manager.identity.create_project(
        name=unique('r1-only'), domain_id=domain.id
    )
    topology.CREATED.append(project.id)
    password = uuid.uuid4().hex
    user = admin.identity.create_user(
        name=unique('member'), password=password, domain_id=domain.id
    )
    try:
        manager.identity.assign_project_role_to_user(
            project, user, manager.identity.find_role('member')
        )
        member = openstack.connect(
            auth_url=admin.config.auth['auth_url'],
            username=user.name,
            password=password,
            user_domain_id=domain.id,
            project_id=project.id,
            region_name='RegionOne',
            interface='public',
            identity_api_version='3',
            load_yaml_config=False,
            load_envvars=False,
        )
        # the project's member works in RegionOne alone
        net = member.network.create_network(name='r1-net')
        member.network.create_subnet(
            network_id=net.id, ip_version=4, cidr='10.71.0.0/24'
        )
        member.network.create_port(network_id=net.id, name='r1-port')
        member.network.create_security_group(name='r1-sg')
        assert groups_of(two, project.id) == set()
        one = groups_of(admin, project.id)
        assert {name for name, _ in one} == {'default', 'r1-sg'}

        run = run_openstack(
            'project',
            'delete',
            '--cascade',
            '--without-admin',
            '--yes',
            project.id,
            cloud=MANAGER_CLOUD,
        )
        print(run.stdout + run.stderr)
        assert run.code == 0, run.stdout + run.stderr
        assert admin.identity.find_project(project.id) is None
        # RegionTwo: none was ever made, the default included
        assert groups_of(two, project.id) == set()
        # RegionOne: the default group Neutron lets admins alone delete
        # stays, said in one line, for an admin's orphan purge
        assert {name for name, _ in groups_of(admin, project.id)} == {
            'default'
        }
        assert 'Neutron lets admins alone delete' in run.stderr
    finally:
        purged = run_openstack(
            'orphan', 'purge', '--yes', '--project', project.id
        )
        assert purged.code == 0, purged.stdout + purged.stderr
        admin.identity.delete_user(user, ignore_missing=True)
    assert groups_of(admin, project.id) == set()
    assert groups_of(two, project.id) == set()


# -- 4. Heat: a volume the template retains ----------------------------------

HANG = 900  # the stack's delete never finishes within a test


def test_force_delete_leftovers_keeps_a_volume_the_template_retains(
    admin, cli, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the manifests
    project = topology.make_project(admin, unique('retain'))
    conn = topology.scoped(admin, project)
    name = unique('retain')
    template = {
        'heat_template_version': '2018-08-31',
        'resources': {
            'vol': {
                'type': 'OS::Cinder::Volume',
                'deletion_policy': 'Retain',
                'properties': {'size': 1, 'name': name + '-vol'},
            },
            'net': {
                'type': 'OS::Neutron::Net',
                'properties': {'name': name + '-net'},
            },
            # Heat deletes it first and hangs on it: the stack is stuck
            'slow': {
                'type': 'OS::Heat::TestResource',
                'depends_on': ['net', 'vol'],
                'properties': {
                    'value': 'x',
                    'action_wait_secs': {'delete': HANG},
                },
            },
        },
    }
    stack = topology.create_stack(conn, name, template)
    [vol] = list(conn.block_storage.volumes(name=name + '-vol'))
    net = conn.network.find_network(name + '-net', ignore_missing=False)
    try:
        run = cli(
            'cluster',
            'force-delete',
            '--stack',
            name,
            '--delete-leftovers',
            '--yes',
            '--grace',
            '5',
            '-f',
            'json',
        )
        print(run.stdout + run.stderr)
        assert run.code == 0, run.stdout + run.stderr
        [row] = run.json()
        assert row['Result'] == 'abandoned', row
        assert (
            row['Left Behind'],
            row['Leftovers Deleted'],
            row['Leftovers Not Deleted'],
        ) == (2, 1, 0), row  # what Heat itself keeps is no failure
        assert (
            f'OS::Cinder::Volume {vol.id}: kept: the template retains it '
            '(deletion_policy Retain)'
        ) in run.stderr, run.stderr
        assert conn.orchestration.find_stack(stack.id) is None
        # the retained volume is intact, the network is Neutron's 404
        assert admin.block_storage.get_volume(vol.id).status == 'available'
        assert status_of(admin.network, f'/networks/{net.id}') == 404
        manifest = json.loads((tmp_path / row['Manifest']).read_text())
        assert manifest['leftovers'] == {
            f'OS::Cinder::Volume {vol.id}': (
                'kept: the template retains it (deletion_policy Retain)'
            ),
            f'OS::Neutron::Net {net.id}': 'deleted',
        }
    finally:
        if conn.orchestration.find_stack(stack.id) is not None:
            cli(
                'cluster',
                'force-delete',
                '--stack',
                stack.id,
                '--yes',
                '--grace',
                '0',
            )
        conn.network.delete_network(net, ignore_missing=True)
        admin.block_storage.delete_volume(vol.id, ignore_missing=True)


# -- 5. Swift: the orphan container of a plainly deleted project -----------


def swift_user(admin, project):
    """A member of the project, with its own Swift account's token."""
    password = uuid.uuid4().hex
    user = admin.identity.create_user(
        name=unique('swift-user'),
        password=password,
        domain_id=project.domain_id,
    )
    admin.identity.assign_project_role_to_user(
        project, user, admin.identity.find_role('member')
    )
    conn = openstack.connect(
        auth_url=admin.config.auth['auth_url'],
        username=user.name,
        password=password,
        user_domain_id=project.domain_id,
        project_id=project.id,
        region_name='RegionOne',
        interface='public',
        identity_api_version='3',
        load_yaml_config=False,
        load_envvars=False,
    )
    return user, conn


def test_the_container_a_plainly_deleted_project_left_is_purged(admin, cli):
    needs(admin.has_service('object-store'), 'NO SWIFT on the cloud')
    gone = topology.make_project(admin, unique('swift-gone'))
    live = topology.make_project(admin, unique('swift-live'))
    container = unique('bucket')
    users = []
    try:
        for project in (gone, live):
            user, conn = swift_user(admin, project)
            users.append(user)
            conn.object_store.create_container(name=container)
            conn.object_store.create_object(
                container, 'obj', data=project.id.encode()
            )
        # each in its own account, by the admin's reseller access
        for project in (gone, live):
            got = account(admin, project.id).download_object(
                'obj', container=container
            )
            assert got == project.id.encode()

        # a plain Keystone delete, as before this plugin
        assert cli('project', 'delete', gone.id).code == 0

        listed = cli(
            'orphan', 'list', '--project', gone.id, '-f', 'json',
            '--service', 'object-store',
        )  # fmt: skip
        assert listed.code == 0, listed.stdout + listed.stderr
        rows = listed.json()
        print(json.dumps(rows, indent=1))
        assert [(r['Kind'], r['Name']) for r in rows] == [
            ('object_store.container', container)
        ], rows

        purged = cli(
            'orphan', 'purge', '--yes', '--project', gone.id,
            '--service', 'object-store',
        )  # fmt: skip
        print(purged.stdout + purged.stderr)
        assert purged.code == 0, purged.stdout + purged.stderr
        # Swift's 404 for the orphan's container, in the gone account
        head = account(admin, gone.id).head(f'/{container}', raise_exc=False)
        assert head.status_code == 404, head.status_code
        # the live project's container of the same name is untouched
        assert (
            account(admin, live.id).download_object('obj', container=container)
            == live.id.encode()
        )
    finally:
        account(admin, live.id).delete_object(
            'obj', container=container, ignore_missing=True
        )
        account(admin, live.id).delete_container(
            container, ignore_missing=True
        )
        for user in users:
            admin.identity.delete_user(user, ignore_missing=True)
