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

"""Kinds added for what the cascade missed, on the real minicloud: a
Neutron address group (and the rule naming it), and the project's access
to a private flavor and to a private volume type. Each goes with the
project; the flavor, the type and another project's access stay.

Trove, Aodh, Mistral, Ironic, FWaaS, metering, network logs and BGP VPNs
are not run by the minicloud: their kinds are proved on the fakes only
(tests/unit). Each test deletes what it made in ``finally``, also when it
fails; the projects go with the module's clean-up otherwise.
"""

from __future__ import annotations

import contextlib

import openstack
import pytest

from tests.functional import topology
from tests.functional.conftest import needs
from tests.functional.topology import unique

pytestmark = pytest.mark.functional


@pytest.fixture
def projects(admin, cli):
    """Project A, to cascade, and B, which keeps what it was given."""
    a = topology.make_project(admin, unique('more-a'))
    b = topology.make_project(admin, unique('more-b'))
    yield a, b
    for project in (a, b):
        if admin.identity.find_project(project.id) is not None:
            result = cli('project', 'delete', '--cascade', '--yes', project.id)
            assert result.code == 0, result.stdout + result.stderr


def cascade(cli, project_id):
    """The dry run's kinds, then the run, which must succeed."""
    dry = cli(
        'project', 'delete', '--cascade', '--dry-run', project_id, '-f', 'json'
    )
    assert dry.code == 0, dry.stdout + dry.stderr
    run = cli('project', 'delete', '--cascade', '--yes', project_id)
    assert run.code == 0, run.stdout + run.stderr
    return {(r['Kind'], r['ID']) for r in dry.json()}


def test_an_address_group_goes_with_the_rule_naming_it(admin, projects, cli):
    needs(
        admin.network.find_extension('address-group'),
        'neutron has no address-group extension',
    )
    a, b = projects
    net_a = topology.scoped(admin, a).network
    group = net_a.create_address_group(name='ag', addresses=['10.9.0.0/24'])
    web = net_a.create_security_group(name='web')
    net_a.create_security_group_rule(
        security_group_id=web.id,
        direction='ingress',
        ethertype='IPv4',
        remote_address_group_id=group.id,
    )
    theirs = topology.scoped(admin, b).network.create_address_group(
        name='theirs', addresses=['10.8.0.0/24']
    )
    try:
        planned = cascade(cli, a.id)
        assert ('network.address_group', group.id) in planned
        assert admin.network.find_address_group(group.id) is None
        assert admin.network.find_security_group(web.id) is None
        assert admin.identity.find_project(a.id) is None
        assert admin.network.get_address_group(theirs.id).project_id == b.id
    finally:
        with contextlib.suppress(openstack.exceptions.SDKException):
            admin.network.delete_address_group(theirs.id)


def private_flavor(admin):
    flavor = admin.compute.create_flavor(
        name=unique('private'), ram=64, vcpus=1, disk=0, is_public=False
    )
    return flavor.id, {
        'grant': lambda p: admin.compute.flavor_add_tenant_access(
            flavor.id, p
        ),
        'members': lambda: [
            x['tenant_id'] for x in admin.compute.get_flavor_access(flavor.id)
        ],
        'is_public': lambda: admin.compute.get_flavor(flavor.id).is_public,
        'delete': lambda: admin.compute.delete_flavor(flavor.id),
    }


def private_volume_type(admin):
    vtype = admin.block_storage.create_type(
        name=unique('private'), is_public=False
    )
    storage = admin.block_storage
    return vtype.id, {
        'grant': lambda p: storage.add_type_access(vtype.id, p),
        'members': lambda: [
            x['project_id'] for x in storage.get_type_access(vtype.id)
        ],
        'is_public': lambda: storage.get_type(vtype.id).is_public,
        'delete': lambda: storage.delete_type(vtype.id),
    }


@pytest.mark.parametrize(
    ('kind', 'make'),
    [
        ('compute.flavor_access', private_flavor),
        ('block_storage.type_access', private_volume_type),
    ],
    ids=['flavor', 'volume-type'],
)
def test_access_to_a_private_flavor_or_type_goes_it_stays(
    admin, projects, cli, kind, make
):
    a, b = projects
    made, calls = make(admin)
    try:
        for project in (a, b):
            calls['grant'](project.id)
        planned = cascade(cli, a.id)
        assert (kind, f'{made}/{a.id}') in planned
        assert calls['members']() == [b.id]
        assert calls['is_public']() is False  # it is still there
    finally:
        with contextlib.suppress(openstack.exceptions.SDKException):
            calls['delete']()
