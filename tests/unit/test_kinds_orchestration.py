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

"""Heat stacks in a project cascade: listed as admin, nested ones with their
root, what a stack made deleted after it (directly only if it failed), and
the hint when it cannot be deleted."""

import json

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, FAILED
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds import orchestration
from osc_cascade.kinds.base import delete_of
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused
from tests.unit.fakes import orchestration as fake_heat
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import ADMIN_PROJECT, ADMIN_USER, step_id
from tests.unit.fakes.run import cascade_for, run_kind

STACK = orchestration.Stack.name


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def kind():
    return kinds_mod.build()[STACK]


def test_lists_the_projects_stacks_failed_and_nested_as_admin(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    root = cloud.stack('app', a)
    failed = cloud.stack('broken', a, status='CREATE_FAILED')
    nested = cloud.nested(root, 'group')
    cloud.stack('app', b)

    refs = {r.id: r for r in kind.list(cloud.connection(), a)}

    assert set(refs) == {root['id'], failed['id'], nested['id']}
    assert refs[nested['id']].attrs['nested'] is True
    assert refs[failed['id']].attrs['status'] == 'CREATE_FAILED'
    [listing] = [p for m, p in cloud.requests if '/stacks?' in p]
    assert f'tenant={a}' in listing and 'show_nested=True' in listing
    assert 'global_tenant' not in listing  # Heat's default policy: 403


def test_a_nested_stack_goes_with_its_root(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    root = cloud.stack('app', a)
    nested = cloud.nested(root, 'group')
    refs = {r.id: r for r in kind.list(cloud.connection(), a)}
    assert kind.primary_step(refs[nested['id']]) is None
    assert (
        kind.primary_step(refs[root['id']]).id
        == delete_of(STACK, root['id']).id
    )


def test_what_a_stack_made_waits_for_it_softly_nested_ones_too(cloud):
    a = scenarios.project(cloud, 'A')
    net, subnet = scenarios.network(cloud, a['id'])
    stack = cloud.stack('app', a['id'])
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    nested = cloud.nested(stack, 'group')
    port = scenarios.port(cloud, a['id'], net, subnet)
    cloud.resource(nested, 'port', 'OS::Neutron::Port', port['id'])
    cloud.container(a['id'], 'logs')
    cloud.resource(stack, 'logs', 'OS::Swift::Container', 'logs')

    _pc, _t, plan = cascade_for(cloud, a['id'])

    me = step_id('delete', STACK, stack['id'])
    for made in (
        step_id('delete', 'network.network', net['id']),
        step_id('delete', 'network.port', port['id']),
        step_id('delete', 'object_store.container', f'{a["id"]}/logs'),
    ):
        assert (me, made) in plan.edges
        assert (me, made) in plan.soft_edges
    assert step_id('delete', STACK, nested['id']) not in plan.steps


def test_a_stack_that_cannot_be_deleted_fails_with_the_way_out(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('stuck', a, on_delete='fail')
    [ref] = kind.list(cloud.connection(), a)

    [result] = run_kind(cloud, kind, [ref]).results.values()

    assert result.outcome == FAILED
    assert 'DELETE_FAILED' in result.error
    assert 'openstack cluster force-delete --stack' in result.error
    assert cloud.exists('stacks', stack['id'])


def test_what_a_failed_stack_made_is_deleted_directly(cloud):
    a = scenarios.project(cloud, 'A')['id']
    net = cloud.add('networks', name='made', project_id=a, tenant_id=a)
    stack = cloud.stack('stuck', a, on_delete='fail')
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    pc, targets, plan = cascade_for(cloud, a)

    with pytest.raises(CascadeError, match='cluster force-delete --stack'):
        pc.execute(plan, targets)

    results = {r.step.target.id: r for r in pc.runs[0].results.values()}
    assert results[stack['id']].outcome == FAILED
    assert results[net['id']].outcome == DONE  # soft: ran after the failure
    assert not cloud.exists('networks', net['id'])
    assert cloud.index_of_delete('/stacks/stuck', stack['id']) < (
        cloud.index_of_delete('/networks', net['id'])
    )


def test_what_a_deleted_stack_took_along_counts_as_done(cloud):
    a = scenarios.project(cloud, 'A')['id']
    net = cloud.add('networks', name='made', project_id=a, tenant_id=a)
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    pc, targets, plan = cascade_for(cloud, a)

    pc.execute(plan, targets)

    results = {r.step.target.id: r for r in pc.runs[0].results.values()}
    assert results[net['id']].outcome == DONE
    assert results[net['id']].attempts == 0  # 404: Heat had deleted it
    assert not cloud.exists('stacks', stack['id'])


@pytest.mark.parametrize(
    'resource_type,callers',
    [('OS::Swift::Container', 'container'), ('OS::Nova::KeyPair', 'keypair')],
)
def test_a_stack_whose_delete_would_hit_a_namesake_of_the_caller_is_kept(
    cloud, resource_type, callers
):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'thing', resource_type, 'shared-name')
    if callers == 'container':
        cloud.container(ADMIN_PROJECT, 'shared-name')
    else:
        cloud.keypair(ADMIN_USER, 'shared-name')
    pc, targets, plan = cascade_for(cloud, a)

    [kept] = plan.kept()
    assert kept.target.id == stack['id']
    assert f'your own {callers} shared-name' in kept.params['reason']
    with pytest.raises(CascadeError, match='Nothing was changed'):
        pc.execute(plan, targets)
    assert cloud.changes == []


def test_without_a_namesake_the_stack_is_deleted(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'logs', 'OS::Swift::Container', 'logs')
    cloud.keypair(ADMIN_USER, 'other-name')
    [ref] = kind.list(cloud.connection(), a)
    assert kind.primary_step(ref).id == delete_of(STACK, stack['id']).id


def test_the_orphan_search_reads_each_root_stacks_resources_once(cloud, kind):
    # the purge plans with the same check as a cascade: one GET a root
    # stack (its nested stacks' resources included), none a nested stack
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    root = cloud.stack('app', a)
    cloud.nested(root, 'group')
    cloud.stack('app', b)
    refs = kind.list(cloud.connection(), None)
    assert {r.project_id for r in refs} == {a, b}
    reads = [
        p
        for _, p in cloud.requests
        if p.endswith('/resources') or '/resources?' in p
    ]
    assert len(reads) == 2
    assert all('nested_depth=100' in p for p in reads)


# -- what is not the project's -----------------------------------------------


@pytest.fixture
def flavor_stack(cloud, monkeypatch):
    """Project A's stack that made a flavor (as an admin's may), and the
    flavor; Heat's delete of the stack takes the flavor along (global: no
    project owns a flavor)."""
    monkeypatch.setitem(fake_heat.PHYSICAL, 'OS::Nova::Flavor', 'flavors')
    a = scenarios.project(cloud, 'A')['id']
    flavor = cloud.add('flavors', name='m1.app')
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'flavor', 'OS::Nova::Flavor', flavor['id'])
    return a, flavor, stack


def test_a_stack_that_made_a_flavor_is_kept_and_the_flavor_stays(
    cloud, flavor_stack
):
    # the reproduction: deleting the stack deleted the flavor
    a, flavor, stack = flavor_stack
    assert kept_and_refused(cloud, a, stack['id']) == (
        "deleting it would make Heat delete what is not the project's "
        f'(global or admin-scoped): OS::Nova::Flavor {flavor["id"]}'
    )
    assert cloud.exists('flavors', flavor['id'])
    assert cloud.exists('stacks', stack['id'])


def test_the_fake_heat_deletes_a_stacks_flavor_with_it(cloud, flavor_stack):
    # what the keep prevents, as Heat does it
    _a, flavor, stack = flavor_stack
    cloud.delete_stack(stack)
    assert any(cloud.stack_gone(stack['id']) for _poll in range(3))
    assert not cloud.exists('flavors', flavor['id'])


@pytest.mark.parametrize(
    'resource_type',
    [
        'OS::Keystone::User',
        'OS::Keystone::RoleAssignment',
        'OS::Cinder::VolumeType',
        'OS::Neutron::ProviderNet',
        'OS::Nova::HostAggregate',
        'OS::Nova::Quota',
    ],
)
def test_global_and_admin_scoped_types_keep_the_stack_nested_too(
    cloud, kind, resource_type
):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    nested = cloud.nested(stack, 'group')
    cloud.resource(nested, 'thing', resource_type, 'x-1')
    [ref] = [
        r for r in kind.list(cloud.connection(), a) if r.id == stack['id']
    ]
    step = kind.primary_step(ref)
    assert step.action == 'keep'
    assert f'{resource_type} x-1' in step.params['reason']


def test_project_owned_types_and_unmade_resources_keep_nothing(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'qos', 'OS::Neutron::QoSPolicy', 'q-1')
    cloud.resource(stack, 'net', 'OS::Neutron::Net', 'n-1')
    # a flavor that failed to be made: the delete has nothing to delete
    cloud.resource(stack, 'flavor', 'OS::Nova::Flavor', None)
    [ref] = kind.list(cloud.connection(), a)
    assert kind.primary_step(ref).is_delete


def test_the_orphan_purge_keeps_a_stack_of_a_deleted_project_alike(
    cloud, kind
):
    # the orphan search used to skip the resources, and with them the
    # namesake check: the purge would have deleted the admin's container
    gone = 'p-deleted'
    stack = cloud.stack('app', gone)
    cloud.resource(stack, 'logs', 'OS::Swift::Container', 'logs')
    cloud.container(ADMIN_PROJECT, 'logs')
    other = cloud.stack('infra', gone)
    cloud.resource(other, 'flavor', 'OS::Nova::Flavor', 'f-1')
    refs = {r.id: r for r in kind.list(cloud.connection(), None)}
    plan = build_plan(
        Inventory(refs.values()),
        {STACK: kind},
        [{'id': gone, 'name': ''}],
    )
    kept = {s.target.id: s.params['reason'] for s in plan.kept()}
    assert set(kept) == {stack['id'], other['id']}
    assert 'your own container logs' in kept[stack['id']]
    assert 'OS::Nova::Flavor f-1' in kept[other['id']]


def test_a_kept_stack_names_a_few_and_counts_the_rest(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    for i in range(5):
        cloud.resource(stack, f'u{i}', 'OS::Keystone::User', f'u-{i}')
    [ref] = kind.list(cloud.connection(), a)
    reason = kind.primary_step(ref).params['reason']
    assert reason.endswith('OS::Keystone::User u-2 and 2 more')
    assert '\n' not in reason


# -- what the plan shows ------------------------------------------------------


def test_a_stack_ref_holds_every_resource_it_made_with_its_type(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'net', 'OS::Neutron::Net', 'n-1')
    nested = cloud.nested(stack, 'group')
    cloud.resource(nested, 'vm0', 'OS::Nova::Server', 's-0')
    cloud.resource(nested, 'vm1', 'OS::Nova::Server', 's-1')
    [ref] = [
        r for r in kind.list(cloud.connection(), a) if r.id == stack['id']
    ]
    assert ref.attrs['made'] == [
        {
            'type': 'OS::Heat::ResourceGroup',
            'id': nested['id'],
            'name': 'group',
        },
        {'type': 'OS::Neutron::Net', 'id': 'n-1', 'name': 'net'},
        {'type': 'OS::Nova::Server', 'id': 's-0', 'name': 'vm0'},
        {'type': 'OS::Nova::Server', 'id': 's-1', 'name': 'vm1'},
    ]
    # it survives a plan file
    assert ResourceRef.from_dict(json.loads(json.dumps(ref.to_dict()))) == ref


# -- DELETE_FAILED and --force-stuck (issue #33) ----------------------------


def test_a_stack_listed_delete_failed_is_deleted_again(cloud, kind):
    # heat/engine/service.py delete_stack accepts a delete in any state
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('failed', a, status='DELETE_FAILED')
    pc, targets, plan = cascade_for(cloud, a)
    assert step_id('delete', STACK, stack['id']) in plan.steps
    assert not any(s.is_break_action for s in plan.steps.values())
    pc.execute(plan, targets)
    assert not cloud.exists('stacks', stack['id'])


def test_force_stuck_abandons_a_stack_whose_delete_fails_again(cloud):
    a = scenarios.project(cloud, 'A')['id']
    net = cloud.add('networks', name='made', project_id=a, tenant_id=a)
    stack = cloud.stack('failed', a, status='DELETE_FAILED', on_delete='fail')
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    pc, targets, plan = cascade_for(cloud, a, force_stuck=True)
    abandon = (
        f'abandon_stack:{STACK}:{stack["id"]}@RegionOne[status=DELETE_FAILED]'
    )
    assert abandon in plan.steps, sorted(plan.steps)
    delete = step_id('delete', STACK, stack['id'])
    assert (delete, abandon) in plan.edges
    assert (delete, abandon) in plan.soft_edges
    outcome = pc.execute(plan, targets)  # nothing left: no error
    outcomes = {
        r.step.action: r.outcome
        for r in pc.runs[0].results.values()
        if r.step.target.id == stack['id']
    }
    assert outcomes['delete'] == FAILED
    assert outcomes['abandon_stack'] == DONE
    # deleted again (failed), then abandoned: Heat forgets it, what it
    # made is deleted as the project's, and the project may go
    assert not cloud.exists('stacks', stack['id'])
    assert not cloud.exists('networks', net['id'])
    assert [t.id for t in outcome.empty_projects] == [a]
    paths = [p.split('?')[0] for m, p in cloud.changes if m == 'DELETE']
    stack_path = f'/stacks/failed/{stack["id"]}'
    [again] = [i for i, p in enumerate(paths) if p.endswith(stack_path)]
    [abandoned] = [
        i for i, p in enumerate(paths) if p.endswith(stack_path + '/abandon')
    ]
    assert again < abandoned


def test_without_heats_abandon_the_line_says_only_the_operator_can(cloud):
    cloud.abandon_enabled = False
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('failed', a, status='DELETE_FAILED', on_delete='fail')
    pc, targets, plan = cascade_for(cloud, a, force_stuck=True)
    with pytest.raises(CascadeError):
        pc.execute(plan, targets)
    [abandon] = [
        r for r in pc.runs[0].results.values() if r.step.is_break_action
    ]
    assert abandon.error == (
        "not forced: Heat's abandon is off (enable_stack_abandon in "
        'heat.conf, which only the operator can turn on); delete the '
        "stack's resources, then the stack again"
    )
    assert cloud.exists('stacks', stack['id'])
    assert cloud.exists('projects', a)


def test_a_kept_stack_is_never_abandoned(cloud):
    a = scenarios.project(cloud, 'A')['id']
    flavor = cloud.add('flavors', name='f')
    stack = cloud.stack('failed', a, status='DELETE_FAILED', on_delete='fail')
    cloud.resource(stack, 'flavor', 'OS::Nova::Flavor', flavor['id'])
    _pc, _targets, plan = cascade_for(cloud, a, force_stuck=True)
    assert not any(s.is_break_action for s in plan.steps.values())
