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

"""What ``cluster force-delete --delete-leftovers`` keeps (issue #29, items
11, 12 and 13): what the template retains or only adopted, what it takes a
snapshot of first, what is in another project or region, and a router
with someone else's interface."""

import json

import pytest

from osc_cascade.workflows import clusters
from osc_cascade.workflows.force_delete import keeps
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeHeatCloud
from tests.unit.test_cluster_force_delete import (
    find,
    force,
    read_json,
    resumer,
)

HEAT = clusters.HeatStacks()


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with FakeHeatCloud() as c:
        yield c


@pytest.fixture
def clock():
    return FakeClock(yields=True)


def app(cloud, name='app'):
    project = scenarios.project(cloud, 'tenant')
    stack = cloud.stack(name, project['id'], on_delete='hang')
    return project, stack


def force_delete(cloud, clock, name='app', **options):
    engine = force(
        cloud, clock, service=HEAT, delete_leftovers=True, **options
    )
    return engine.run(engine.preview(find(cloud, name, HEAT)))


# -- 11. deletion_policy ------------------------------------------------------


def test_a_retained_volume_is_kept_and_that_is_no_failure(cloud, clock):
    project, stack = app(cloud)
    net, _ = scenarios.network(cloud, project['id'])
    vol = scenarios.volume(cloud, project['id'], name='data')
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy='Retain',
    )
    outcome = force_delete(cloud, clock)
    assert cloud.exists('volumes', vol['id'])
    assert not cloud.exists('networks', net['id'])
    key = f'OS::Cinder::Volume {vol["id"]}'
    assert outcome.leftovers[key] == (
        'kept: the template retains it (deletion_policy Retain)'
    )
    assert outcome.ok
    assert outcome.kept() == [f'{key}: {keeps.RETAINED}']
    assert not [p for m, p in cloud.changes if 'volumes' in p]


def test_a_retained_nested_stack_keeps_all_it_holds(cloud, clock):
    project, stack = app(cloud)
    net, subnet = scenarios.network(cloud, project['id'])
    group = cloud.nested(stack, 'workers')
    stack['template']['resources']['workers']['deletion_policy'] = 'retain'
    vm = scenarios.server(cloud, project['id'], 'worker-0', net, subnet)
    cloud.resource(group, 'worker-0', 'OS::Nova::Server', vm['id'])
    outcome = force_delete(cloud, clock)
    assert cloud.exists('servers', vm['id'])
    assert outcome.leftovers == {
        f'OS::Nova::Server {vm["id"]}': keeps.RETAINED
    }


def test_a_retained_subnet_keeps_its_network(cloud, clock):
    project, stack = app(cloud)
    net, subnet = scenarios.network(cloud, project['id'])
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(
        stack,
        'subnet',
        'OS::Neutron::Subnet',
        subnet['id'],
        deletion_policy='Retain',
    )
    outcome = force_delete(cloud, clock)
    assert cloud.exists('networks', net['id'])
    assert outcome.leftovers[f'OS::Neutron::Net {net["id"]}'] == (
        f'kept: its subnet {subnet["id"]} is kept'
    )
    assert not [p for m, p in cloud.changes if '/networks/' in p]


def test_a_policy_from_a_parameter_is_read(cloud, clock):
    project, stack = app(cloud)
    vol = scenarios.volume(cloud, project['id'])
    stack['template']['parameters'] = {
        'keep': {'type': 'string', 'default': 'Retain'}
    }
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy={'get_param': 'keep'},
    )
    outcome = force_delete(cloud, clock)
    assert cloud.exists('volumes', vol['id'])
    assert outcome.ok


def test_a_snapshot_volume_is_backed_up_before_its_delete(cloud, clock):
    project, stack = app(cloud)
    vol = scenarios.volume(cloud, project['id'], name='data')
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy='Snapshot',
    )
    outcome = force_delete(cloud, clock)
    assert outcome.leftovers == {f'OS::Cinder::Volume {vol["id"]}': 'deleted'}
    backups = [b for b in cloud.all('backups') if b['volume_id'] == vol['id']]
    assert [b['status'] for b in backups] == ['available']
    paths = [(m, p.split('?')[0]) for m, p in cloud.changes]
    assert paths.index(('POST', '/v3/backups')) < paths.index(
        ('DELETE', f'/v3/volumes/{vol["id"]}')
    )


