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

"""`openstack project delete --cascade` on the minicloud, with what Heat,
Octavia and Swift hold too, next to a twin that must stay untouched."""

from __future__ import annotations

import openstack
import pytest

from osc_cascade.kinds.object_store import account
from tests.functional import topology
from tests.functional.topology import unique

pytestmark = pytest.mark.functional


def services_of(admin, project_id):
    """The project's stacks, load balancers and containers, as admin with
    the owner re-checked, as {(kind, id)}."""
    found = {
        ('orchestration.stack', s['id'])
        for s in admin.orchestration.get(
            '/stacks', params={'tenant': project_id}
        ).json()['stacks']
        if s.get('project') == project_id
    }
    found |= {
        ('load_balancer.load_balancer', lb.id)
        for lb in admin.load_balancer.load_balancers(project_id=project_id)
        if lb.project_id == project_id
    }
    found |= {
        ('object_store.container', f'{project_id}/{c.name}')
        for c in account(admin, project_id).containers()
    }
    return found


@pytest.fixture(scope='module')
def twins(admin):
    """Projects A and B, each of topology.build() and build_services()."""
    b = topology.build(admin, unique('svc-b'))
    topology.build_services(admin, b)
    a = topology.build(admin, unique('svc-a'))
    topology.build_services(admin, a)
    return a, b


def test_the_cascade_takes_every_service_and_nothing_of_the_twin(
    admin, twins, cli
):
    a, b = twins
    a_id, b_id = a.project.id, b.project.id
    mine = topology.owned(admin, a_id) | services_of(admin, a_id)
    twin = topology.owned(admin, b_id) | services_of(admin, b_id)
    assert {
        ('orchestration.stack', a.ids['stack']),
        ('load_balancer.load_balancer', a.ids['lb']),
        ('network.network', a.ids['stack_net']),
        ('network.floating_ip', a.ids['vip_fip']),
        ('object_store.container', f'{a_id}/data'),
        ('object_store.container', f'{a_id}/docs'),
        ('object_store.container', f'{a_id}/{a.ids["stack_cont"]}'),
    } <= mine

    dry = cli(
        'project', 'delete', '--cascade', '--dry-run', a_id, '-f', 'json'
    )
    assert dry.code == 0, dry.stderr
    rows = dry.json()
    planned = {(r['Kind'], r['ID']) for r in rows if r['Action'] == 'delete'}
    assert mine <= planned
    stack_row = next(r for r in rows if r['ID'] == a.ids['stack'])
    net_row = next(r for r in rows if r['ID'] == a.ids['stack_net'])
    assert net_row['Stage'] > stack_row['Stage']  # it went with the stack

    run = cli('project', 'delete', '--cascade', '--yes', a_id)

    assert run.code == 0, run.stdout + run.stderr
    assert topology.owned(admin, a_id) == set()
    assert services_of(admin, a_id) == set()
    with pytest.raises(openstack.exceptions.NotFoundException):
        admin.identity.get_project(a_id)
    assert topology.owned(admin, b_id) | services_of(admin, b_id) == twin
    assert (
        admin.load_balancer.get_load_balancer(b.ids['lb']).provisioning_status
        == 'ACTIVE'
    )
    assert len(list(account(admin, b_id).objects('data'))) == 300
