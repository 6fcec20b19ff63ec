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

"""A stack that made another project's resource (issue 29, defect 4): an
admin's stack in project A made a network with ``tenant_id`` X (or a
volume it made was transferred to X since). Heat's delete of the stack
deletes X's network, so the cascade of A and the orphan purge once A is
gone keep the stack, and say why in one line; what the stack made that is
A's own is still deleted."""

import json

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.kinds import orchestration
from osc_cascade.reaper import lock, sweep
from osc_cascade.workflows import orphans
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_for, zero_delays

STACK = orchestration.Stack.name


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def kind():
    return kinds_mod.build()[STACK]


def foreign_network_stack(cloud, owner_of_stack):
    """A stack of ``owner_of_stack`` that made project X's network."""
    x = scenarios.project(cloud, 'X')['id']
    net, _subnet = scenarios.network(cloud, x, name='x-net')
    stack = cloud.stack('app', owner_of_stack)
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    return x, net, stack


def test_a_stack_that_made_another_projects_network_is_kept(cloud):
    # the reproduction: the cascade deleted the stack, and Heat X's network
    a = scenarios.project(cloud, 'A')['id']
    x, net, stack = foreign_network_stack(cloud, a)
    assert kept_and_refused(cloud, a, stack['id']) == (
        f'stack app made network {net["id"]} of project {x}: deleting the '
        'stack would delete it'
    )
    assert cloud.exists('networks', net['id'])
    assert cloud.exists('stacks', stack['id'])
    assert cloud.exists('projects', a)


def test_the_cascade_command_fails_and_says_why(cloud, osc):
    a = scenarios.project(cloud, 'A')['id']
    x, net, _stack = foreign_network_stack(cloud, a)
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 1
    assert (
        f'stack app made network {net["id"]} of project {x}: deleting the '
        'stack would delete it'
    ) in result.stderr
    assert 'Nothing was changed' in result.stderr
    assert cloud.changes == []
    assert cloud.exists('projects', a)


def test_a_transferred_volume_in_a_nested_stack_keeps_its_root(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    x = scenarios.project(cloud, 'X')['id']
    vol = scenarios.volume(cloud, x, name='was-a-s')
    stack = cloud.stack('app', a)
    nested = cloud.nested(stack, 'group')
    cloud.resource(nested, 'data', 'OS::Cinder::Volume', vol['id'])
    refs = {r.id: r for r in kind.list(cloud.connection(), a)}
    assert kind.primary_step(refs[nested['id']]) is None
    step = kind.primary_step(refs[stack['id']])
    assert step.action == 'keep'
    assert step.params['reason'] == (
        f'stack app made volume {vol["id"]} of project {x}: deleting the '
        'stack would delete it'
    )


def test_a_stack_whose_resources_are_the_projects_is_deleted(cloud, osc):
    # no over-keeping: the project's own volume and server go with the
    # stack, and the project with them
    a = scenarios.project(cloud, 'A')['id']
    vol = scenarios.volume(cloud, a)
    vm = scenarios.server(cloud, a)
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'data', 'OS::Cinder::Volume', vol['id'])
    cloud.resource(stack, 'vm', 'OS::Nova::Server', vm['id'])
    # and one Heat no longer finds: it is gone, not in doubt
    cloud.resource(stack, 'old', 'OS::Cinder::Volume', 'v-gone')
    _pc, _targets, plan = cascade_for(cloud, a)
    assert plan.kept() == []
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('stacks', stack['id'])
    assert not cloud.exists('volumes', vol['id'])
    assert not cloud.exists('servers', vm['id'])
    assert not cloud.exists('projects', a)


def test_an_owner_that_cannot_be_read_keeps_the_stack(cloud, kind):
    a = scenarios.project(cloud, 'A')['id']
    _x, net, _stack = foreign_network_stack(cloud, a)
    cloud.forbidden.add('/networks/' + net['id'])
    [ref] = kind.list(cloud.connection(), a)
    step = kind.primary_step(ref)
    assert step.action == 'keep'
    assert step.params['reason'] == (
        f'stack app made network {net["id"]} (403) whose owner could not '
        "be read: deleting the stack might delete another project's"
    )


