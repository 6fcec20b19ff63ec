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

"""The kinds that had met only the fakes though their service runs on the
minicloud (issue 31; doc/source/contributor/kinds-proved.rst): a server
group, a network's RBAC share, a membership of another project's image,
a member's application credential, what the cascade only reports (a
user's keypair, a user whose default project it is), a deleted project's
quota rows (Nova's read from its own database: its API refuses them), and what `user delete --cascade` takes (application
credentials, credentials, trusts). Each is made through the service's API
as a user would, seen in the dry run, and gone (or kept) afterwards; the
projects go with the module's clean-up, users and keypairs in
``finally``."""

from __future__ import annotations

import contextlib
import json
import uuid

import openstack
import pytest

from tests.functional import test_more_kinds, topology
from tests.functional.conftest import service_database
from tests.functional.members import Member, member_credential
from tests.functional.test_domain_cascade import keypair_for, keypairs_of
from tests.functional.test_service_decides import swift_user
from tests.functional.topology import unique

pytestmark = pytest.mark.functional

#: project A, to cascade, and B, the other project (both go at the end)
projects = test_more_kinds.projects


def dry_and_run(cli, project_id):
    """{(kind, id): action} of the dry run, then the run (exit 0)."""
    dry, run = topology.cascade(cli, project_id)
    assert dry.code == 0 and run.code == 0, dry.stderr + run.stderr
    return {(r['Kind'], r['ID']): r['Action'] for r in dry.json()}


def status(proxy, path):
    return proxy.get(path, raise_exc=False).status_code


def test_a_server_group_and_a_networks_share_go_with_the_project(
    admin, projects, cli
):
    a, b = projects
    conn = topology.scoped(admin, a)
    group = conn.compute.create_server_group(
        name=unique('group'), policies=['anti-affinity']
    )
    net = conn.network.create_network(name=unique('net'))
    share = conn.network.create_rbac_policy(
        object_type='network',
        object_id=net.id,
        action='access_as_shared',
        target_project_id=b.id,
    )
    planned = dry_and_run(cli, a.id)
    assert planned[('compute.server_group', group.id)] == 'delete'
    assert planned[('network.rbac_policy', share.id)] == 'delete'
    assert status(admin.compute, f'/os-server-groups/{group.id}') == 404
    assert admin.network.find_rbac_policy(share.id) is None
    assert admin.network.find_network(net.id) is None
    assert admin.identity.find_project(a.id) is None


def test_a_membership_of_another_projects_image_goes_the_image_stays(
    admin, projects, cli
):
    a, b = projects
    b_image = topology.scoped(admin, b).image
    image = b_image.create_image(
        name=unique('shared'),
        data=b'\0' * 512,
        disk_format='raw',
        container_format='bare',
        visibility='shared',
        allow_duplicates=True,
    )
    b_image.add_member(image, member_id=a.id)
    topology.scoped(admin, a).image.update_member(
        a.id, image, status='accepted'
    )
    planned = dry_and_run(cli, a.id)
    assert planned[('image.member', f'{image.id}/{a.id}')] == 'delete'
    assert admin.image.get_image(image.id).owner_id == b.id
    assert [m.member_id for m in admin.image.members(image)] == []


@pytest.fixture
def member_of(admin):
    """A user with the member role on a project and a connection of its
    own (swift_user); deleted at the end."""
    users = []

    def make(project):
        user, conn = swift_user(admin, project)
        users.append(user)
        return user, conn

    yield make
    for user in users:
        for keypair in keypairs_of(admin, user.id):
            admin.compute.delete_keypair(
                keypair, user_id=user.id, ignore_missing=True
            )
        admin.identity.delete_user(user, ignore_missing=True)


def a_members_credential(projects, member_of):
    """Project A, a member of it, the member's connection and an
    application credential it made."""
    a, _b = projects
    user, conn = member_of(a)
    cred = member_credential(conn, user.id, name=unique('cred'))
    return a, user, conn, cred


def test_a_members_application_credential_goes(
    admin, projects, member_of, cli
):
    a, user, _conn, cred = a_members_credential(projects, member_of)
    planned = dry_and_run(cli, a.id)
    assert planned[('identity.application_credential', cred.id)] == 'delete'
    assert [c.id for c in admin.identity.application_credentials(user)] == []
    assert admin.identity.get_user(user.id)  # the user stays


