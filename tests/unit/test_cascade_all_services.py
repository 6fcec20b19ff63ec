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

"""`openstack project delete --cascade` on a project that owns something of
every kind, in every service, next to its twin."""

import datetime
import json

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.kinds import baremetal, key_manager, quota
from osc_cascade.workflows import late_release
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.kinds import kinds_of
from tests.unit.scenarios import all_services_project, share_image_with

#: every kind but Barbican's, which the cascade cannot reach (a note says),
#: Ironic's owned node, which would keep the project (its own test), and
#: the quotas, which are no steps (frozen by the drain, reset at the end)
REACHABLE = sorted(
    set(kinds_mod.build())
    - {k.name for k in kinds_of(key_manager)}
    - {baremetal.Node.name}
    - {k.name for k in kinds_of(quota)}
)


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def twins(cloud, external):
    a = all_services_project(cloud, 'A', external)
    b = all_services_project(cloud, 'B', external)
    share_image_with(cloud, b['project'], a['project'])
    # B's zone shared with A, and A's record set in it (dns.recordset)
    zone = cloud.get('zones', b['zone'])
    cloud.zone_share(zone, a['project'])
    cloud.recordset(zone, a['project'], 'a.b.example.')
    return a, b


def cascade(osc, *args):
    # --delete-shared: an admin is shown no member of A's private Mistral
    # workflow, which is kept without it (kinds.workflow.MEMBERS_UNSEEN)
    return osc('project', 'delete', '--cascade', '--delete-shared', *args)


def test_the_dry_run_shows_every_kind_and_changes_nothing(cloud, twins, osc):
    a, _b = twins
    result = cascade(osc, '--dry-run', 'A', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert sorted({r['Kind'] for r in rows}) == REACHABLE
    assert {r['Project'] for r in rows} == {a['project']}
    assert 'not listed: key_manager.container' in result.stderr
    assert cloud.changes == []


def test_the_dot_graph_shows_every_kind(cloud, twins, osc):
    result = cascade(osc, '--dry-run', 'A', '-f', 'dot')
    assert result.code == 0, result.stderr
    assert result.stdout.startswith('digraph cascade {')
    for kind in REACHABLE:
        assert f':{kind}:' in result.stdout, kind
    assert cloud.changes == []


def test_the_cascade_leaves_nothing_of_a_and_touches_nothing_of_b(
    cloud, twins, osc
):
    a, b = twins
    before_b = cloud.owned_by(b['project'])
    b_quotas = {
        q['id']
        for q in cloud.all('quota_sets')
        if q['project'] == b['project']
    }

    result = cascade(osc, '--yes', 'A')

    assert result.code == 0, result.stdout + result.stderr
    assert cloud.owned_by(a['project']) == []
    assert not cloud.exists('projects', a['project'])
    # its quotas stay frozen past the delete (no --settle): every count 0
    assert {
        q['service']: {k for k, v in q['values'].items() if v}
        for q in cloud.all('quota_sets')
        if q['project'] == a['project'] and q['values']
    } == {
        s: set()
        for s in (
            'nova',
            'neutron',
            'cinder',
            'manila',
            'octavia',
            'barbican',
            'magnum',
        )
    }
    # the purge it prints, after the window: no quota of its own is left
    # (Octavia keeps its row of defaults)
    cloud.now += datetime.timedelta(seconds=late_release.WINDOW)
    purged = osc('orphan', 'purge', '--project', a['project'], '--yes')
    assert purged.code == 0, purged.stderr
    assert 'its frozen quotas are released' in purged.stderr
    assert not [
        q
        for q in cloud.all('quota_sets')
        if q['project'] == a['project'] and q['values']
    ]
    assert cloud.owned_by(b['project']) == before_b
    assert {
        q['id']
        for q in cloud.all('quota_sets')
        if q['project'] == b['project']
    } == b_quotas
    # the keypair is the user's: reported, kept
    assert cloud.exists('keypairs', f'{a["user"]}/laptop')
    # A's membership of B's image went, the image stayed
    golden = [i for i in cloud.all('images') if i['name'] == 'golden']
    assert golden and golden[0]['members'] == []
    # orders the fake cannot enforce by itself
    order = cloud.index_of_delete
    assert cloud.changes.index(
        ('PATCH', f'/v2/reverse/floatingips/RegionOne:{a["ptr_fip"]}')
    ) < (cloud.changes.index(('DELETE', f'/v2.0/floatingips/{a["ptr_fip"]}')))
    assert order('/stacks/app', a['stack']) < order(
        '/networks', a['stack_net']
    )
    assert order('/loadbalancers', a['lb']) < order('/subnets', a['subnet'])
    assert order('/servers', a['server']) < order(
        '/os-quota-sets', a['project']
    )
    assert order('/v2.0/networks', a['network']) < order(
        '/v2.0/quotas', a['project']
    )


def test_a_stack_that_cannot_be_deleted_fails_the_cascade_with_the_way_out(
    cloud, twins, osc
):
    a, _b = twins
    cloud.get('stacks', a['stack'])['on_delete'] = 'fail'

    result = cascade(osc, '--yes', 'A')

    assert result.code != 0
    assert 'openstack cluster force-delete --stack' in result.stderr
    assert cloud.exists('stacks', a['stack'])
    assert cloud.exists('projects', a['project'])
    # what it made was deleted directly once it had failed
    assert not cloud.exists('networks', a['stack_net'])
    assert not cloud.exists('containers', f'AUTH_{a["project"]}/stack-cont')


def test_the_plan_says_what_a_stacks_delete_removes(cloud, twins, osc):
    a, _b = twins
    made = [
        ('OS::Heat::ResourceGroup', a['nested_stack']),
        ('OS::Neutron::Net', a['stack_net']),
        ('OS::Swift::Container', 'stack-cont'),
    ]
    table = cascade(osc, '--dry-run', 'A', '-c', 'Kind', '-c', 'Name')
    assert table.code == 0, table.stderr
    cells = [
        [c.strip() for c in line.split('|')[1:-1]]
        for line in table.stdout.splitlines()
        if line.startswith('| orchestration.stack')
    ]
    assert [
        'orchestration.stack',
        'app (1 OS::Heat::ResourceGroup, 1 OS::Neutron::Net, '
        '1 OS::Swift::Container)',
    ] in cells

    rows = json.loads(cascade(osc, '--dry-run', 'A', '-f', 'json').stdout)
    [stack] = [r for r in rows if r['ID'] == a['stack']]
    assert stack['Name']['name'] == 'app'
    assert [(r['type'], r['id']) for r in stack['Name']['removes']] == made

    dot = cascade(osc, '--dry-run', 'A', '-f', 'dot').stdout
    stack_step = step_id('delete', 'orchestration.stack', a['stack'])
    # in its region's box
    [node] = [
        line
        for line in dot.splitlines()
        if line.startswith(f'    "{stack_step}" [')
    ]
    for type_, id_ in made:
        assert f'\\n{type_} {id_}' in node
    assert cloud.changes == []