def test_a_scoped_token_told_404_is_in_doubt(cloud):
    # a token scoped to A is told 404 of X's network too
    a = scenarios.project(cloud, 'A')['id']
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'net', 'OS::Neutron::Net', 'n-unseen')
    kind = kinds_mod.build(scoped=True)[STACK]
    [ref] = kind.list(cloud.connection(), a)
    assert (
        'network n-unseen (not found)'
        in (kind.primary_step(ref).params['reason'])
    )


def test_an_octavia_load_balancer_of_another_project_keeps_the_stack(
    cloud, kind
):
    # no kind reads a load balancer's owner: the stack's check does
    a = scenarios.project(cloud, 'A')['id']
    x = scenarios.project(cloud, 'X')['id']
    _net, subnet = scenarios.network(cloud, x)
    lb = cloud.load_balancer(x, subnet)
    stack = cloud.stack('app', a)
    cloud.resource(stack, 'lb', 'OS::Octavia::LoadBalancer', lb['id'])
    [ref] = kind.list(cloud.connection(), a)
    assert kind.primary_step(ref).params['reason'] == (
        f'stack app made loadbalancer {lb["id"]} of project {x}: deleting '
        'the stack would delete it'
    )


def test_the_orphan_purge_keeps_it_and_purges_the_rest(cloud, osc):
    gone = scenarios.project(cloud, 'gone')['id']
    x, net, stack = foreign_network_stack(cloud, gone)
    own, _subnet = scenarios.network(cloud, gone, name='own')
    cloud.db['projects'].pop(gone)
    reason = (
        f'stack app made network {net["id"]} of project {x}: deleting the '
        'stack would delete it'
    )

    listed = osc('orphan', 'purge', '--dry-run', '-f', 'json')
    assert listed.code == 0, listed.stderr
    [row] = [r for r in json.loads(listed.stdout) if r['ID'] == stack['id']]
    assert row['Action'] == 'keep'
    assert reason in json.dumps(row)

    result = osc('orphan', 'purge', '--yes', '-f', 'json')
    assert result.code == 1, result.stderr
    assert cloud.exists('networks', net['id'])
    assert cloud.exists('stacks', stack['id'])
    assert not cloud.exists('networks', own['id'])
    assert reason in result.stdout + result.stderr


def test_the_reapers_purge_says_the_kept_stack_and_is_not_done(
    cloud, tmp_path
):
    # the reaper counted a kept step as done: 'purged', and never again
    gone = scenarios.project(cloud, 'gone')['id']
    x, net, stack = foreign_network_stack(cloud, gone)
    cloud.db['projects'].pop(gone)
    locks = lock.Locks(f'file://{tmp_path / "locks"}', 'reaper-a')
    locks.start()
    purger = sweep.Purger(
        cloud.connection(),
        orphans.select_kinds(kinds_mod.build()),
        locks,
        clock=FakeClock(),
        retry=zero_delays(),
    )
    outcome = purger.purge([gone])[gone]
    assert outcome.state == sweep.FAILED
    assert (
        f'stack app made network {net["id"]} of project {x}: deleting the '
        'stack would delete it'
    ) in outcome.detail
    assert cloud.exists('networks', net['id'])
    assert cloud.exists('stacks', stack['id'])


def test_the_orphan_purge_that_kept_the_stack_is_not_a_success(cloud, osc):
    # it purged the rest and exited 0, as if everything asked was done
    gone = scenarios.project(cloud, 'gone')['id']
    x, net, stack = foreign_network_stack(cloud, gone)
    cloud.db['projects'].pop(gone)
    result = osc('orphan', 'purge', '--yes', '-f', 'json')
    assert result.code == 1
    [line] = [
        e for e in result.stderr.splitlines() if e.startswith('1 orphaned')
    ]
    assert line == (
        f'1 orphaned resource(s) kept: keep orchestration.stack app '
        f'({stack["id"]}) in RegionOne: stack app made network {net["id"]} '
        f'of project {x}: deleting the stack would delete it'
    )
    summary = {r['Kind']: r for r in json.loads(result.stdout)}
    assert summary['orchestration.stack']['Kept'] == 1
    assert cloud.exists('networks', net['id'])
