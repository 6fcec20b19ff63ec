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

"""Ironic on the minicloud (issue #31): the conductor with its API,
``fake-hardware`` nodes (``tools/minicloud up --with ironic``), Ironic's
project-scoped policies; what ``osc_cascade.kinds.baremetal`` rests on.

* a node an admin project owns and leases to the project is the project's
  lease only: the cascade releases it (the lessee unset) and the node
  stays, with its owner; another project's lease of another node stays;
* a node the project owns keeps the project (the cascade exits 1 and
  changes nothing) until its owner is unset; the node is never deleted;
* Ironic runs its default policies: a project-scoped admin may not name
  another project in a node listing (403); the cascade asks with the
  same user's system-scoped token, from whichever project it is scoped
  to;
* an admin without a role on the system (no system-scoped token) is
  refused the project's node listing (403) in one line, and the cascade
  deletes nothing, rather than miss a node the project owns.
"""

from __future__ import annotations

import openstack
import pytest

from tests.functional import members, topology
from tests.functional.conftest import service_proxy
from tests.functional.topology import cascade, unique

pytestmark = [pytest.mark.functional, pytest.mark.ironic]

#: the fields owner and lessee, and their filters
MV = {'microversion': '1.65'}

admin_baremetal = service_proxy('baremetal', 'Ironic', 'baremetal')


@pytest.fixture(scope='module')
def system(admin, admin_baremetal):
    """The cloud admin with a system-scoped token: it enrolls nodes with
    any owner (a project-scoped admin may only give its own project)."""
    auth = admin.config.auth
    return openstack.connect(
        auth_url=auth['auth_url'],
        username=auth['username'],
        password=auth['password'],
        user_domain_name=auth.get('user_domain_name', 'Default'),
        system_scope='all',
        region_name=admin.config.region_name,
        load_yaml_config=False,
        load_envvars=False,
    ).baremetal


@pytest.fixture
def nodes(system):
    """Enrolls fake-hardware nodes; deletes them after the test."""
    enrolled = []

    def enroll(**fields):
        node = system.post(
            '/nodes',
            json={'driver': 'fake-hardware', 'name': unique('node'), **fields},
            **MV,
        ).json()
        enrolled.append(node['uuid'])
        return node

    yield enroll
    for uuid in enrolled:
        system.delete(f'/nodes/{uuid}', raise_exc=False, **MV)


def disown(system, uuid):
    system.patch(
        f'/nodes/{uuid}', json=[{'op': 'remove', 'path': '/owner'}], **MV
    )


def node(system, uuid):
    return system.get(f'/nodes/{uuid}', **MV).json()


def test_a_lease_is_released_and_the_admins_node_stays(
    admin, system, nodes, cli
):
    admin_project = admin.identity.find_project('admin')
    p = topology.make_project(admin, unique('ironic-lessee'))
    other = topology.make_project(admin, unique('ironic-other'))
    leased = nodes(owner=admin_project.id, lessee=p.id)
    theirs = nodes(owner=admin_project.id, lessee=other.id)

    dry, run = cascade(cli, p.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert ('baremetal.node_lease', leased['uuid']) in planned
    assert ('baremetal.node_lease', theirs['uuid']) not in planned
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is None
    after = node(system, leased['uuid'])
    assert (after['owner'], after['lessee']) == (admin_project.id, None)
    assert node(system, theirs['uuid'])['lessee'] == other.id


def test_a_node_the_project_owns_keeps_it_and_is_never_deleted(
    admin, system, nodes, cli
):
    p = topology.make_project(admin, unique('ironic-owner'))
    owned = nodes(owner=p.id)

    dry, run = cascade(cli, p.id)
    assert dry.code == 1, dry.stdout + dry.stderr
    assert run.code == 1, run.stdout + run.stderr
    assert 'owns this bare metal node' in run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is not None
    assert node(system, owned['uuid'])['owner'] == p.id

    # as the keep says: the owner unset, the project goes, the node stays
    disown(system, owned['uuid'])
    _dry, run = cascade(cli, p.id)
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is None
    assert node(system, owned['uuid'])['owner'] is None


def test_an_admin_of_another_project_cascades_with_its_system_token(
    admin, system, nodes, cli
):
    """The cloud admin scoped to a project that is neither the cloud
    admin's nor the one cascaded, on Ironic's default policies (its
    project token may not name another project: 403): the cascade asks
    Ironic with the same user's system-scoped token, sees the lease and
    the owned node, releases the one, keeps the other and the project."""
    p = topology.make_project(admin, unique('ironic-sys'))
    elsewhere = topology.make_project(admin, unique('ironic-scope'))
    # Swift lists another project's containers to a ResellerAdmin alone
    admin.identity.assign_project_role_to_user(
        elsewhere,
        admin.identity.get_user(admin.current_user_id),
        admin.identity.find_role('ResellerAdmin'),
    )
    owner = admin.identity.find_project('admin')
    leased = nodes(owner=owner.id, lessee=p.id)
    owned = nodes(owner=p.id)
    scope = ('--os-project-name', '', '--os-project-id', elsewhere.id)

    dry, run = cascade(cli, p.id, scope=scope)
    assert dry.code == 1, dry.stdout + dry.stderr  # the owned node keeps it
    assert 'owns this bare metal node' in run.stdout + run.stderr
    assert run.code == 1, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is not None
    assert node(system, owned['uuid'])['owner'] == p.id
    disown(system, owned['uuid'])
    dry, run = cascade(cli, p.id, scope=scope)
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert ('baremetal.node_lease', leased['uuid']) in planned
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is None
    assert node(system, leased['uuid'])['lessee'] is None


def test_an_admin_without_a_system_role_deletes_nothing(admin, system, nodes):
    """An admin of a project who has no role on the system (Keystone
    refuses it a system-scoped token, 401): Ironic's defaults narrow an
    owner filter to the caller's project, silently; the cascade asks with
    the project filter, which Ironic refuses (403), and says in one line
    what the caller lacks; nothing is deleted, the project stays."""
    p = topology.make_project(admin, unique('ironic-unseen'))
    elsewhere = topology.make_project(admin, unique('ironic-scope'))
    someone = members.Member(admin, admin, elsewhere)
    try:
        admin.identity.assign_project_role_to_user(
            elsewhere, someone.user, admin.identity.find_role('admin')
        )
        owned = nodes(owner=p.id)
        leased = nodes(lessee=p.id)

        run = someone.run('project', 'delete', '--cascade', '--yes', p.id)
        out = run.stdout + run.stderr
        assert run.returncode == 1, out
        assert 'HTTP 403' in out or '403' in out, out
        assert 'role add --system all' in out, out
        assert admin.identity.find_project(p.id) is not None
        assert node(system, owned['uuid'])['owner'] == p.id
        assert node(system, leased['uuid'])['lessee'] == p.id
        disown(system, owned['uuid'])
    finally:
        admin.identity.delete_user(someone.user, ignore_missing=True)
