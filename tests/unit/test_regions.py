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

"""Every region: a cloud whose catalog has RegionOne (every service) and
RegionTwo (its own Neutron; Glance shared with RegionOne, same URL)."""

import json

import pytest

from osc_cascade import kinds
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.workflows.cascade import CascadeOptions, ProjectCascade
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud, ServicesCloud


@pytest.fixture
def two():
    """(RegionOne's cloud, RegionTwo's cloud), in one catalog."""
    with FakeCloud() as one:
        yield one, one.add_region('RegionTwo', ['network'], shared=['image'])


def cascade(one, **options):
    return ProjectCascade(
        one.connection(), CascadeOptions(**options), clock=FakeClock()
    )


def own_network(cloud, project_id, name):
    net, subnet = scenarios.network(cloud, project_id, name=name)
    scenarios.port(cloud, project_id, net, subnet, name=name + '-port')
    return net


def test_the_catalogs_regions_and_where_each_service_is(two):
    one, _ = two
    regions = Regions(one.connection())
    assert regions.names == ['RegionOne', 'RegionTwo']
    assert regions.others == []
    assert regions.of_service('network') == ['RegionOne', 'RegionTwo']
    # one Glance behind both regions' catalogs: listed in the first only
    assert regions.of_service('image') == ['RegionOne']
    assert regions.of_service('compute') == ['RegionOne']
    assert regions.of_service('network', ['RegionTwo']) == ['RegionTwo']


def test_an_unknown_region_is_refused_with_the_catalogs(two):
    one, _ = two
    with pytest.raises(CascadeError) as exc:
        Regions(one.connection(), ['RegionThree'])
    assert str(exc.value) == (
        'No region RegionThree in the catalog; its regions are '
        'RegionOne, RegionTwo.'
    )


def test_each_regions_connection_reaches_its_own_service(two):
    one, r2 = two
    a = scenarios.project(one, 'A')['id']
    own_network(one, a, 'net1')
    own_network(r2, a, 'net2')
    regions = Regions(one.connection())
    names = {
        region: sorted(
            n.name
            for n in regions.connection(region).network.networks(project_id=a)
        )
        for region in regions.names
    }
    assert names == {'RegionOne': ['net1'], 'RegionTwo': ['net2']}
    assert regions.connection('RegionTwo') is regions.connection('RegionTwo')


def test_the_plan_covers_every_region_and_the_project_waits_for_all(two):
    one, r2 = two
    a = scenarios.project(one, 'A')['id']
    net1 = own_network(one, a, 'net1')
    net2 = own_network(r2, a, 'net2')
    image = scenarios.image(one, a)
    pc = cascade(one)
    plan = pc.plan(pc.resolve(['A']))
    regions = {
        (s.target.kind, s.target.id): s.target.region
        for s in plan.steps.values()
    }
    assert regions[('network.network', net1['id'])] == 'RegionOne'
    assert regions[('network.network', net2['id'])] == 'RegionTwo'
    # the shared Glance is listed once, in the first region
    assert [r for (k, i), r in regions.items() if i == image['id']] == [
        'RegionOne'
    ]
    assert regions[('identity.project', a)] == ''
    project_step = f'delete:identity.project:{a}'
    before_project = {f for f, t in plan.edges if t == project_step}
    assert f'delete:network.network:{net2["id"]}@RegionTwo' in before_project
    assert f'delete:network.network:{net1["id"]}@RegionOne' in before_project
    # no edge joins the two regions' networks, ports or subnets
    for first, then in plan.edges:
        if then != project_step:
            assert plan.steps[first].target.region == (
                plan.steps[then].target.region
            ), (first, then)
    assert plan.made_for['regions'] == ['RegionOne', 'RegionTwo']


def test_one_cascade_empties_both_regions_and_the_twin_stays(two):
    one, r2 = two
    a = scenarios.project(one, 'A')['id']
    b = scenarios.project(one, 'B')['id']
    own_network(one, a, 'net1')
    own_network(r2, a, 'net2')
    twin = own_network(r2, b, 'net2')
    pc = cascade(one)
    targets = pc.resolve(['A'])
    outcome = pc.execute(pc.plan(targets), targets)
    assert [p.id for p in outcome.empty_projects] == [a]
    assert one.owned_by(a) == []
    assert r2.owned_by(a) == []
    assert r2.exists('networks', twin['id'])
    assert ('network.network', f'{twin["id"]}') not in {
        (s.target.kind, s.target.id)
        for run in outcome.runs
        for s in (r.step for r in run.results.values())
    }


def test_a_region_that_fails_keeps_everything_and_names_the_region(two):
    one, r2 = two
    a = scenarios.project(one, 'A')['id']
    own_network(one, a, 'net1')
    own_network(r2, a, 'net2')
    r2.faults.extend([('GET', r'/v2.0/networks', 503)] * 10)
    pc = cascade(one)
    targets = pc.resolve(['A'])
    with pytest.raises(CascadeError) as exc:
        pc.plan(targets)
    assert (
        f'listing network.network of project {a} in RegionTwo failed, so '
        'nothing was deleted'
    ) in str(exc.value)
    assert not [c for c in one.changes + r2.changes if c[0] != 'POST']