def test_a_snapshot_volume_whose_backup_fails_is_kept(cloud, clock):
    project, stack = app(cloud)
    vol = scenarios.volume(cloud, project['id'], name='data')
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy='Snapshot',
    )
    cloud.backup_status_after_create = 'error'
    outcome = force_delete(cloud, clock)
    assert cloud.exists('volumes', vol['id'])
    assert not outcome.ok
    why = outcome.leftovers[f'OS::Cinder::Volume {vol["id"]}']
    assert why.startswith(
        'kept: the template asks for a snapshot before its delete '
        '(deletion_policy Snapshot); its backup '
    )
    assert why.endswith(' is error')


def test_a_snapshot_server_is_kept(cloud, clock):
    project, stack = app(cloud)
    net, subnet = scenarios.network(cloud, project['id'])
    vm = scenarios.server(cloud, project['id'], 'vm', net, subnet)
    cloud.resource(
        stack, 'vm', 'OS::Nova::Server', vm['id'], deletion_policy='Snapshot'
    )
    outcome = force_delete(cloud, clock)
    assert cloud.exists('servers', vm['id'])
    assert not outcome.ok
    assert (
        'deletion_policy Snapshot'
        in (outcome.leftovers[f'OS::Nova::Server {vm["id"]}'])
    )


def test_a_stack_already_being_deleted_keeps_what_its_template_no_longer_says(
    cloud, clock
):
    """A delete swaps in an empty template: what Heat has not reached may
    be retained, so it is kept; what Heat itself failed to delete is not
    retained."""
    project, stack = app(cloud)
    net, _ = scenarios.network(cloud, project['id'])
    vol = scenarios.volume(cloud, project['id'])
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(
        stack, 'vol', 'OS::Cinder::Volume', vol['id'], status='DELETE_FAILED'
    )
    cloud.delete_stack(stack)
    outcome = force_delete(cloud, clock)
    assert cloud.exists('networks', net['id'])
    assert outcome.leftovers[f'OS::Neutron::Net {net["id"]}'] == (
        "kept: its deletion_policy is not known (the stack's template no "
        'longer holds it); delete it yourself if the template did not '
        'retain it'
    )
    # a volume may have had Snapshot: Heat's failed delete says not which
    assert cloud.exists('volumes', vol['id'])
    assert not outcome.ok


def test_the_preview_says_what_is_kept(cloud, clock):
    project, stack = app(cloud)
    vol = scenarios.volume(cloud, project['id'])
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy='Retain',
    )
    preview = force(cloud, clock, service=HEAT).preview(
        find(cloud, 'app', HEAT)
    )
    from osc_cascade.workflows.force_delete.outcome import planned_action

    (res,) = preview.left_behind()
    assert planned_action(res, True) == f'leave behind ({keeps.RETAINED})'
    assert cloud.changes == []


# -- 12. adopted resources ----------------------------------------------------


def test_an_adopted_network_is_kept(cloud, clock):
    project, stack = app(cloud)
    net, _ = scenarios.network(cloud, project['id'])
    cloud.resource(
        stack, 'net', 'OS::Neutron::Net', net['id'], external_id=net['id']
    )
    outcome = force_delete(cloud, clock)
    assert cloud.exists('networks', net['id'])
    assert outcome.leftovers == {
        f'OS::Neutron::Net {net["id"]}': (
            'kept: the stack only adopted it (external_id); Heat never '
            'deletes it'
        )
    }
    assert outcome.ok


def test_adopted_without_a_template_to_say_so_is_kept(cloud, clock):
    project, stack = app(cloud)
    net, _ = scenarios.network(cloud, project['id'])
    cloud.resource(
        stack, 'net', 'OS::Neutron::Net', net['id'], status='ADOPT_COMPLETE'
    )
    cloud.delete_stack(stack)  # empties the template
    outcome = force_delete(cloud, clock)
    assert cloud.exists('networks', net['id'])
    assert outcome.leftovers[f'OS::Neutron::Net {net["id"]}'].startswith(
        'kept: Heat adopted it (ADOPT_COMPLETE)'
    )
    assert not outcome.ok


