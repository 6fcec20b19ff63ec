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

"""`openstack domain delete --cascade` and `openstack user delete
--cascade` on the minicloud: a customer leaves, and nothing of it stays
in either region (RegionTwo has no Nova: keypairs live in RegionOne
alone there)."""

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
    regions = {r.id for r in admin.identity.regions()}
    needs('RegionTwo' in regions, f'NO REGIONTWO: {sorted(regions)}')
    return {
        region: openstack.connect(
            cloud=ADMIN_CLOUD, region_name=region, connect_retries=3
        )
        for region in REGIONS
    }


def keypair_for(cli, user_id, name):
    result = cli(
        '--os-compute-api-version', '2.10',
        'keypair', 'create', '--user', user_id, name, '-f', 'json',
    )  # fmt: skip
    assert result.code == 0, result.stderr


def keypairs_of(admin, user_id):
    return [k.name for k in admin.compute.keypairs(user_id=user_id)]


def customer(admin, region_admins, cli, name, cidr):
    """A domain with three projects (one a child), a network in each
    project in RegionOne and one in RegionTwo, two users with keypairs, a
    group and a role on the domain."""
    domain = admin.identity.create_domain(name=name)
    top = topology.make_project(admin, f'{name}-top', domain.id)
    child = admin.identity.create_project(
        name=f'{name}-child', domain_id=domain.id, parent_id=top.id
    )
    topology.CREATED.append(child.id)
    role = admin.identity.find_role('admin')
    me = admin.identity.get_user(admin.current_user_id)
    admin.identity.assign_project_role_to_user(child, me, role)
    other = topology.make_project(admin, f'{name}-other', domain.id)
    projects = [top, child, other]
    for project in projects:
        conn = region_admins['RegionOne'].connect_as_project(project)
        conn.network.create_network(name=f'{project.name}-net')
    far = region_admins['RegionTwo'].connect_as_project(other)
    net = far.network.create_network(name='far-net')
    far.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
    users = [
        admin.identity.create_user(name=f'{name}-u{n}', domain_id=domain.id)
        for n in (1, 2)
    ]
    member = admin.identity.find_role('member')
    for user in users:
        admin.identity.assign_project_role_to_user(top, user, member)
        keypair_for(cli, user.id, f'{name}-key')
    group = admin.identity.create_group(name=f'{name}-g', domain_id=domain.id)
    admin.identity.assign_domain_role_to_user(domain, users[0], member)
    return {
        'domain': domain,
        'projects': projects,
        'users': users,
        'group': group,
    }


def held(region_admins, project_ids):
    found = []
    for region, admin in region_admins.items():
        for net in admin.network.networks():
            if net.project_id in project_ids:
                found.append((region, 'network', net.id))
    return found


def gone(admin, region_admins, made):
    """What of ``made`` still exists, by admin listings."""
    left = []
    ids = {p.id for p in made['projects']}
    if admin.identity.find_domain(made['domain'].id) is not None:
        left.append(('domain', made['domain'].id))
    left += [('project', i) for i in ids if admin.identity.find_project(i)]
    left += [
        ('user', u.id)
        for u in made['users']
        if admin.identity.find_user(u.id) is not None
    ]
    left += [
        ('keypair', u.id, k)
        for u in made['users']
        for k in keypairs_of(admin, u.id)
    ]
    if admin.identity.find_group(made['group'].id) is not None:
        left.append(('group', made['group'].id))
    return left + held(region_admins, ids)


@pytest.fixture
def two_customers(admin, region_admins, cli):
    acme = customer(admin, region_admins, cli, unique('acme'), '10.61.0.0/24')
    twin = customer(admin, region_admins, cli, unique('twin'), '10.62.0.0/24')
    yield acme, twin
    for made in (twin, acme):  # whatever a failed test left
        if admin.identity.find_domain(made['domain'].id) is not None:
            cli('domain', 'delete', '--cascade', '--yes', made['domain'].id)


