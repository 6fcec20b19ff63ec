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

"""`openstack cluster force-delete` and the stuck sweep on the minicloud's
real Heat (``enable_stack_abandon = true``).

A stack whose delete hangs: an ``OS::Heat::TestResource`` that takes
``delete_wait`` seconds to delete and depends on a network (and a Swift
container when Swift is up), so that Heat deletes it first and the others
wait behind it. The abandon-disabled path (Heat's default) is in the unit
tests only: the minicloud cannot restart Heat with another configuration.
"""

from __future__ import annotations

import json
import time

import pytest

from osc_cascade.kinds.object_store import account
from tests.functional import topology
from tests.functional.topology import unique, wait_for

pytestmark = pytest.mark.functional

HANG = 900  # longer than any test: the stack's delete never finishes


def template(name: str, *, network: bool, container: bool) -> dict:
    resources = {}
    if network:
        resources['net'] = {
            'type': 'OS::Neutron::Net',
            'properties': {'name': name + '-net'},
        }
    if container:
        resources['bucket'] = {
            'type': 'OS::Swift::Container',
            'properties': {'name': name + '-bucket'},
        }
    resources['slow'] = {
        'type': 'OS::Heat::TestResource',
        'depends_on': sorted(resources),
        'properties': {'value': 'x', 'action_wait_secs': {'delete': HANG}},
    }
    return {'heat_template_version': '2018-08-31', 'resources': resources}


@pytest.fixture(scope='module')
def project(admin):
    project = topology.make_project(admin, unique('force-delete'))
    yield project
    admin.identity.delete_project(project)


@pytest.fixture(scope='module')
def conn(admin, project):
    return topology.scoped(admin, project)


def create_stacks(conn, names, **parts):
    stacks = [
        conn.orchestration.create_stack(
            name=name, template=template(name, **parts)
        )
        for name in names
    ]
    return [
        conn.orchestration.wait_for_status(
            s,
            'CREATE_COMPLETE',
            failures=['CREATE_FAILED'],
            interval=2,
            wait=300,
        )
        for s in stacks
    ]


def start_delete(conn, stack):
    """Delete the stack and wait until Heat is stuck on the slow one."""
    conn.orchestration.delete_stack(stack)
    return wait_for(
        lambda: (
            conn.orchestration.get_stack(stack.id).status
            == 'DELETE_IN_PROGRESS'
        ),
        timeout=60,
        what=f'{stack.name} deleting',
    )


def stack_exists(conn, stack_id):
    return conn.orchestration.find_stack(stack_id) is not None


@pytest.fixture
def hanging(admin, conn, cli, tmp_path, monkeypatch):
    """Makes a stack of a network (and a Swift container when Swift is up)
    whose delete hangs, in a directory of the test's own; what a test
    leaves of it goes afterwards."""
    monkeypatch.chdir(tmp_path)
    swift = admin.has_service('object-store')
    made = []

    def make(prefix):
        name = unique(prefix)
        [stack] = create_stacks(conn, [name], network=True, container=swift)
        net = conn.network.find_network(name + '-net', ignore_missing=False)
        made.append((name, stack, net))
        return name, stack, net, swift

    yield make
    for name, stack, net in made:
        if stack_exists(conn, stack.id):
            cli(
                'cluster',
                'force-delete',
                '--stack',
                stack.id,
                '--yes',
                '--grace',
                '0',
                '--manifest',
                str(tmp_path / 'cleanup.json'),
            )
        conn.network.delete_network(net, ignore_missing=True)
        if swift:
            account(admin, conn.current_project_id).delete_container(
                name + '-bucket', ignore_missing=True
            )


def test_stack_whose_delete_hangs_is_abandoned(
    admin, conn, cli, tmp_path, hanging
):
    name, stack, net, swift = hanging('hangs')
    manifest = tmp_path / 'left.json'
    dry = cli(
        'cluster',
        'force-delete',
        '--stack',
        name,
        '--dry-run',
        '-f',
        'json',
    )
    assert dry.code == 0, dry.stderr
    assert {r['Type'] for r in dry.json()} == (
        {'OS::Neutron::Net'} | ({'OS::Swift::Container'} if swift else set())
    )
    assert conn.orchestration.get_stack(stack.id).status == 'CREATE_COMPLETE'

    run = cli(
        'cluster',
        'force-delete',
        '--stack',
        name,
        '--yes',
        '--grace',
        '10',
        '--manifest',
        str(manifest),
        '-f',
        'json',
    )
    assert run.code == 0, run.stdout + run.stderr
    [row] = run.json()
    assert (row['Result'], row['Record']) == ('abandoned', 'gone')
    assert not stack_exists(conn, stack.id)

    data = json.loads(manifest.read_text())
    assert data['state'] == 'abandoned'
    assert data['stack']['project_id'] == conn.current_project_id
    listed = {(r['type'], r['physical_id']) for r in data['resources']}
    assert ('OS::Neutron::Net', net.id) in listed
    # the abandon came after the delete: Heat's answer has no resources,
    # the export taken before it has them all
    assert data['abandon']['resources'] == {}
    assert {'net', 'slow'} <= set(data['export']['resources'])
    # outside Heat, what the stack made is still there
    assert conn.network.get_network(net.id).id == net.id
    if swift:
        assert ('OS::Swift::Container', name + '-bucket') in listed
        # through the admin's reseller access: in CI, once the admin
        # had used Swift, a connect_as_project connection still
        # reached the admin's own account
        account(admin, conn.current_project_id).get_container_metadata(
            name + '-bucket'
        )


