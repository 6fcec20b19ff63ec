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

"""What another project uses, or no project owns, is kept on the real
minicloud, and the project with it: the cascade refuses before changing
anything (exit 1, one line a kept resource saying why).

Each test makes a project A to cascade and what uses A's resource, and
undoes that use and deletes what it made in ``finally``, also when it
fails (the module's own clean-up, in conftest, would otherwise be refused
in the same way).

It runs before test_compute_service_purge (file order): that module deletes
and re-creates the computes' services, and nova then refuses to attach a
volume to a server on such a host ("Service is unavailable at this time":
it checks the host's first service row, the soft-deleted one).
"""

from __future__ import annotations

import contextlib

import openstack
import pytest

from osc_cascade.api import heat
from tests.functional import topology
from tests.functional.topology import unique, wait_for, wait_status

pytestmark = pytest.mark.functional


@pytest.fixture
def projects(admin, cli):
    """Project A, to cascade, and B, the other project; both go at the
    end, what links them having been undone by the test."""
    a = topology.make_project(admin, unique('cross-a'))
    b = topology.make_project(admin, unique('cross-b'))
    yield a, b
    for project in (a, b):
        result = cli('project', 'delete', '--cascade', '--yes', project.id)
        assert result.code == 0, result.stdout + result.stderr


def refused(cli, project_id, kind, resource_id, reason):
    """The dry run's plan keeps the resource (and only it), the run refuses
    with the reason and changes nothing; the keep row of the plan."""
    dry = cli(
        'project', 'delete', '--cascade', '--dry-run', project_id, '-f', 'json'
    )
    [kept] = [r for r in dry.json() if r['Action'] == 'keep']
    assert (kept['Kind'], kept['ID']) == (kind, resource_id)
    run = cli('project', 'delete', '--cascade', '--yes', project_id)
    assert run.code == 1, run.stdout + run.stderr
    assert 'Nothing was changed' in run.stderr, run.stderr
    assert reason in run.stderr, run.stderr
    return kept


def enabled(admin, project_id):
    return admin.identity.get_project(project_id).is_enabled


def test_a_group_another_projects_rule_names_is_kept(admin, projects, cli):
    a, b = projects
    web = topology.scoped(admin, a).network.create_security_group(name='web')
    b_conn = topology.scoped(admin, b)
    theirs = b_conn.network.create_security_group(name='clients')
    rule = b_conn.network.create_security_group_rule(
        security_group_id=theirs.id,
        direction='ingress',
        ethertype='IPv4',
        remote_group_id=web.id,
    )
    try:
        refused(
            cli,
            a.id,
            'network.security_group',
            web.id,
            f'keep network.security_group web ({web.id}) in RegionOne: rule {rule.id} '
            f'of project {b.id} names it as remote group',
        )
        # the other project's rule, the group and the project are intact
        assert admin.network.get_security_group_rule(rule.id)
        assert admin.network.get_security_group(web.id)
        assert enabled(admin, a.id)
    finally:
        admin.network.delete_security_group_rule(rule, ignore_missing=True)


def test_a_volume_attached_to_another_projects_server_is_kept(
    admin, projects, cli
):
    a, b = projects
    vol = topology.scoped(admin, a).block_storage.create_volume(
        name='lent', size=1
    )
    wait_status(
        lambda: admin.block_storage.get_volume(vol.id), 'available', 'volume'
    )
    b_conn = topology.scoped(admin, b)
    server = b_conn.compute.create_server(
        name='borrower',
        flavor_id=admin.compute.find_flavor(
            topology.FLAVOR, ignore_missing=False
        ).id,
        image_id=topology.public_image(admin).id,
        networks='none',
    )
    attached = False
    try:
        b_conn.compute.wait_for_server(server, wait=240)
        # the admin can attach another project's volume
        admin.compute.create_volume_attachment(server, volume_id=vol.id)
        attached = True
        wait_status(
            lambda: admin.block_storage.get_volume(vol.id), 'in-use', 'attach'
        )
        refused(
            cli,
            a.id,
            'block_storage.volume',
            vol.id,
            f'keep block_storage.volume lent ({vol.id}) in RegionOne: attached to server '
            f'{server.id} of project {b.id}',
        )
        # still attached to that guest, and the project is intact
        now = admin.block_storage.get_volume(vol.id)
        assert now.status == 'in-use'
        assert [x['server_id'] for x in now.attachments] == [server.id]
        assert enabled(admin, a.id)
    finally:
        if attached:
            with contextlib.suppress(openstack.exceptions.NotFoundException):
                admin.compute.delete_volume_attachment(server, vol.id)
            wait_status(
                lambda: admin.block_storage.get_volume(vol.id),
                'available',
                'detach',
            )
        admin.compute.delete_server(server, ignore_missing=True)
        wait_for(
            lambda: admin.compute.find_server(server.id) is None,
            what='the borrower to go',
        )


def test_a_stack_that_made_a_flavor_is_kept_and_the_flavor_stays(
    admin, projects, cli
):
    a, _b = projects
    conn = topology.scoped(admin, a)
    name = unique('stack-flavor')
    template = {
        'heat_template_version': '2018-08-31',
        'resources': {
            'flavor': {
                'type': 'OS::Nova::Flavor',
                'properties': {'name': name, 'ram': 64, 'vcpus': 1},
            },
            'net': {'type': 'OS::Neutron::Net'},
        },
    }
    try:
        stack = topology.create_stack(conn, 'infra', template)
        flavor = admin.compute.find_flavor(name, ignore_missing=False)

        table = cli(
            'project', 'delete', '--cascade', '--dry-run', a.id,
            '-c', 'Action', '-c', 'Name',
        )  # fmt: skip
        # a plan that keeps something that keeps the project: exit 1
        assert table.code == 1, table.stdout + table.stderr
        assert 'infra (1 OS::Neutron::Net, 1 OS::Nova::Flavor)' in (
            table.stdout
        ), table.stdout
        kept = refused(
            cli,
            a.id,
            'orchestration.stack',
            stack.id,
            f'keep orchestration.stack infra ({stack.id}) in RegionOne: deleting it '
            "would make Heat delete what is not the project's (global or "
            f'admin-scoped): OS::Nova::Flavor {flavor.id}',
        )
        assert {(r['type'], r['id']) for r in kept['Name']['removes']} >= {
            ('OS::Nova::Flavor', flavor.id)
        }
        # the flavor, the stack and the project are intact
        assert admin.compute.get_flavor(flavor.id)
        assert conn.orchestration.get_stack(stack.id).status == (
            'CREATE_COMPLETE'
        )
        assert enabled(admin, a.id)
    finally:
        # the test's own flavor goes with its stack, deleted by its owner
        for made in heat.stacks(conn, name='infra', tenant=a.id):
            conn.orchestration.delete_stack(made['id'], ignore_missing=True)
            wait_for(
                lambda made=made: heat.find_stack(conn, made['id']) is None,
                timeout=300,
                what='the stack to go',
            )
