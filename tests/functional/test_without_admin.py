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

"""The cascade without cloud admin on the minicloud (issue #20).

The minicloud has two domains, ``managed`` and ``other``, each with a
manager (Keystone's manager persona: the role manager on the domain, no
admin anywhere; clouds ``minicloud-manager`` and
``minicloud-other-manager``). The domain manager cascades a project of its
domain that a member filled with the issue's topology (servers, volumes,
snapshot, backups, a network routed to the shared ``public``): everything
is deleted, the project too, ``public`` is untouched and the role the
manager gave itself is gone. A member empties its own project with
``--keep-project``, which stays. The manager of the other domain is refused
in one line, and nothing changes.

The domain manager's run is printed (``pytest -s``): its plan, notes and
summary.
"""

from __future__ import annotations

import openstack
import pytest

from tests.functional import topology
from tests.functional.conftest import run_openstack
from tests.functional.members import Member, domain_project
from tests.functional.topology import build

pytestmark = pytest.mark.functional

MANAGER_CLOUD = 'minicloud-manager'
OTHER_MANAGER_CLOUD = 'minicloud-other-manager'
DOMAIN = 'managed'


@pytest.fixture(scope='module')
def manager(admin):
    return openstack.connect(cloud=MANAGER_CLOUD)


@pytest.fixture(scope='module')
def domain(admin):
    found = admin.identity.find_domain(DOMAIN)
    assert found is not None, 'the minicloud has no domain managed'
    return found


#: neutron-fwaas's default firewall objects, as the kinds name them
FWAAS_DEFAULTS = [
    ('network.firewall_group', 'default'),
    ('network.firewall_policy', 'default egress'),
    ('network.firewall_policy', 'default ingress'),
    ('network.firewall_rule', 'default egress ipv4'),
    ('network.firewall_rule', 'default egress ipv6'),
    ('network.firewall_rule', 'default ingress ipv4'),
    ('network.firewall_rule', 'default ingress ipv6'),
]


def defaults_of(admin, project_id):
    """The project's default security group and, where FWaaS runs, its
    default firewall group, policies and rules: Neutron lets admins alone
    delete them (the plan keeps them, report-only), as ``(kind, id)``."""
    lists = [('network.security_group', admin.network.security_groups())]
    if admin.network.find_extension('fwaas_v2'):
        lists += [
            ('network.firewall_group', admin.network.firewall_groups()),
            ('network.firewall_policy', admin.network.firewall_policies()),
            ('network.firewall_rule', admin.network.firewall_rules()),
        ]
    names = {('network.security_group', 'default'), *FWAAS_DEFAULTS}
    return {
        (kind, o.id)
        for kind, listed in lists  # no filter: see owned()
        for o in listed
        if o.project_id == project_id and (kind, o.name) in names
    }


def left_of(admin, project_id):
    """What the project still owns, by an admin's lists, but its default
    groups (``defaults_of``)."""
    return topology.owned(admin, project_id) - defaults_of(admin, project_id)


def grants_of(admin, user_id, project_id):
    return [
        a
        for a in admin.identity.role_assignments(user_id=user_id)
        if (a.scope or {}).get('project', {}).get('id') == project_id
    ]