# -- 13. another project, another region -------------------------------------


def test_a_network_of_another_project_is_kept_and_stays_listed(cloud, clock):
    project, stack = app(cloud)
    other = scenarios.project(cloud, 'other')
    net, _ = scenarios.network(cloud, other['id'], name='theirs')
    mine, _ = scenarios.network(cloud, project['id'], name='mine')
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(stack, 'mine', 'OS::Neutron::Net', mine['id'])
    outcome = force_delete(cloud, clock)
    assert cloud.exists('networks', net['id'])
    assert not cloud.exists('networks', mine['id'])
    key = f'OS::Neutron::Net {net["id"]}'
    assert outcome.leftovers[key] == (
        f'kept: network {net["id"]} belongs to project {other["id"]}, '
        f"not the stack's project"
    )
    assert not outcome.ok
    manifest = read_json(outcome.manifest)
    assert key in [
        f'{r["type"]} {r["physical_id"]}' for r in manifest['resources']
    ]
    assert key not in manifest['already_gone']


def test_gone_is_said_only_of_a_404(cloud, clock):
    project, stack = app(cloud)
    net, _ = scenarios.network(cloud, project['id'])
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    engine = force(cloud, clock, service=HEAT, delete_leftovers=True)
    preview = engine.preview(find(cloud, 'app', HEAT))
    cloud._remove('networks', net['id'])
    outcome = engine.run(preview)
    assert outcome.leftovers == {
        f'OS::Neutron::Net {net["id"]}': 'already gone'
    }
    assert (
        'GET',
        f'/v2.0/networks/{net["id"]}',
    ) in [(m, p.split('?')[0]) for m, p in cloud.requests]
    assert outcome.ok


def test_a_network_found_in_another_region_is_kept(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with FakeHeatCloud() as one:
        two = one.add_region('RegionTwo', ['network'])
        project, stack = app(one)
        net, _ = scenarios.network(two, project['id'])
        one.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
        outcome = force_delete(one, FakeClock(yields=True))
        assert two.exists('networks', net['id'])
        assert outcome.leftovers == {
            f'OS::Neutron::Net {net["id"]}': (
                f'kept: network {net["id"]} is in region RegionTwo, not '
                f"the stack's region RegionOne"
            )
        }
        assert not outcome.ok


# -- 4. a router with someone else's interface -------------------------------


def routed(cloud):
    project, stack = app(cloud)
    net, subnet = scenarios.network(cloud, project['id'])
    router, _ = scenarios.router(cloud, project['id'], subnet)
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(stack, 'subnet', 'OS::Neutron::Subnet', subnet['id'])
    cloud.resource(stack, 'router', 'OS::Neutron::Router', router['id'])
    cloud.resource(
        stack,
        'iface',
        'OS::Neutron::RouterInterface',
        f'{router["id"]}:subnet_id={subnet["id"]}',
    )
    return project, router


@pytest.mark.parametrize('whose', ['same project', 'other project'])
def test_a_router_with_an_interface_not_the_stacks_is_kept(
    cloud, clock, whose
):
    project, router = routed(cloud)
    owner = (
        project
        if whose == 'same project'
        else scenarios.project(cloud, 'other')
    )
    _, theirs = scenarios.network(
        cloud, owner['id'], name='theirs', cidr='10.9.0.0/24'
    )
    port = cloud.add(
        'ports',
        name='',
        network_id=theirs['network_id'],
        project_id=owner['id'],
        tenant_id=owner['id'],
        device_owner='network:router_interface',
        device_id=router['id'],
        security_groups=[],
        fixed_ips=[{'subnet_id': theirs['id'], 'ip_address': '10.9.0.1'}],
    )
    outcome = force_delete(cloud, clock)
    assert cloud.exists('routers', router['id'])
    assert cloud.exists('ports', port['id'])
    why = (
        f'kept: router {router["id"]} has an interface on subnet '
        f"{theirs['id']} (port {port['id']}), which is not the stack's"
    )
    assert outcome.leftovers[f'OS::Neutron::Router {router["id"]}'] == why
    # what the router's interface holds stays with it, not tried in vain
    subnet = next(
        r for r in outcome.left_behind if r.type == 'OS::Neutron::Subnet'
    )
    assert outcome.leftovers[subnet.key] == (
        f'kept: its interface on router {router["id"]} is kept'
    )
    assert not outcome.ok
    assert not [p for m, p in cloud.changes if 'remove_router_interface' in p]


# -- resume: each resource checked again --------------------------------------


def test_a_resume_checks_the_owner_again(cloud, clock):
    project, stack = app(cloud)
    net, _ = scenarios.network(cloud, project['id'])
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    outcome = force(cloud, clock, service=HEAT).run(
        force(cloud, clock, service=HEAT).preview(find(cloud, 'app', HEAT))
    )
    assert outcome.result == 'abandoned'
    # meanwhile the network became another project's
    other = scenarios.project(cloud, 'other')
    cloud.get('networks', net['id']).update(
        project_id=other['id'], tenant_id=other['id']
    )
    engine = resumer(cloud, clock)
    manifest = engine.load(outcome.manifest)
    actions = dict((r.key, a) for r, a in engine.pending_actions(manifest))
    assert actions[f'OS::Neutron::Net {net["id"]}'] == (
        f'nothing: kept: network {net["id"]} belongs to project '
        f"{other['id']}, not the stack's project"
    )
    resumed = engine.resume(manifest)
    assert cloud.exists('networks', net['id'])
    assert resumed.leftovers[f'OS::Neutron::Net {net["id"]}'].startswith(
        f'kept: network {net["id"]} belongs to project {other["id"]}'
    )
    assert not resumed.ok


def test_a_resume_of_a_manifest_keeps_what_its_template_retains(cloud, clock):
    project, stack = app(cloud)
    vol = scenarios.volume(cloud, project['id'])
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy='Retain',
    )
    outcome = force(cloud, clock, service=HEAT).run(
        force(cloud, clock, service=HEAT).preview(find(cloud, 'app', HEAT))
    )
    # a manifest written before the policies were recorded
    data = read_json(outcome.manifest)
    for res in data['resources']:
        res.pop('deletion_policy', None)
        res.pop('external_id', None)
    with open(outcome.manifest, 'w') as f:
        json.dump(data, f)
    engine = resumer(cloud, clock)
    resumed = engine.resume(engine.load(outcome.manifest))
    assert cloud.exists('volumes', vol['id'])
    assert resumed.leftovers == {
        f'OS::Cinder::Volume {vol["id"]}': keeps.RETAINED
    }
    assert resumed.ok


