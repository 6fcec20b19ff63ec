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

"""``domain delete --cascade``: one plan for the whole domain, the
refusals, the stages, and what one project's refusal keeps."""

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows import domain as domain_mod
from osc_cascade.workflows.cascade_options import CascadeOptions
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import UsersCloud
from tests.unit.fakes.run import zero_delays


@pytest.fixture
def cloud():
    with UsersCloud() as c:
        yield c


def customer(cloud, name):
    """A domain with three projects (one a child), two users with
    keypairs, a group and a role on the domain."""
    d = cloud.domain(name)
    top = scenarios.project(
        cloud, f'{name}-top', domain_id=d['id'], parent_id=d['id']
    )
    child = scenarios.project(
        cloud, f'{name}-child', domain_id=d['id'], parent_id=top['id']
    )
    other = scenarios.project(
        cloud, f'{name}-other', domain_id=d['id'], parent_id=d['id']
    )
    for project in (top, child, other):
        cloud.add(
            'networks',
            name=f'{project["name"]}-net',
            project_id=project['id'],
            tenant_id=project['id'],
            shared=False,
        )
    users = [cloud.user(f'{name}-u{n}', domain_id=d['id']) for n in (1, 2)]
    for user in users:
        cloud.keypair(user['id'], 'laptop')
    group = cloud.group(f'{name}-g', d['id'])
    cloud.domain_grant(d['id'], 'r-member', user=users[0]['id'])
    return {
        'domain': d,
        'projects': [top, child, other],
        'users': users,
        'group': group,
    }


def workflow(cloud, **options):
    return domain_mod.DomainCascade(
        cloud.connection(),
        CascadeOptions(**options),
        clock=FakeClock(),
        retry=zero_delays(),
    )


def test_one_plan_for_the_whole_domain(cloud):
    c = customer(cloud, 'acme')
    customer(cloud, 'twin')
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))
    whole = plan.whole()
    kinds = sorted(
        (s.target.kind, s.target.name)
        for s in whole.steps.values()
        if s.is_delete
    )
    assert ('identity.domain', 'acme') in kinds
    assert ('identity.group', 'acme-g') in kinds
    assert [k for k in kinds if k[0] == 'identity.project'] == [
        ('identity.project', 'acme-child'),
        ('identity.project', 'acme-other'),
        ('identity.project', 'acme-top'),
    ]
    assert [k for k in kinds if k[0] == 'identity.user'] == [
        ('identity.user', 'acme-u1'),
        ('identity.user', 'acme-u2'),
    ]
    assert len([k for k in kinds if k[0] == 'user.keypair']) == 2
    assert len([k for k in kinds if k[0] == 'network.network']) == 3
    assert [k for k in kinds if k[0] == domain_mod.GRANT]
    # nothing of the twin, the domain last, nothing changed
    assert not [k for k in kinds if k[1].startswith('twin')]
    stages = whole.stages()
    last = f'delete:identity.domain:{c["domain"]["id"]}'
    assert stages[last] == max(stages.values())
    assert cloud.changes == []
    assert plan.refused == {}