def test_a_users_keypair_and_default_project_are_reported_and_stay(
    admin, projects, member_of, cli
):
    a, _b = projects
    user, _conn = member_of(a)
    admin.identity.update_user(user, default_project_id=a.id)
    keypair_for(cli, user.id, 'laptop')
    planned = dry_and_run(cli, a.id)
    assert planned[('compute.keypair', f'{user.id}/laptop')] == 'keep'
    assert planned[('identity.user_default_project', user.id)] == 'keep'
    assert admin.identity.find_project(a.id) is None  # it kept nothing
    assert keypairs_of(admin, user.id) == ['laptop']
    assert admin.identity.get_user(user.id).default_project_id == a.id


#: a limit of its own in every service with per-project quotas here
QUOTAS = {
    'quota.compute': ('/os-quota-sets/{p}', 'quota_set', 'instances', 7),
    'quota.block_storage': ('/os-quota-sets/{p}', 'quota_set', 'volumes', 4),
    'quota.network': ('/quotas/{p}', 'quota', 'network', 9),
    'quota.load_balancer': ('/lbaas/quotas/{p}', 'quota', 'load_balancer', 3),
    'quota.key_manager': (
        '/project-quotas/{p}',
        'project_quotas',
        'secrets',
        5,
    ),
}
#: the quota kinds whose service lists every project's quotas
LISTED = {'quota.network', 'quota.load_balancer', 'quota.key_manager'}
PROXIES = {
    'quota.compute': 'compute',
    'quota.block_storage': 'block_storage',
    'quota.network': 'network',
    'quota.load_balancer': 'load_balancer',
    'quota.key_manager': 'key_manager',
}


def test_a_plainly_deleted_projects_quotas_are_orphans_the_purge_resets(
    admin, cli
):
    project = topology.make_project(admin, unique('quota-gone'))
    for kind, (path, key, name, value) in QUOTAS.items():
        proxy = getattr(admin, PROXIES[kind])
        put = proxy.put(path.format(p=project.id), json={key: {name: value}})
        assert put.status_code in (200, 202, 204), (kind, put.text)
    # a plain Keystone delete, as before this plugin
    assert cli('project', 'delete', project.id).code == 0
    listed = cli('orphan', 'list', '--project', project.id, '-f', 'json')
    assert listed.code == 0, listed.stdout + listed.stderr
    # Nova's and Cinder's quota sets have no list (quota.compute says so):
    # the search cannot find them
    assert {(r['Kind'], r['ID']) for r in listed.json()} == {
        (kind, project.id) for kind in LISTED
    }, listed.stdout
    purged = cli('orphan', 'purge', '--yes', '--project', project.id)
    assert purged.code == 0, purged.stdout + purged.stderr
    again = cli('orphan', 'list', '--project', project.id, '-f', 'json')
    assert again.json() == [], again.stdout
    # Nova's and Cinder's went with the purge's quota release (a DELETE
    # each): Cinder reads a deleted project's back (the defaults), Nova
    # answers 400 to any read of them (its verify_project_id)
    path = f'/os-quota-sets/{project.id}'
    cinder = admin.block_storage.get(path).json()['quota_set']
    defaults = admin.block_storage.get(f'{path}/defaults').json()
    assert cinder['volumes'] == defaults['quota_set']['volumes'] != 4
    nova = admin.compute.get(path, raise_exc=False)
    assert nova.status_code == 400, nova.text
    assert 'is not a valid project' in nova.text


def nova_quota_rows(project_id: str) -> dict:
    """{table: sorted (resource, limit)} of the project's rows in Nova's
    API database: its own quotas and its users' (``project_user_quotas``).
    Nova answers 400 to an API read of a deleted project's quotas."""
    db = service_database(
        'nova/nova-db.conf',
        'api_database',
        "to read a deleted project's quota rows (Nova's API refuses them)",
    )
    rows = {}
    with db, db.cursor() as cur:
        for table in ('quotas', 'project_user_quotas'):
            cur.execute(
                f'SELECT resource, hard_limit FROM {table} '
                'WHERE project_id = %s',
                (project_id,),
            )
            rows[table] = sorted(cur.fetchall())
    return rows


