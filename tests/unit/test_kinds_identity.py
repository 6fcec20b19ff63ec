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

"""Keystone kinds: application credentials and projects."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import base, identity, registry
from osc_cascade.workflows.cascade import project_ref
from osc_cascade.workflows.projects import Projects
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.kinds import ref
from tests.unit.fakes.run import zero_delays

CRED, PROJECT = identity.ApplicationCredential.name, identity.Project.name


def assign(cloud, pid, user=None, group=None):
    actor = {'user': {'id': user}} if user else {'group': {'id': group}}
    return cloud.add(
        'role_assignments',
        role={'id': 'member'},
        scope={'project': {'id': pid}},
        **actor,
    )


def cred(cloud, user, pid, name='ci'):
    return cloud.add(
        'application_credentials', name=name, user_id=user, project_id=pid
    )


def test_application_credentials_are_found_through_role_assignments(
    cloud, conn
):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    assign(cloud, a, user='alice')
    assign(cloud, a, user='bob')
    assign(cloud, a, group='admins')  # a group holds no credential
    assign(cloud, b, user='carol')
    c1 = cred(cloud, 'alice', a, 'a1')
    c2 = cred(cloud, 'bob', a, 'b1')
    cred(cloud, 'alice', b, 'alice-on-b')  # bound to another project
    cred(cloud, 'carol', a, 'not-a-member-any-more')
    refs = list(identity.ApplicationCredential().list(conn, a))
    assert sorted((r.id, r.attrs['user_id'], r.project_id) for r in refs) == (
        sorted([(c1['id'], 'alice', a), (c2['id'], 'bob', a)])
    )
    calls = [p for m, p in cloud.requests]
    assert any(
        p.startswith('/v3/role_assignments')
        and f'scope.project.id={a}' in p
        and 'effective=True' in p
        for p in calls
    )
    # only the users found are asked, once each
    asked = sorted(p for p in calls if '/application_credentials' in p)
    assert asked == [
        '/v3/users/alice/application_credentials',
        '/v3/users/bob/application_credentials',
    ]


def test_a_user_whose_credentials_are_private_is_passed_over(cloud, conn):
    # Keystone's policy can keep a service user's credentials from admins
    a = scenarios.project(cloud, 'A')['id']
    assign(cloud, a, user='alice')
    assign(cloud, a, user='nova')
    mine = cred(cloud, 'alice', a)
    cred(cloud, 'nova', a, 'private')
    cloud.forbidden.add(r'/v3/users/nova/application_credentials')
    refs = list(identity.ApplicationCredential().list(conn, a))
    assert [r.id for r in refs] == [mine['id']]


def test_application_credential_delete_goes_through_its_user(cloud, conn):
    a = scenarios.project(cloud, 'A')['id']
    assign(cloud, a, user='alice')
    c = cred(cloud, 'alice', a)
    [found] = identity.ApplicationCredential().list(conn, a)
    kind = identity.ApplicationCredential()
    assert kind.synchronous_delete
    kind.delete(conn, found)
    assert cloud.changes == [
        ('DELETE', f'/v3/users/alice/application_credentials/{c["id"]}')
    ]
    with pytest.raises(sdk_exc.NotFoundException):
        kind.delete(conn, found)


def test_project_goes_after_everything_it_owns():
    proj = ref('p1', PROJECT, project_id='p1')
    owned = [
        ref('s1', 'compute.server'),
        ref('v1', 'block_storage.volume'),
        ref('c1', CRED),
    ]
    edges = list(identity.Project().relations(proj, Inventory([proj, *owned])))
    assert sorted((e.first.id, e.then.id) for e in edges) == sorted(
        (f'delete:{r.kind}:{r.id}', f'delete:{PROJECT}:p1') for r in owned
    )


def test_child_projects_go_before_their_parent(cloud, conn):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'child', parent_id=parent['id'])
    grandchild = scenarios.project(cloud, 'grandchild', parent_id=child['id'])
    projects = [
        project_ref(conn.identity.get_project(p['id']))
        for p in (parent, child, grandchild)
    ]
    assert projects[1].attrs == {
        'parent_id': parent['id'],
        'domain_id': 'default',
    }
    server = ref('s', 'compute.server', project_id=child['id'])
    plan = build_plan(
        Inventory([*projects, server]),
        kinds_mod.build(),
        [{'id': p.id, 'name': p.name} for p in projects],
    )
    assert plan.order() == [
        'delete:compute.server:s',
        f'delete:{PROJECT}:{grandchild["id"]}',
        f'delete:{PROJECT}:{child["id"]}',
        f'delete:{PROJECT}:{parent["id"]}',
    ]
    assert (
        f'delete:{PROJECT}:{grandchild["id"]}',
        f'delete:{PROJECT}:{parent["id"]}',
    ) not in plan.edges


def test_a_kept_resource_holds_the_project_back():
    proj = ref('p1', PROJECT, project_id='p1')
    img = ref('i1', 'image.image', project_id='p1', visibility='public')
    plan = build_plan(
        Inventory([proj, img]), kinds_mod.build(), [{'id': 'p1', 'name': 'A'}]
    )
    assert plan.edges == {('keep:image.image:i1', f'delete:{PROJECT}:p1')}


def test_project_delete_call(cloud, conn):
    p = scenarios.project(cloud, 'A')
    identity.Project().delete(
        conn, project_ref(conn.identity.get_project(p['id']))
    )
    assert cloud.changes == [('DELETE', f'/v3/projects/{p["id"]}')]
    assert not cloud.exists('projects', p['id'])


def test_the_project_kind_is_not_discovered():
    # the cascade adds the projects itself; discovery skips the kind
    assert kinds_mod.PROJECT_KIND == PROJECT
    with pytest.raises(NotImplementedError):
        identity.Project().list(None, 'p1')


def test_registry_builds_every_kind_with_options():
    kinds = kinds_mod.build(delete_shared_images=True)
    assert set(kinds) == {
        name
        for name, cls in registry.CLASSES.items()
        if cls.scope == base.PROJECT
    }
    assert kinds['image.image'].options == {'delete_shared_images': True}
    for name, kind in kinds.items():
        assert kind.name == name and '.' in name
        assert kind.service_type
        assert kind.options == {'delete_shared_images': True}


def test_a_kind_name_registered_twice_is_refused():
    # names are unique: none hides another
    class Twin(identity.Project):
        pass

    with pytest.raises(ValueError, match=r'identity\.project'):
        registry.register(Twin)


def test_the_placement_kinds_are_registered_for_the_service_purge():
    assert set(kinds_mod.build(base.SERVICE)) == {
        'placement.allocation',
        'placement.resource_provider',
        'compute.service',
    }
    assert not set(kinds_mod.build(base.SERVICE)) & set(kinds_mod.build())


def test_each_kind_declares_the_heat_types_it_deletes():
    assert kinds_mod.for_heat_type('OS::Neutron::Net') == 'network.network'
    assert kinds_mod.for_heat_type('OS::Heat::Stack') == 'orchestration.stack'
    assert kinds_mod.for_heat_type('OS::Heat::RandomString') == ''


# -- Keystone's list_limit ---------------------------------------------------

TRUNCATED = "was truncated by Keystone's list_limit"


def test_a_truncated_role_assignment_listing_is_refused(cloud, conn):
    a = scenarios.project(cloud, 'A')['id']
    for user in ('alice', 'bob', 'carol'):
        assign(cloud, a, user=user)
        cred(cloud, user, a)
    cloud.list_limits['role_assignments'] = 2
    with pytest.raises(CascadeError) as refused:
        identity.ApplicationCredential().list(conn, a)
    assert str(refused.value).startswith(
        f'listing the users with a role on project {a} {TRUNCATED} '
        '(2 shown), so nothing was changed'
    )
    # below the limit, the same listing is complete
    cloud.list_limits['role_assignments'] = 4
    assert len(identity.ApplicationCredential().list(conn, a)) == 3


def test_the_cascade_refuses_on_a_truncated_role_assignment_listing(
    cloud, osc
):
    a = scenarios.project(cloud, 'A')['id']
    for user in ('alice', 'bob'):
        assign(cloud, a, user=user)
    cloud.list_limits['role_assignments'] = 2  # Keystone: >= is truncated
    result = osc('project', 'delete', '--cascade', '--yes', a)
    assert result.code == 1
    assert (
        f'listing the users with a role on project {a} {TRUNCATED}'
        in result.stderr.strip().splitlines()[-1]
    )
    assert cloud.changes == []
    assert cloud.exists('projects', a)


def test_a_truncated_credential_listing_is_refused(cloud, conn):
    a = scenarios.project(cloud, 'A')['id']
    assign(cloud, a, user='alice')
    cred(cloud, 'alice', a, 'one')
    cred(cloud, 'alice', a, 'two')
    cloud.list_limits['application_credentials'] = 2
    with pytest.raises(CascadeError, match=TRUNCATED):
        identity.ApplicationCredential().list(conn, a)


def test_a_truncated_user_listing_is_asked_again_domain_by_domain(cloud, conn):
    cloud.add('domains', id='default', name='Default')
    cloud.add('domains', id='other', name='Other')
    gone = 'f' * 32
    for user, domain in (
        ('u1', 'default'),
        ('u2', 'default'),
        ('u3', 'other'),
        ('u4', 'other'),
    ):
        cloud.add('users', id=user, name=user, domain_id=domain)
        cred(cloud, user, gone, f'{user}-cred')
    cloud.list_limits['users'] = 3
    refs = identity.ApplicationCredential().list(conn, None)
    assert sorted(r.attrs['user_id'] for r in refs) == [
        'u1',
        'u2',
        'u3',
        'u4',
    ]
    asked = [p for m, p in cloud.requests if p.startswith('/v3/users?')]
    assert sorted(asked) == [
        '/v3/users?domain_id=default',
        '/v3/users?domain_id=other',
    ]
    # a domain whose own listing is cut still cannot be completed
    cloud.add('users', id='u5', name='u5', domain_id='other')
    with pytest.raises(CascadeError) as refused:
        identity.ApplicationCredential().list(conn, None)
    assert str(refused.value).startswith(
        f'listing the users of domain other {TRUNCATED} (3 shown)'
    )


def test_a_truncated_child_listing_is_completed_from_subtree_as_ids(
    cloud, conn
):
    parent = scenarios.project(cloud, 'parent')
    children = [
        scenarios.project(cloud, f'child-{i}', parent_id=parent['id'])
        for i in range(3)
    ]
    grandchild = scenarios.project(
        cloud, 'grandchild', parent_id=children[2]['id']
    )
    projects = Projects(conn, retry=zero_delays(), clock=FakeClock())
    top = keystone.project_or_none(conn, parent['id'])

    complete = projects.subtree(top)
    assert not any('subtree_as_ids' in p for _m, p in cloud.requests)

    cloud.list_limits['projects'] = 2
    cut = projects.subtree(top)
    expected = {c['id'] for c in children} | {grandchild['id']}
    assert {p.id for p in cut} == {p.id for p in complete} == expected
    assert {p.id: p.parent_id for p in cut}[grandchild['id']] == (
        children[2]['id']
    )
    assert (
        'GET',
        f'/v3/projects/{parent["id"]}?subtree_as_ids=',
    ) in cloud.requests


# -- users: shown, never deleted ------------------------------------------


HOME, STACK_USER = (
    identity.UserDefaultProject.name,
    identity.StackDomainUser.name,
)


def stack_user_project(cloud, pid, stack_id, domain='heat', **extra):
    """What Heat makes for a stack's users: a project in its stack-user
    domain, named after the owner and the stack (cut at 64)."""
    return cloud.add(
        'projects',
        name=f'{pid}-{stack_id}'[:64],
        description=identity.STACK_USER_PROJECT,
        domain_id=domain,
        **extra,
    )


def stack_user(cloud, user_id, name, home):
    """A user Heat made in its stack-user domain for a stack whose
    project is ``home``."""
    return cloud.add(
        'users',
        id=user_id,
        name=name,
        domain_id='heat',
        default_project_id=home['id'],
    )


def test_users_whose_default_project_it_is_are_shown_and_kept(cloud, conn):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    cloud.add('users', id='ann', name='ann', default_project_id=a)
    cloud.add('users', id='bob', name='bob', default_project_id=b)
    cloud.add('users', id='cid', name='cid')
    kind = identity.UserDefaultProject()
    refs = kind.list(conn, a)
    assert [(r.id, r.name, r.project_id) for r in refs] == [('ann', 'ann', a)]
    step = kind.primary_step(refs[0])
    assert step.is_report_only
    assert 'the user is not the project' in step.params['reason']
    assert kind.list(conn, None) == []  # a user is nobody's orphan


def test_the_users_are_listed_once_for_every_project(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    cloud.add('users', id='ann', name='ann', default_project_id=a)
    cloud.add('users', id='bob', name='bob', default_project_id=b)
    conn = cloud.connection()
    kind = kinds_mod.build()[HOME]
    assert [r.id for r in kind.list(conn, a)] == ['ann']
    assert [r.id for r in kind.list(conn, b)] == ['bob']
    asked = [p for m, p in cloud.requests if p.startswith('/v3/users')]
    assert asked == ['/v3/users']


def test_a_user_listing_cut_even_per_domain_is_reported_as_far_as_it_goes(
    cloud, conn, monkeypatch
):
    warned = []
    monkeypatch.setattr(
        identity.LOG, 'warning', lambda msg, *args: warned.append(msg % args)
    )
    a = scenarios.project(cloud, 'A')['id']
    cloud.add('domains', id='default', name='Default')
    for i in range(3):
        cloud.add(
            'users',
            id=f'u{i}',
            name=f'u{i}',
            domain_id='default',
            default_project_id=a,
        )
    cloud.list_limits['users'] = 2
    refs = identity.UserDefaultProject().list(conn, a)
    assert [r.id for r in refs] == ['u0', 'u1']
    assert warned == [
        "listing the users of domain default was truncated by Keystone's "
        'list_limit (2 shown): the users it leaves out are not reported'
    ]


def test_heats_stack_domain_users_of_the_projects_stacks_are_shown(
    cloud, conn
):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    mine = stack_user_project(cloud, a, 'a' * 8 + '-' + 'b' * 27)
    theirs = stack_user_project(cloud, b, 'c' * 36)
    # a project named like Heat's but not Heat's: not a stack's
    lookalike = cloud.add(
        'projects', name=f'{a}-mine', description='ours', domain_id='heat'
    )
    stack_user(cloud, 'w1', 'wait', mine)
    stack_user(cloud, 'w2', 'other', theirs)
    stack_user(cloud, 'w3', 'look', lookalike)
    kind = identity.StackDomainUser()
    refs = kind.list(conn, a)
    assert [(r.id, r.project_id) for r in refs] == [('w1', a)]
    assert refs[0].attrs['stack_project'] == mine['name']
    assert len(mine['name']) == 64
    step = kind.primary_step(refs[0])
    assert step.is_report_only
    assert 'Heat deletes it with the stack' in step.params['reason']
    listed = [p for m, p in cloud.requests if p.startswith('/v3/')]
    assert any(
        p.startswith(f'/v3/projects?name__istartswith={a}-') for p in listed
    ), listed
    assert '/v3/users?domain_id=heat' in listed


def test_users_are_in_the_plan_but_keep_nothing_alive(cloud, osc):
    a = scenarios.project(cloud, 'A')['id']
    cloud.add('users', id='ann', name='ann', default_project_id=a)
    stack = stack_user_project(cloud, a, 'd' * 36)
    stack_user(cloud, 'w1', 'wait', stack)
    result = osc('project', 'delete', '--cascade', '--yes', a, '-f', 'json')
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', a)
    assert cloud.exists('users', 'ann') and cloud.exists('users', 'w1')
    assert not [p for m, p in cloud.changes if '/users' in p]


def warnings_of(monkeypatch):
    said = []
    monkeypatch.setattr(
        identity.LOG, 'warning', lambda msg, *args: said.append(msg % args)
    )
    return said


def test_a_stack_project_past_keystones_list_limit_is_found(
    cloud, conn, monkeypatch
):
    # Keystone 30.0.0 cuts a project listing at its list_limit, in ID
    # order, before it applies a case-sensitive name__startswith (its
    # controller's filter): the stack's project, not among the cut's
    # first, was missed, its user with it (seen on the minicloud: an
    # empty answer, "truncated"). A case-insensitive prefix is its SQL
    # filter, applied before the cut.
    a = scenarios.project(cloud, 'A')['id']
    for n in range(3):
        cloud.add('projects', id=f'0{n}' + 'e' * 30, name=f'low-{n}')
    home = stack_user_project(cloud, a, 'd' * 36, id='f' * 32)
    stack_user(cloud, 'w1', 'wait', home)
    cloud.pages.add('projects')
    cloud.list_limits['projects'] = 2
    said = warnings_of(monkeypatch)
    refs = identity.StackDomainUser().list(conn, a)
    assert [r.id for r in refs] == ['w1']
    assert said == []


def test_a_truncated_stack_project_listing_is_paged_to_its_end(
    cloud, conn, monkeypatch
):
    a = scenarios.project(cloud, 'A')['id']
    homes = [stack_user_project(cloud, a, str(n) * 36) for n in range(3)]
    for n, home in enumerate(homes):
        stack_user(cloud, f'w{n}', f'wait-{n}', home)
    cloud.pages.add('projects')
    cloud.list_limits['projects'] = 2
    cloud.max_db_limit = 2
    said = warnings_of(monkeypatch)
    refs = identity.StackDomainUser().list(conn, a)
    assert sorted(r.id for r in refs) == ['w0', 'w1', 'w2']
    assert said == []


def test_a_truncated_stack_project_listing_is_a_warning(
    cloud, conn, monkeypatch
):
    # a Keystone that does not page: what its list_limit left out is
    # not reported, and it says so
    a = scenarios.project(cloud, 'A')['id']
    for n in range(3):
        stack_user_project(cloud, a, str(n) * 36)
    cloud.list_limits['projects'] = 2
    said = warnings_of(monkeypatch)
    identity.StackDomainUser().list(conn, a)
    assert [w.split(' of project')[0] for w in said] == [
        "listing Heat's stack-user projects"
    ]


def test_credentials_of_a_deleted_project_are_found_by_asking_every_user(
    cloud, conn
):
    # the settle step lists what a deleted project still has: Keystone
    # then answers 404 to its role assignments (seen on the minicloud)
    gone = 'f' * 32
    cloud.add('users', id='dave', name='dave', domain_id='default')
    left = cred(cloud, 'dave', gone, 'left-behind')
    cred(cloud, 'dave', 'e' * 32, 'elsewhere')
    cloud.faults.append(('GET', r'/role_assignments', 404))
    refs = list(identity.ApplicationCredential().list(conn, gone))
    assert [(r.id, r.attrs['user_id']) for r in refs] == [(left['id'], 'dave')]