def test_a_customer_leaves_and_the_twin_stays(
    admin, region_admins, cli, two_customers
):
    acme, twin = two_customers
    name = acme['domain'].name
    dry = cli('domain', 'delete', '--cascade', '--dry-run', name, '-f', 'json')
    assert dry.code == 0, dry.stderr
    planned = {(r['Kind'], r['Name']) for r in dry.json()}
    assert ('identity.domain', name) in planned
    assert ('identity.project', f'{name}-child') in planned
    assert ('identity.user', f'{name}-u1') in planned
    assert ('user.keypair', f'{name}-key') in planned
    assert ('identity.group', f'{name}-g') in planned
    assert ('network.network', 'far-net') in planned
    assert gone(admin, region_admins, acme) != []  # nothing changed

    # --settle: the frozen quotas are released with the projects (without
    # it their rows stay at 0 for a later purge, as the project cascade's)
    result = cli(
        'domain', 'delete', '--cascade', '--yes', '--settle', '5s', name
    )
    assert result.code == 0, result.stdout + result.stderr
    assert gone(admin, region_admins, acme) == []
    orphans = cli('orphan', 'list', '-f', 'json')
    assert orphans.code == 0, orphans.stderr
    ids = {p.id for p in acme['projects']}
    assert [o for o in orphans.json() if o['Project ID'] in ids] == []
    # the twin is whole, and enabled
    # its domain, 3 projects, 2 users, 2 keypairs, a group, 4 networks
    assert len(gone(admin, region_admins, twin)) == 13
    assert admin.identity.get_domain(twin['domain'].id).is_enabled


def test_refusals_are_one_line(admin, cli):
    result = cli('domain', 'delete', '--cascade', '--yes', 'Default')
    assert result.code == 1
    [line] = result.stderr.strip().splitlines()
    assert 'the default domain' in line
    locked = admin.identity.create_domain(
        name=unique('locked'), options={'immutable': True}
    )
    try:
        result = cli('domain', 'delete', '--cascade', '--yes', locked.id)
        assert result.code == 1
        [line] = result.stderr.strip().splitlines()
        assert 'protected (marked immutable)' in line
        assert admin.identity.get_domain(locked.id).is_enabled
    finally:
        # Keystone takes the option off alone first, then the rest
        admin.identity.update_domain(locked, options={'immutable': False})
        admin.identity.update_domain(locked, is_enabled=False)
        admin.identity.delete_domain(locked)
    result = cli('user', 'delete', '--cascade', '--yes', 'admin')
    assert result.code == 1
    [line] = result.stderr.strip().splitlines()
    assert 'authenticated as' in line


def test_user_delete_cascade_leaves_no_keypair(admin, cli):
    user = admin.identity.create_user(name=unique('leaver'))
    try:
        keypair_for(cli, user.id, 'laptop')
        keypair_for(cli, user.id, 'desk')
        assert sorted(keypairs_of(admin, user.id)) == ['desk', 'laptop']
        result = cli('user', 'delete', '--cascade', '--yes', user.id)
        assert result.code == 0, result.stdout + result.stderr
        assert admin.identity.find_user(user.id) is None
        assert keypairs_of(admin, user.id) == []
    finally:
        if admin.identity.find_user(user.id) is not None:
            admin.identity.delete_user(user)


def test_a_run_killed_midway_is_finished_by_running_it_again(
    admin, region_admins, cli
):
    import signal
    import subprocess
    import time

    from tests.functional.conftest import openstack_bin

    made = customer(admin, region_admins, cli, unique('kill'), '10.63.0.0/24')
    domain_id = made['domain'].id
    proc = subprocess.Popen(
        [
            openstack_bin(),
            '--os-cloud', ADMIN_CLOUD,
            'domain', 'delete', '--cascade', '--yes', domain_id,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        # stage 1 has begun: the domain is disabled, its projects drain
        topology.wait_for(
            lambda: not admin.identity.get_domain(domain_id).is_enabled,
            timeout=120,
            interval=0.2,
            what='the domain disabled',
        )
        assert proc.poll() is None, 'the run ended before it was killed'
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        time.sleep(1)
        assert gone(admin, region_admins, made) != []  # it was midway
        result = cli('domain', 'delete', '--cascade', '--yes', domain_id)
        assert result.code == 0, result.stdout + result.stderr
        assert gone(admin, region_admins, made) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        if admin.identity.find_domain(domain_id) is not None:
            cli('domain', 'delete', '--cascade', '--yes', domain_id)
