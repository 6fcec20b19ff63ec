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

"""``user delete --cascade``: what a user owns outside a project (keypairs
in every region, credentials, trusts), the refusals, and the run."""

import signal

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import INTERRUPTED
from osc_cascade.workflows import users
from osc_cascade.workflows.cascade_options import CascadeOptions
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import UsersCloud
from tests.unit.fakes.common import ADMIN_USER
from tests.unit.fakes.run import zero_delays


@pytest.fixture
def cloud():
    with UsersCloud() as c:
        yield c


@pytest.fixture
def alice(cloud):
    user = cloud.user('alice')
    project = scenarios.project(cloud, 'A')
    cloud.keypair(user['id'], 'laptop')
    cloud.keypair(user['id'], 'desk')
    cloud.keypair('bob', 'laptop')  # same name, another user
    cloud.add(
        'application_credentials',
        user_id=user['id'],
        name='ci',
        project_id=project['id'],
    )
    cloud.credential(user['id'], 'ec2', project['id'])
    cloud.credential(user['id'], 'totp')
    cloud.credential('bob', 'ec2')
    cloud.trust(user['id'], 'someone', project['id'])
    return user


def workflow(cloud, **options):
    return users.UserCascade(
        cloud.connection(),
        CascadeOptions(**options),
        clock=FakeClock(),
        retry=zero_delays(),
    )


def kinds_in(plan):
    return sorted(
        (s.action, s.target.kind, s.target.name) for s in plan.steps.values()
    )


def test_the_plan_has_all_the_user_owns_and_the_user_last(cloud, alice):
    wf = workflow(cloud)
    targets = wf.resolve(['alice'])
    plan = wf.plan(targets)
    assert kinds_in(plan) == [
        ('delete', 'identity.user', 'alice'),
        ('delete', 'user.application_credential', 'ci'),
        ('delete', 'user.credential', 'ec2'),
        ('delete', 'user.credential', 'totp'),
        ('delete', 'user.keypair', 'desk'),
        ('delete', 'user.keypair', 'laptop'),
        ('delete', 'user.trust', ''),
    ]
    last = f'delete:identity.user:{alice["id"]}'
    assert {a for a, b in plan.edges if b == last} == {
        s for s in plan.steps if s != last
    }
    assert cloud.changes == []


def test_the_run_deletes_them_and_leaves_the_user_to_osc(cloud, alice):
    wf = workflow(cloud)
    targets = wf.resolve([alice['id']])
    outcome = wf.execute(wf.plan(targets), targets)
    assert [u.id for u in outcome.empty_users] == [alice['id']]
    assert cloud.get('users', alice['id'])['enabled'] is False
    assert not [k for k in cloud.all('keypairs') if k['user_id'] != 'bob']
    assert cloud.exists('keypairs', 'bob/laptop')
    assert [c['user_id'] for c in cloud.all('credentials')] == ['bob']
    assert cloud.all('trusts') == []
    assert cloud.all('application_credentials') == []
    # disabled before anything is deleted, the user itself not deleted
    assert cloud.changes[0] == ('PATCH', f'/v3/users/{alice["id"]}')
    assert ('DELETE', f'/v3/users/{alice["id"]}') not in cloud.changes


def test_keypairs_in_every_region_with_nova(cloud, alice):
    two = cloud.add_region('RegionTwo', ['compute'])
    two.keypair(alice['id'], 'far')
    wf = workflow(cloud)
    targets = wf.resolve(['alice'])
    plan = wf.plan(targets)
    regions = sorted(
        (s.target.region, s.target.name)
        for s in plan.steps.values()
        if s.target.kind == 'user.keypair'
    )
    assert regions == [
        ('RegionOne', 'desk'),
        ('RegionOne', 'laptop'),
        ('RegionTwo', 'far'),
    ]
    wf.execute(plan, targets)
    assert two.all('keypairs') == []


def test_keypairs_outside_region_keep_the_user(cloud, alice):
    """With --region RegionOne, a keypair in RegionTwo is not deleted and
    keeps the user (deleted, its keypair there would be Nova's for ever)."""
    two = cloud.add_region('RegionTwo', ['compute'])
    two.keypair(alice['id'], 'far')
    wf = workflow(cloud, regions=('RegionOne',))
    targets = wf.resolve(['alice'])
    plan = wf.plan(targets)
    [kept] = plan.kept()
    assert (kept.target.region, kept.target.name) == ('RegionTwo', 'far')
    assert 'outside --region' in kept.describe()
    with pytest.raises(CascadeError, match='outside --region'):
        wf.execute(plan, targets)
    assert cloud.changes == []
    assert [k['name'] for k in two.all('keypairs')] == ['far']