def test_delete_leftovers_deletes_what_the_stack_left(
    admin, conn, cli, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    swift = admin.has_service('object-store')
    name = unique('leftovers')
    [stack] = create_stacks(conn, [name], network=True, container=swift)
    try:
        run = cli(
            'cluster',
            'force-delete',
            '--stack',
            stack.id,
            '--yes',
            '--grace',
            '5',
            '--delete-leftovers',
            '-f',
            'json',
        )
        assert run.code == 0, run.stdout + run.stderr
        [row] = run.json()
        left = 1 + swift
        assert (
            row['Left Behind'],
            row['Leftovers Deleted'],
            row['Leftovers Not Deleted'],
        ) == (left, left, 0)
        assert not stack_exists(conn, stack.id)
        assert list(conn.network.networks(name=name + '-net')) == []
        data = json.loads((tmp_path / row['Manifest']).read_text())
        assert set(data['leftovers'].values()) == {'deleted'}
    finally:
        if stack_exists(conn, stack.id):
            cli(
                'cluster',
                'force-delete',
                '--stack',
                stack.id,
                '--yes',
                '--grace',
                '0',
                '--delete-leftovers',
            )


def test_delete_leftovers_resumes_from_the_manifest_alone(
    conn, cli, tmp_path, hanging
):
    """A run that stopped after the abandon: its manifest is all that is
    left of the stack, and it is enough."""
    name, stack, net, swift = hanging('resume')
    manifest = tmp_path / 'left.json'
    force = ('cluster', 'force-delete')
    resume = (*force, '--delete-leftovers', '--manifest', str(manifest))
    run = cli(
        *force,
        '--stack',
        stack.id,
        '--yes',
        '--grace',
        '5',
        '--manifest',
        str(manifest),
    )
    assert run.code == 0, run.stdout + run.stderr
    assert not stack_exists(conn, stack.id)
    assert conn.network.get_network(net.id).id == net.id

    dry = cli(*resume, '--dry-run', '-f', 'json')
    assert dry.code == 0, dry.stdout + dry.stderr
    actions = {(r['Type'], r['Physical ID']): r['Action'] for r in dry.json()}
    assert actions[('OS::Neutron::Net', net.id)] == 'delete'
    assert conn.network.get_network(net.id).id == net.id

    resumed = cli(*resume, '--yes', '-f', 'json')
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    [row] = resumed.json()
    left = 1 + swift
    assert (row['Cluster'], row['Result'], row['Manifest']) == (
        name,
        'abandoned',
        str(manifest),
    )
    assert (row['Leftovers Deleted'], row['Leftovers Not Deleted']) == (
        left,
        0,
    )
    assert list(conn.network.networks(name=name + '-net')) == []
    data = json.loads(manifest.read_text())
    assert data['state'] == 'abandoned'
    assert data['leftovers'] == {
        r['type'] + ' ' + r['physical_id']: 'deleted'
        for r in data['resources']
    }


def test_stuck_sweep_takes_the_old_and_leaves_the_young(
    conn, cli, project, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the sweep's manifests
    gap = 40
    old, young = create_stacks(
        conn, [unique('old'), unique('young')], network=False, container=False
    )

    def sweep():
        """Midway between the two ages, however long each call takes."""
        young_age = time.monotonic() - young_deleted
        return (
            '--stack',
            '--older-than',
            f'{int(young_age + gap / 2)}s',
            '--project',
            project.id,
            '-f',
            'json',
        )

    try:
        start_delete(conn, old)
        time.sleep(gap)
        start_delete(conn, young)
        young_deleted = time.monotonic()

        listed = cli('cluster', 'stuck', 'list', *sweep())
        assert listed.code == 0, listed.stderr
        assert [r['Name'] for r in listed.json()] == [old.name]
        assert listed.json()[0]['Status'] == 'DELETE_IN_PROGRESS'

        shown = cli('cluster', 'force-delete', '--stuck', *sweep())
        assert shown.code == 0, shown.stderr
        assert {r['Cluster'] for r in shown.json()} == {old.name}
        assert 'pass --yes' in shown.stderr
        assert stack_exists(conn, old.id)  # without --yes: a dry run

        done = cli(
            'cluster', 'force-delete', '--stuck', '--yes', '--wait', *sweep()
        )
        assert done.code == 0, done.stdout + done.stderr
        assert [r['Cluster'] for r in done.json()] == [old.name]
        assert not stack_exists(conn, old.id)
        assert conn.orchestration.get_stack(young.id).status == (
            'DELETE_IN_PROGRESS'
        )
        assert (
            tmp_path / f'stack-{old.name}-{old.id}-abandoned.json'
        ).exists()
    finally:
        for stack in (old, young):
            if stack_exists(conn, stack.id):
                cli(
                    'cluster',
                    'force-delete',
                    '--stack',
                    stack.id,
                    '--yes',
                    '--grace',
                    '0',
                )
