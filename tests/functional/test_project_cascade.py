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

"""`openstack project delete --cascade` against the real minicloud."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import openstack
import pytest

from tests.functional import topology
from tests.functional.conftest import ADMIN_CLOUD, openstack_bin, run_openstack
from tests.functional.topology import unique

pytestmark = pytest.mark.functional


@pytest.fixture(scope='module')
def twins(admin):
    """Project A and its twin B (same names), B sharing a network with A,
    and an admin-owned public image."""
    b = topology.build(admin, unique('twin-b'))
    a_project = topology.make_project(admin, unique('twin-a'))
    shared = b.conn.network.create_network(name='shared-by-b')
    b.conn.network.create_subnet(
        network_id=shared.id, ip_version=4, cidr='10.20.0.0/24'
    )
    b.conn.network.create_rbac_policy(
        object_type='network',
        object_id=shared.id,
        action='access_as_shared',
        target_project_id=a_project.id,
    )
    a = topology.build(
        admin, a_project.name, project=a_project, shared_network_from=shared.id
    )
    public_image = topology.public_image(admin)
    return {
        'a': a,
        'b': b,
        'shared': shared.id,
        'public_image': public_image.id,
    }


def test_dry_run_lists_exactly_what_the_run_deletes(admin, twins, cli):
    a, b = twins['a'], twins['b']
    a_id, b_id = a.project.id, b.project.id
    owned_a = topology.owned(admin, a_id)
    owned_b = topology.owned(admin, b_id)
    assert {kind for kind, _ in owned_a} >= {
        'compute.server',
        'block_storage.volume',
        'block_storage.snapshot',
        'block_storage.backup',
        'network.floating_ip',
        'network.router',
        'network.port',
        'network.subnet',
        'network.network',
        'network.security_group',
        'image.image',
    }, owned_a

    dry = cli(
        'project', 'delete', '--cascade', '--dry-run', a_id, '-f', 'json'
    )
    assert dry.code == 0, dry.stderr
    planned = {
        (r['Kind'], r['ID'])
        for r in dry.json()
        if r['Action'] == 'delete'
        and r['Kind']
        not in ('identity.project', 'identity.application_credential')
    }
    assert planned == owned_a
    assert admin.identity.get_project(a_id).is_enabled  # dry run: untouched

    run = cli('project', 'delete', '--cascade', '--yes', a_id)
    assert run.code == 0, run.stdout + run.stderr
    assert topology.owned(admin, a_id) == set()
    with pytest.raises(openstack.exceptions.NotFoundException):
        admin.identity.get_project(a_id)
    # the twin, the network it shares and the public image are untouched
    assert topology.owned(admin, b_id) == owned_b
    assert admin.network.get_network(twins['shared'])
    assert admin.image.get_image(twins['public_image'])


@pytest.mark.parametrize('signum', [signal.SIGKILL, signal.SIGINT])
def test_killed_run_finishes_when_run_again(admin, cli, signum):
    built = topology.build(admin, unique('killed'))
    pid = built.project.id
    proc = subprocess.Popen(
        [
            openstack_bin(),
            '--os-cloud',
            ADMIN_CLOUD,
            'project',
            'delete',
            '--cascade',
            '--yes',
            '--parallel',
            '2',
            pid,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    # Kill it on its first finished delete, read from its own progress
    # lines: polling the cloud from here is too slow to catch it mid-way.
    watchdog = threading.Timer(300, proc.kill)
    watchdog.start()
    progress = []
    try:
        for line in proc.stderr:
            progress.append(line)
            if '] done: delete ' in line:
                break
    finally:
        os.kill(proc.pid, signum)
        watchdog.cancel()
        _, rest = proc.communicate()
    assert any('] done: delete ' in line for line in progress), (
        'no delete finished before the kill:\n' + ''.join(progress)
    )
    if signum == signal.SIGINT:
        # Ctrl-C: what was in flight finishes, then it says what remains
        assert proc.returncode == 130, rest
        assert 'Interrupted (SIGINT)' in rest
        assert 'run the same command again' in rest
    assert topology.owned(admin, pid), 'killed too late to prove anything'

    again = cli('project', 'delete', '--cascade', '--yes', pid)
    assert again.code == 0, again.stdout + again.stderr
    assert topology.owned(admin, pid) == set()
    with pytest.raises(openstack.exceptions.NotFoundException):
        admin.identity.get_project(pid)


def test_unknown_project(cli):
    result = cli('project', 'delete', '--cascade', '--yes', unique('nope'))
    assert result.code != 0
    assert 'No project with a name or ID' in result.stderr


def test_ambiguous_name_across_domains(admin, cli):
    name = unique('twin-name')
    other = admin.identity.create_domain(name=unique('dom'))
    first = admin.identity.create_project(name=name, domain_id='default')
    second = admin.identity.create_project(name=name, domain_id=other.id)
    try:
        result = cli('project', 'delete', '--cascade', '--dry-run', name)
        assert result.code != 0
        assert 'More than one project is named' in result.stderr
        assert first.id in result.stderr and second.id in result.stderr
        assert '--domain' in result.stderr
        narrowed = cli(
            'project',
            'delete',
            '--cascade',
            '--dry-run',
            name,
            '--domain',
            other.name,
            '-f',
            'json',
        )
        assert narrowed.code == 0, narrowed.stderr
        assert {r['ID'] for r in narrowed.json()} == {second.id}
    finally:
        for project in (first, second):
            admin.identity.delete_project(project)
        admin.identity.update_domain(other, is_enabled=False)
        admin.identity.delete_domain(other)


def test_non_admin_user_is_refused_and_nothing_changes(admin, cli):
    project = topology.make_project(admin, unique('guarded'))
    conn = topology.scoped(admin, project)
    net = conn.network.create_network(name='keep-me')
    try:
        started = time.monotonic()
        result = run_openstack(
            'project',
            'delete',
            '--cascade',
            '--yes',
            project.id,
            cloud='minicloud-demo',
        )
        assert result.code != 0
        assert '403' in result.stderr or 'admin' in result.stderr
        assert time.monotonic() - started < 120
        assert admin.network.get_network(net.id)
        assert admin.identity.get_project(project.id).is_enabled
    finally:
        admin.network.delete_network(net.id)
        admin.identity.delete_project(project)