def test_a_users_keypair_is_deleted_with_the_user_not_also_kept(cloud):
    # a user of the domain with a role on one of its projects: the
    # project's plan reports the keypair as kept (it is the user's), while
    # the users' plan deletes it: one object, said once, as deleted
    c = customer(cloud, 'acme')
    for user in c['users']:
        cloud.add(
            'role_assignments',
            user={'id': user['id']},
            role={'id': 'member'},
            scope={'project': {'id': c['projects'][0]['id']}},
        )
    outsider = cloud.user('visitor', domain_id='default')
    cloud.keypair(outsider['id'], 'laptop')
    cloud.add(
        'role_assignments',
        user={'id': outsider['id']},
        role={'id': 'member'},
        scope={'project': {'id': c['projects'][0]['id']}},
    )
    wf = workflow(cloud)
    whole = wf.plan(wf.resolve('acme')).whole()
    rows = sorted(
        (s.action, s.target.kind, s.target.attrs.get('user_id', ''))
        for s in whole.steps.values()
        if s.target.kind in ('compute.keypair', 'user.keypair')
    )
    deleted = sorted(u['id'] for u in c['users'])
    assert [r for r in rows if r[1] == 'user.keypair'] == [
        ('delete', 'user.keypair', u) for u in deleted
    ]
    # the outsider's keypair is not the domain's: reported kept, as before
    assert [r for r in rows if r[1] == 'compute.keypair'] == [
        ('keep', 'compute.keypair', outsider['id'])
    ]
    # and so in the run, whose plan is made again after the drain
    outcome = wf.execute(wf.plan(wf.resolve('acme')))
    assert outcome.refused == {}
    ran = sorted(
        (r.step.action, r.step.target.kind, r.step.target.attrs['user_id'])
        for run in outcome.runs
        for r in run.results.values()
        if r.step.target.kind in ('compute.keypair', 'user.keypair')
    )
    assert ran == [('delete', 'user.keypair', u) for u in deleted] + [
        ('keep', 'compute.keypair', outsider['id'])
    ]
    assert cloud.exists('keypairs', f'{outsider["id"]}/laptop')


def test_the_run_deletes_it_all_and_not_the_twin(cloud):
    c = customer(cloud, 'acme')
    twin = customer(cloud, 'twin')
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))
    outcome = wf.execute(plan)
    assert outcome.refused == {}
    assert sorted(p.name for p in outcome.projects) == [
        'acme-child',
        'acme-other',
        'acme-top',
    ]
    for project in c['projects']:
        assert not cloud.exists('projects', project['id'])
        assert cloud.owned_by(project['id']) == []
    for user in c['users']:
        assert not cloud.exists('users', user['id'])
        assert not cloud.exists('keypairs', f'{user["id"]}/laptop')
    assert not cloud.exists('groups', c['group']['id'])
    assert not [
        a
        for a in cloud.all('role_assignments')
        if a['scope'].get('domain', {}).get('id') == c['domain']['id']
    ]
    # disabled first, left to OSC's delete
    domain = cloud.get('domains', c['domain']['id'])
    assert domain['enabled'] is False
    assert cloud.changes[0] == ('PATCH', f'/v3/domains/{c["domain"]["id"]}')
    # the twin is whole
    for project in twin['projects']:
        assert cloud.exists('projects', project['id'])
        assert cloud.get('projects', project['id'])['enabled'] is True
    for user in twin['users']:
        assert cloud.exists('keypairs', f'{user["id"]}/laptop')
    assert cloud.get('domains', twin['domain']['id'])['enabled'] is True


@pytest.mark.parametrize(
    'domain, message',
    [
        ({'id': 'default', 'name': 'Default'}, 'the default domain'),
        ({'options': {'immutable': True}}, r'protected \(marked immutable\)'),
    ],
)
def test_refusals(cloud, domain, message):
    made = cloud.domain(domain.pop('name', 'x'), **domain)
    with pytest.raises(CascadeError, match=message):
        workflow(cloud).resolve(made['id'])
    assert cloud.changes == []


def test_refuses_the_callers_own_domain(cloud, monkeypatch):
    made = cloud.domain('mine')
    wf = workflow(cloud)
    access = wf.conn.session.auth.get_access(wf.conn.session)
    monkeypatch.setattr(type(access), 'user_domain_id', made['id'])
    with pytest.raises(CascadeError, match='authenticated in'):
        wf.resolve('mine')