def test_a_trust_a_heat_stack_acts_with_is_kept_and_keeps_the_user(
    cloud, alice
):
    [trust] = cloud.all('trusts')
    cloud.stack('web', trust['project_id'], stack_owner='alice')
    wf = workflow(cloud)
    targets = wf.resolve(['alice'])
    plan = wf.plan(targets)
    [kept] = plan.kept()
    assert kept.target.id == trust['id']
    assert 'Heat stack web' in kept.params['reason']
    assert 'the user is not deleted' in kept.params['reason']
    with pytest.raises(CascadeError, match='nothing was changed'):
        wf.execute(plan, targets)
    assert cloud.changes == []


def test_a_stack_of_another_user_does_not_keep_the_trust(cloud, alice):
    [trust] = cloud.all('trusts')
    cloud.stack('web', trust['project_id'], stack_owner='bob')
    plan = workflow(cloud).plan(workflow(cloud).resolve(['alice']))
    assert plan.kept() == []


def test_a_trust_a_magnum_cluster_acts_with_is_kept(cloud, alice):
    [trust] = cloud.all('trusts')
    cluster = cloud.magnum_cluster('k8s', trust['project_id'], None)
    cluster['user_id'] = alice['id']
    plan = workflow(cloud).plan(workflow(cloud).resolve(['alice']))
    [kept] = plan.kept()
    assert f'Magnum cluster k8s ({cluster["uuid"]})' in kept.params['reason']


def test_refuses_the_caller_itself(cloud):
    cloud.add('users', id=ADMIN_USER, name='admin', domain_id='default')
    with pytest.raises(CascadeError, match='authenticated as'):
        workflow(cloud).resolve(['admin'])


@pytest.mark.parametrize(
    'user, config, owner',
    [
        (
            {'federated': [{'idp_id': 'okta', 'protocols': []}]},
            None,
            'the identity provider okta (federated)',
        ),
        ({}, {'identity': {'driver': 'ldap'}}, "the domain's ldap identity"),
        ({'id': 'carol.ldap'}, None, 'other than SQL'),
        ({'id': 'a' * 64}, None, 'other than SQL'),
    ],
)
def test_refuses_what_the_identity_backend_owns(cloud, user, config, owner):
    cloud.add('domains', id='corp', name='corp', config=config)
    made = cloud.user('carol', domain_id='corp', **user)
    cloud.keypair(made['id'], 'laptop')
    with pytest.raises(users.NotOurs) as err:
        workflow(cloud).resolve([made['id']])
    assert owner in str(err.value)
    assert 'nothing of it is deleted (its keypairs' in str(err.value)
    assert cloud.changes == []


def test_an_unknown_or_ambiguous_name_is_one_line(cloud):
    with pytest.raises(CascadeError, match="No user with a name or ID of 'x'"):
        workflow(cloud).resolve(['x'])
    cloud.user('dup')
    cloud.add('domains', id='d2', name='d2')
    cloud.user('dup', domain_id='d2')
    with pytest.raises(CascadeError, match='More than one user'):
        workflow(cloud).resolve(['dup'])
    [ref] = workflow(cloud).resolve(['dup'], 'd2')
    assert ref.attrs['domain_id'] == 'd2'


def test_what_appears_during_the_run_is_deleted_too(cloud, alice):
    wf = workflow(cloud)
    targets = wf.resolve(['alice'])
    plan = wf.plan(targets)
    cloud.keypair(alice['id'], 'late')
    outcome = wf.execute(plan, targets)
    assert len(outcome.runs) == 2
    assert not cloud.exists('keypairs', f'{alice["id"]}/late')


def test_another_run_holds_the_user(cloud, alice, tmp_path):
    from osc_cascade.workflows.actor import Actor

    url = f'file://{tmp_path}/locks'
    other = Actor(url, doing='openstack user delete --cascade')
    wf = workflow(cloud, coordination_url=url)
    targets = wf.resolve(['alice'])
    other.hold(alice['id'])
    try:
        with pytest.raises(CascadeError, match='busy'):
            wf.execute(wf.plan(targets), targets)
    finally:
        other.release()
    assert cloud.changes == []


def test_a_signal_before_a_round_stops_it_before_its_first_delete(
    cloud, alice
):
    wf = workflow(cloud)
    targets = wf.resolve([alice['id']])
    plan = users.without_users(wf.plan(targets))
    wf.interrupt(signal.SIGTERM)  # between two rounds: none under way
    before = list(cloud.changes)
    result = wf.run_round(plan)
    assert cloud.changes == before
    assert result.results and all(
        r.error.startswith(INTERRUPTED) for r in result.results.values()
    )
