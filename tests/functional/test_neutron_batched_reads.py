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

"""What the real Neutron answers to the listings that stand for several
re-reads at once (api.batched): a list filtered by several ids holds
exactly those that a GET of each finds, as the GET shows them, for an
admin and for a member (another project's hidden from both ways); a list
filtered by several networks or remote groups holds what each one's own
list holds. The kinds' own reads go through it."""

from __future__ import annotations

import pytest

from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.network import common, core, remote_group
from tests.functional import topology
from tests.functional.members import Member
from tests.functional.topology import unique

pytestmark = pytest.mark.functional


def listed(conn, path, key, **filters):
    answer = conn.network.get(path, params=filters)
    assert answer.status_code == 200, answer.text
    return {item['id']: item for item in answer.json()[key]}


def shown(conn, path, key, id_):
    answer = conn.network.get(f'{path}/{id_}')
    return (
        answer.json()[key] if answer.status_code == 200 else answer.status_code
    )


@pytest.fixture(scope='module')
def two_projects(admin):
    a = topology.make_project(admin, unique('batch-a'))
    b = topology.make_project(admin, unique('batch-b'))
    made = {}
    for name, project in (('a', a), ('b', b)):
        conn = topology.scoped(admin, project)
        net = conn.network.create_network(name=f'{name}-net')
        conn.network.create_subnet(
            network_id=net.id, ip_version=4, cidr='10.7.0.0/24'
        )
        ports = [
            conn.network.create_port(network_id=net.id, name=f'{name}{i}')
            for i in range(2)
        ]
        group = conn.network.create_security_group(name=f'{name}-group')
        made[name] = {
            'project': project,
            'net': net,
            'ports': [p.id for p in ports],
            'group': group,
            'conn': conn,
        }
    gone = admin.network.create_port(network_id=made['a']['net'].id)
    admin.network.delete_port(gone)
    made['gone'] = gone.id
    # a rule of B, and one of A, that name A's group as remote group
    rules = [
        made[name]['conn'].network.create_security_group_rule(
            security_group_id=made[name]['group'].id,
            direction='ingress',
            remote_group_id=made['a']['group'].id,
        )
        for name in ('b', 'a')
    ]
    yield made
    # B's rule would keep A's group, and A, at the module's end
    for rule in rules:
        admin.network.delete_security_group_rule(rule, ignore_missing=True)


def test_a_list_by_ids_holds_what_each_get_shows(admin, two_projects):
    ids = [*two_projects['a']['ports'], *two_projects['b']['ports']]
    items = listed(admin, '/ports', 'ports', id=[*ids, two_projects['gone']])
    assert sorted(items) == sorted(ids)
    for id_ in ids:
        assert items[id_] == shown(admin, '/ports', 'port', id_)
    assert shown(admin, '/ports', 'port', two_projects['gone']) == 404


def test_a_members_list_by_ids_hides_what_its_get_cannot_find(
    admin, two_projects
):
    member = Member(admin, admin, two_projects['a']['project']).connection()
    mine, theirs = two_projects['a']['ports'][0], two_projects['b']['ports'][0]
    items = listed(member, '/ports', 'ports', id=[mine, theirs])
    assert sorted(items) == [mine]
    assert items[mine] == shown(member, '/ports', 'port', mine)
    assert shown(member, '/ports', 'port', theirs) == 404


def test_lists_by_several_networks_and_remote_groups_hold_each_ones(
    admin, two_projects
):
    nets = [two_projects[n]['net'].id for n in ('a', 'b')]
    for path, key in (('/ports', 'ports'), ('/subnets', 'subnets')):
        together = listed(admin, path, key, network_id=nets)
        alone = {}
        for net in nets:
            alone.update(listed(admin, path, key, network_id=net))
        assert sorted(together) == sorted(alone) and alone
    groups = [two_projects[n]['group'].id for n in ('a', 'b')]
    rules = ('/security-group-rules', 'security_group_rules')
    together = listed(admin, *rules, remote_group_id=groups)
    assert sorted(together) == sorted(
        listed(admin, *rules, remote_group_id=groups[0])
    )
    assert len(together) == 2


def test_the_kinds_reads_go_through_the_listing(admin, two_projects):
    a = two_projects['a']
    port = a['ports'][0]
    assert common.neutron_listed(admin, '/ports', 'ports', port)['id'] == port
    gone = two_projects['gone']
    assert common.neutron_listed(admin, '/ports', 'ports', gone) is None
    ref = ResourceRef(
        kind=core.Port.name, id=port, name='a0', project_id=a['project'].id
    )
    assert core.Port().fetched(admin, ref).project_id == a['project'].id
    group = ResourceRef(
        kind=core.SecurityGroup.name,
        id=a['group'].id,
        name='a-group',
        project_id=a['project'].id,
    )
    [(_rule, other)] = remote_group.foreign_rules_now(admin, group)
    assert other == two_projects['b']['project'].id