def test_a_domain_manager_cascades_a_project_of_its_domain(
    admin, manager, domain
):
    project = domain_project(manager, domain, 'dm-cascade')
    member = Member(admin, manager, project)
    built = build(member.connection(), project.name, project=project)
    public = topology.public_network(admin)
    public_subnets = sorted(
        s.id for s in admin.network.subnets(network_id=public.id)
    )
    assert left_of(admin, project.id), 'the topology was not built'

    dry = run_openstack(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        project.id,
        cloud=MANAGER_CLOUD,
    )
    # the dry run gives the manager a role for its listing, and takes it
    # back at the end
    assert not grants_of(admin, manager.current_user_id, project.id)

    result = run_openstack(
        'project',
        'delete',
        '--cascade',
        '--yes',
        project.id,
        cloud=MANAGER_CLOUD,
    )
    print(
        '\n$ openstack --os-cloud minicloud-manager project delete '
        f'--cascade --dry-run {project.id}'
    )
    print(dry.stdout + dry.stderr)
    print(
        '$ openstack --os-cloud minicloud-manager project delete '
        f'--cascade --yes {project.id}'
    )
    print(result.stdout + result.stderr)
    assert result.code == 0, result.stdout + result.stderr
    assert 'without admin' in result.stderr

    assert admin.identity.find_project(project.id) is None
    assert left_of(admin, project.id) == set()
    assert admin.network.get_network(public.id).id == public.id
    assert (
        sorted(s.id for s in admin.network.subnets(network_id=public.id))
        == public_subnets
    )
    assert not grants_of(admin, manager.current_user_id, project.id)
    assert built.ids['vm'] not in {
        s.id for s in admin.compute.servers(all_projects=True)
    }

    # what the plan kept (the default groups Neutron lets admins alone
    # delete) an admin's orphan search finds, and purges
    orphans = run_openstack(
        'orphan', 'list', '--project', project.id, '-f', 'json', '--exit-code'
    )
    assert orphans.code == 3, orphans.stdout + orphans.stderr
    # RegionOne's alone: where the project had nothing (RegionTwo) the
    # cascade made no default group (it reads Neutron's quota details,
    # which count groups without making one, before listing them)
    found = sorted((o['Region'], o['Kind'], o['Name']) for o in orphans.json())
    assert [f for f in found if f[1:] not in FWAAS_DEFAULTS] == [
        ('RegionOne', 'network.security_group', 'default')
    ]
    # neutron-fwaas makes the default firewall group of the token's
    # project at any list of firewall objects, or count of its quota: in
    # every region where it runs, the cascade's own listing made one
    if admin.network.find_extension('fwaas_v2'):
        made = [f[1:] for f in found if f[1:] in FWAAS_DEFAULTS]
        assert made[: len(FWAAS_DEFAULTS)] == FWAAS_DEFAULTS
    purged = run_openstack('orphan', 'purge', '--project', project.id, '--yes')
    assert purged.code == 0, purged.stdout + purged.stderr
    assert topology.owned(admin, project.id) == set()


def test_a_member_empties_its_own_project_and_keeps_it(admin, manager, domain):
    project = domain_project(manager, domain, 'keep')
    member = Member(admin, manager, project)
    conn = member.connection()
    net = conn.network.create_network(name='keep-net')
    conn.network.create_subnet(
        network_id=net.id, ip_version=4, cidr='10.20.0.0/24'
    )
    conn.network.create_security_group(name='keep-sg')
    volume = conn.block_storage.create_volume(name='keep-vol', size=1)
    topology.wait_status(
        lambda: conn.block_storage.get_volume(volume.id),
        'available',
        'volume',
    )

    refused = member.run('project', 'delete', '--cascade', '--yes', project.id)
    assert refused.returncode == 1
    assert refused.stderr.count('\n') == 1, refused.stderr
    assert '--keep-project' in refused.stderr

    kept = member.run(
        'project',
        'delete',
        '--cascade',
        '--keep-project',
        '--yes',
        project.id,
    )
    assert kept.returncode == 0, kept.stdout + kept.stderr
    found = admin.identity.get_project(project.id)
    assert found.is_enabled
    assert left_of(admin, project.id) == set()
    # its users keep their roles: the project goes on
    assert grants_of(admin, member.user.id, project.id)


def test_the_manager_of_another_domain_is_refused_in_one_line(
    admin, manager, domain
):
    project = domain_project(manager, domain, 'not-yours')
    result = run_openstack(
        'project',
        'delete',
        '--cascade',
        '--yes',
        project.id,
        cloud=OTHER_MANAGER_CLOUD,
    )
    assert result.code == 1
    assert result.stderr.count('\n') == 1, result.stderr
    assert 'is not in domain' in result.stderr
    assert 'openstack role add' in result.stderr
    assert admin.identity.get_project(project.id).is_enabled