def test_a_refused_project_keeps_itself_its_parent_and_the_domain(cloud):
    c = customer(cloud, 'acme')
    top, child, other = c['projects']
    child['options'] = {'immutable': True}
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))
    assert set(plan.refused) == {
        f'project acme-child ({child["id"]})',
        f'project acme-top ({top["id"]})',
    }
    assert 'immutable' in plan.refused[f'project acme-child ({child["id"]})']
    whole = plan.whole()
    assert not [
        s for s in whole.steps.values() if s.target.kind == 'identity.domain'
    ]
    # the users, the group, the role stay with the domain, and say so
    staying = {
        s.target.kind
        for s in whole.steps.values()
        if s.params.get('reason') == domain_mod.STAYS
    }
    assert staying == {
        'identity.user',
        'user.keypair',
        'identity.group',
        domain_mod.GRANT,
    }
    assert not [
        s
        for s in whole.steps.values()
        if s.is_delete and (s.target.kind in staying)
    ]
    outcome = wf.execute(plan)
    # the other project went; the refused stay, whole, and the rest
    assert not cloud.exists('projects', other['id'])
    assert cloud.exists('projects', child['id'])
    assert cloud.exists('projects', top['id'])
    assert cloud.owned_by(child['id']) != []
    assert [p.name for p in outcome.projects] == ['acme-other']
    assert set(outcome.refused) == set(plan.refused)
    for user in c['users']:
        assert cloud.exists('keypairs', f'{user["id"]}/laptop')
    assert cloud.exists('groups', c['group']['id'])
    assert domain_mod.KEPT_WITH_DOMAIN in wf.notes


def test_a_user_of_the_identity_backend_is_kept(cloud):
    c = customer(cloud, 'acme')
    fed = cloud.user(
        'fed', domain_id=c['domain']['id'], federated=[{'idp_id': 'okta'}]
    )
    cloud.keypair(fed['id'], 'laptop')
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))
    [why] = [w for k, w in plan.refused.items() if fed['id'] in k]
    assert 'okta' in why and 'nothing of it is deleted' in why
    wf.execute(plan)
    assert cloud.exists('users', fed['id'])
    assert cloud.exists('keypairs', f'{fed["id"]}/laptop')
    # the projects go; the domain, and its other users, stay
    for project in c['projects']:
        assert not cloud.exists('projects', project['id'])
    assert cloud.exists('domains', c['domain']['id'])
    assert cloud.exists('users', c['users'][0]['id'])


def test_a_rerun_after_a_failure_finishes(cloud):
    c = customer(cloud, 'acme')
    cloud.faults.extend([('DELETE', r'/groups/', 500)] * 20)
    wf = workflow(cloud)
    with pytest.raises(CascadeError):
        wf.execute(wf.plan(wf.resolve('acme')))
    cloud.faults.clear()
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))  # a disabled domain is resolved
    assert [r.kind for r in plan.rest] == ['identity.group']
    wf.execute(plan)
    assert not cloud.exists('groups', c['group']['id'])


def test_a_project_made_during_the_run_keeps_the_domain(cloud):
    c = customer(cloud, 'acme')
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))
    late = scenarios.project(
        cloud,
        'late',
        domain_id=c['domain']['id'],
        parent_id=c['domain']['id'],
    )
    outcome = wf.execute(plan)
    assert outcome.refused == {
        f'project late ({late["id"]})': (
            'appeared during the run (not in the plan): run again'
        )
    }
    assert cloud.exists('projects', late['id'])
    assert cloud.exists('domains', c['domain']['id'])


def test_a_project_that_fails_in_the_run_keeps_itself_not_the_others(cloud):
    c = customer(cloud, 'acme')
    top, child, other = c['projects']
    net = next(
        n for n in cloud.all('networks') if n['project_id'] == other['id']
    )
    cloud.faults.extend([('DELETE', f'/networks/{net["id"]}', 500)] * 200)
    wf = workflow(cloud)
    plan = wf.plan(wf.resolve('acme'))
    assert plan.refused == {}
    outcome = wf.execute(plan)
    assert list(outcome.refused) == [f'project acme-other ({other["id"]})']
    assert not cloud.exists('projects', top['id'])
    assert not cloud.exists('projects', child['id'])
    assert cloud.exists('projects', other['id'])
    for user in c['users']:  # they stay with the domain
        assert cloud.exists('users', user['id'])
    assert cloud.exists('domains', c['domain']['id'])