def test_a_projects_own_nova_quotas_go_with_it(admin, cli):
    """The admin gives the project Nova quotas of its own, and one of its
    users a quota of the user's own: the cascade's drain freezes them,
    and ``--settle`` resets them with the project (Nova's DELETE of the
    quota set, ``Quotas.destroy_all_by_project``). Nova's database has
    the rows before and none after."""
    project = topology.make_project(admin, unique('nova-quota'))
    member = Member(admin, admin, project)
    try:
        path = f'/os-quota-sets/{project.id}'
        own = {'quota_set': {'instances': 7, 'cores': 9}}
        assert admin.compute.put(path, json=own).status_code == 200
        users = admin.compute.put(
            path,
            params={'user_id': member.user.id},
            json={'quota_set': {'instances': 3}},
        )
        assert users.status_code == 200, users.text
        assert nova_quota_rows(project.id) == {
            'quotas': [('cores', 9), ('instances', 7)],
            'project_user_quotas': [('instances', 3)],
        }

        dry, run = topology.cascade(cli, project.id, '--settle', '5s')
        assert dry.code == 0, dry.stdout + dry.stderr
        assert run.code == 0, run.stdout + run.stderr
        assert admin.identity.find_project(project.id) is None
        assert nova_quota_rows(project.id) == {
            'quotas': [],
            'project_user_quotas': [],
        }
        # why the database: the API refuses the deleted project's quotas
        refused = admin.compute.get(path, raise_exc=False)
        assert refused.status_code == 400, refused.text
    finally:
        admin.identity.delete_user(member.user.id, ignore_missing=True)


def test_user_delete_cascade_takes_its_credentials_and_trusts(
    admin, projects, member_of, cli
):
    a, user, conn, app = a_members_credential(projects, member_of)
    ec2 = admin.identity.create_credential(
        type='ec2',
        user_id=user.id,
        project_id=a.id,
        blob=json.dumps({'access': uuid.uuid4().hex, 'secret': 'x'}),
    )
    trust = conn.identity.create_trust(
        trustor_user_id=user.id,
        trustee_user_id=admin.current_user_id,
        project_id=a.id,
        roles=[{'name': 'member'}],
        impersonation=False,
    )
    dry = cli(
        'user', 'delete', '--cascade', '--dry-run', user.id, '-f', 'json'
    )
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']): r['Action'] for r in dry.json()}
    for made in (
        ('user.application_credential', app.id),
        ('user.credential', ec2.id),
        ('user.trust', trust.id),
        ('identity.user', user.id),
    ):
        assert planned.get(made) == 'delete', (made, dry.stdout)
    run = cli('user', 'delete', '--cascade', '--yes', user.id)
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_user(user.id) is None
    assert admin.identity.find_credential(ec2.id) is None
    with contextlib.suppress(openstack.exceptions.NotFoundException):
        found = admin.identity.get_trust(trust.id)
        pytest.fail(f'trust {found.id} outlived its trustor')


def test_a_stacks_domain_user_is_reported_and_goes_with_the_stack(
    admin, projects, cli
):
    a, _b = projects
    conn = topology.scoped(admin, a)
    template = {
        'heat_template_version': '2018-08-31',
        # a handle of the token signal: Heat makes a user for it in its
        # stack-user domain (heat's stack_user.StackUser._create_user)
        'resources': {'handle': {'type': 'OS::Heat::WaitConditionHandle'}},
    }
    stack = topology.create_stack(conn, unique('waits'), template)
    [handle] = conn.orchestration.resources(stack)
    user_id = handle.physical_resource_id
    home = admin.identity.get_user(user_id).default_project_id
    assert admin.identity.get_project(home).name.startswith(f'{a.id}-')
    planned = dry_and_run(cli, a.id)
    # the minicloud's Keystone cuts project listings at 2 (list_limit),
    # in ID order, before a case-sensitive name filter: the dry run
    # missed this user whenever its stack project was not among the
    # cloud's two lowest IDs
    assert planned[('identity.stack_domain_user', user_id)] == 'keep'
    assert planned[('orchestration.stack', stack.id)] == 'delete'
    # Heat deleted its user with the stack; the cascade never did
    assert admin.identity.find_user(user_id) is None
