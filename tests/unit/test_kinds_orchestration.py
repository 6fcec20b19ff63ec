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

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, FAILED
from osc_cascade.kinds import orchestration
from osc_cascade.kinds.base import delete_of
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import ADMIN_PROJECT, ADMIN_USER
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

    me = f'delete:{STACK}:{stack["id"]}'
    for made in (
        f'delete:network.network:{net["id"]}',
        f'delete:network.port:{port["id"]}',
        f'delete:object_store.container:{a["id"]}/logs',
    ):
        assert (me, made) in plan.edges
        assert (me, made) in plan.soft_edges
    assert f'delete:{STACK}:{nested["id"]}' not in plan.steps


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


def test_the_orphan_search_lists_every_stack_without_their_resources(
    cloud, kind
):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    cloud.stack('app', a)
    cloud.stack('app', b)
    refs = kind.list(cloud.connection(), None)
    assert {r.project_id for r in refs} == {a, b}
    assert not [
        p
        for _, p in cloud.requests
        if p.endswith('/resources') or '/resources?' in p
    ]