def test_with_region_the_other_regions_hold_the_project(two):
    one, r2 = two
    a = scenarios.project(one, 'A')['id']
    own_network(one, a, 'net1')
    net2 = own_network(r2, a, 'net2')
    pc = cascade(one, regions=('RegionOne',))
    targets = pc.resolve(['A'])
    plan = pc.plan(targets)
    outside = pc.outside(plan)
    assert {s.target.key for s in outside} >= {
        f'network.network:{net2["id"]}@RegionTwo'
    }
    assert all(s.is_report_only for s in outside)
    assert plan.made_for['regions'] == ['RegionOne']
    with pytest.raises(CascadeError) as exc:
        pc.execute(plan, targets)
    message = str(exc.value)
    assert message.startswith(
        'The projects were not deleted and stay drained (disabled): '
        'RegionTwo still holds 4 resource(s): '
    )
    assert f'network.network net2 ({net2["id"]}) in RegionTwo' in message
    assert one.owned_by(a) == []
    assert r2.exists('networks', net2['id'])
    assert one.get('projects', a)['enabled'] is False


def test_with_region_and_nothing_elsewhere_the_project_goes(two):
    one, _r2 = two
    a = scenarios.project(one, 'A')['id']
    own_network(one, a, 'net1')
    pc = cascade(one, regions=('RegionOne',))
    targets = pc.resolve(['A'])
    plan = pc.plan(targets)
    assert pc.outside(plan) == []
    outcome = pc.execute(plan, targets)
    assert [p.id for p in outcome.empty_projects] == [a]
    assert one.owned_by(a) == []


def test_a_ptr_record_goes_before_its_floating_ip_in_another_region():
    rules = kinds.build()
    a = 'a' * 32
    fip = ResourceRef(
        'network.floating_ip', 'f1', project_id=a, region='RegionTwo'
    )
    ptr = ResourceRef(
        'dns.floating_ip_ptr',
        'RegionTwo:f1',
        project_id=a,
        attrs={'floating_ip_id': 'f1'},
        region='RegionOne',
    )
    project = ResourceRef('identity.project', a, name='A', project_id=a)
    plan = build_plan(
        Inventory([fip, ptr, project]), rules, [{'id': a, 'name': 'A'}]
    )
    assert (
        'delete:dns.floating_ip_ptr:RegionTwo:f1@RegionOne',
        'delete:network.floating_ip:f1@RegionTwo',
    ) in plan.edges
    # and nothing links it to a namesake floating IP of its own region
    assert 'delete:network.floating_ip:f1@RegionOne' not in plan.steps


def test_the_same_id_in_two_regions_is_two_resources():
    rules = kinds.build()
    a = 'a' * 32
    project = ResourceRef('identity.project', a, name='A', project_id=a)
    containers = [
        ResourceRef(
            'object_store.container', 'backups', project_id=a, region=region
        )
        for region in ('RegionOne', 'RegionTwo')
    ]
    plan = build_plan(
        Inventory([*containers, project]), rules, [{'id': a, 'name': 'A'}]
    )
    assert {
        'delete:object_store.container:backups@RegionOne',
        'delete:object_store.container:backups@RegionTwo',
    } <= set(plan.steps)


def test_the_dry_run_shows_the_region_of_each_step(two, osc):
    one, r2 = two
    a = scenarios.project(one, 'A')['id']
    net2 = own_network(r2, a, 'net2')
    result = osc(
        'project', 'delete', '--cascade', '--dry-run', '-f', 'json', 'A'
    )
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    regions = {row['ID']: row.get('Region') for row in rows}
    assert regions[net2['id']] == 'RegionTwo'
    assert regions[a] == ''


def test_dry_run_with_region_says_the_project_would_stay(two, osc):
    one, r2 = two
    scenarios.project(one, 'A')
    own_network(r2, scenarios.project(one, 'B')['id'], 'other')
    a = one.all('projects')[-2]['id']
    own_network(r2, a, 'net2')
    result = osc(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--region',
        'RegionOne',
        'A',
    )
    assert result.code == 1
    assert (
        'The real run would delete in RegionOne only: 4 resource(s) in '
        'RegionTwo stay (see the plan), so the projects would stay drained.'
    ) in result.stderr
    assert not [c for c in one.changes + r2.changes if c[0] != 'POST']


def test_keystones_kinds_are_listed_once():
    with ServicesCloud() as cloud:
        cloud.add_region('RegionTwo', ['network'])
        a = scenarios.project(cloud, 'A')['id']
        pc = cascade(cloud)
        listed = [
            (kind.name, region)
            for kind in pc.discovery.available_kinds()[0]
            for region in pc.discovery.regions_of(kind)
            if kind.service_type == 'identity'
        ]
        assert listed == [
            ('identity.application_credential', ''),
            ('identity.user_default_project', ''),
            ('identity.stack_domain_user', ''),
        ]
        assert pc.plan(pc.resolve([a])).steps


def test_orphan_list_searches_every_region_and_names_it(two, osc):
    _one, r2 = two
    net = own_network(r2, 'f' * 32, 'left')  # its project is gone
    result = osc('orphan', 'list', '--service', 'network', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {(r['Region'], r['Kind'], r['ID']) for r in rows} >= {
        ('RegionTwo', 'network.network', net['id'])
    }
    assert {r['Region'] for r in rows} == {'RegionTwo'}
    narrowed = osc(
        'orphan',
        'list',
        '--service',
        'network',
        '--region',
        'RegionOne',
        '-f',
        'json',
    )
    assert narrowed.code == 0, narrowed.stderr
    assert json.loads(narrowed.stdout) == []


def test_orphan_purge_deletes_in_the_orphans_region(two, osc):
    one, r2 = two
    gone = 'f' * 32
    own_network(r2, gone, 'left')
    keep = own_network(r2, scenarios.project(one, 'B')['id'], 'kept')
    result = osc('orphan', 'purge', '--service', 'network', '--yes')
    assert result.code == 0, result.stderr
    assert r2.owned_by(gone) == []
    assert r2.exists('networks', keep['id'])
    assert not [c for c in one.changes if c[0] == 'DELETE']