# -- the command: what it prints and how it exits -----------------------------


def test_the_command_ends_0_with_the_retained_volume_said(cloud, osc):
    project, stack = app(cloud)
    vol = scenarios.volume(cloud, project['id'], name='data')
    cloud.resource(
        stack,
        'data',
        'OS::Cinder::Volume',
        vol['id'],
        deletion_policy='Retain',
    )
    result = osc(
        'cluster', 'force-delete', '--stack', stack['id'], '--yes',
        '--delete-leftovers', '--grace', '0', '-f', 'json',
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert (
        f'stack app ({stack["id"]}): OS::Cinder::Volume {vol["id"]}: '
        f'{keeps.RETAINED}'
    ) in result.stderr
    [row] = json.loads(result.stdout)
    assert (
        row['Left Behind'],
        row['Leftovers Deleted'],
        row['Leftovers Not Deleted'],
    ) == (1, 0, 0)
    assert cloud.exists('volumes', vol['id'])


def test_the_command_ends_1_with_the_other_projects_network_said(cloud, osc):
    _project, stack = app(cloud)
    other = scenarios.project(cloud, 'other')
    net, _ = scenarios.network(cloud, other['id'], name='theirs')
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    result = osc(
        'cluster', 'force-delete', '--stack', stack['id'], '--yes',
        '--delete-leftovers', '--grace', '0', '-f', 'json',
    )  # fmt: skip
    assert result.code == 1
    assert (
        f'OS::Neutron::Net {net["id"]}: kept: network {net["id"]} belongs '
        f"to project {other['id']}, not the stack's project"
    ) in result.stderr
    [row] = json.loads(result.stdout)
    assert row['Leftovers Not Deleted'] == 1
    assert cloud.exists('networks', net['id'])
