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

"""The cascade workflow (osc_cascade.workflows.cascade) without the command layer."""

import pytest

from osc_cascade.engine import resource
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.workflows import cascade, cascade_messages
from osc_cascade.workflows.cascade import CascadeOptions, ProjectCascade
from osc_cascade.workflows.projects import Projects, leaves_first
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import ADMIN_PROJECT, step_id
from tests.unit.fakes.kinds import make_plan


def resolve_project(conn, name_or_id, domain=None):
    projects = Projects(
        conn, retry=RetryPolicy(max_attempts=1), clock=FakeClock()
    )
    return projects.resolve(name_or_id, domain)


def cascade_of(conn, **options):
    return ProjectCascade(conn, CascadeOptions(**options), clock=FakeClock())


def prepare(conn, name, **options):
    pc = cascade_of(conn, **options)
    targets = pc.resolve([name])
    return pc, targets


# -- resolving -------------------------------------------------------------


def test_resolve_by_id_and_by_name(cloud, conn):
    p = scenarios.project(cloud, 'A')
    assert resolve_project(conn, p['id']).id == p['id']
    assert resolve_project(conn, 'A').id == p['id']


def test_resolve_unknown(cloud, conn):
    with pytest.raises(
        CascadeError, match="No project with a name or ID of 'nope' exists"
    ):
        resolve_project(conn, 'nope')


def test_resolve_ambiguous_lists_candidates(cloud, conn):
    cloud.add('domains', id='d2', name='second', enabled=True)
    p1 = scenarios.project(cloud, 'dup')
    p2 = scenarios.project(cloud, 'dup', domain_id='d2')
    with pytest.raises(CascadeError) as err:
        resolve_project(conn, 'dup')
    message = str(err.value)
    assert f'{p1["id"]} (domain default)' in message
    assert f'{p2["id"]} (domain d2)' in message
    assert '--domain' in message
    assert resolve_project(conn, 'dup', 'second').id == p2['id']
    assert resolve_project(conn, 'dup', 'd2').id == p2['id']


def test_resolve_id_in_another_domain_than_asked(cloud, conn):
    cloud.add('domains', id='d2', name='second', enabled=True)
    p = scenarios.project(cloud, 'A')
    with pytest.raises(CascadeError, match="in domain 'second'"):
        resolve_project(conn, p['id'], 'second')


def test_resolve_unknown_domain(cloud, conn):
    scenarios.project(cloud, 'A')
    with pytest.raises(CascadeError, match=r"No domain .* 'nodom'"):
        resolve_project(conn, 'A', 'nodom')


def test_resolve_refused_by_keystone(cloud, conn):
    cloud.forbidden.add(r'/v3/projects')
    with pytest.raises(CascadeError, match=r'HTTP 403.*admin role'):
        resolve_project(conn, 'A')


# -- safety checks ---------------------------------------------------------


def test_the_callers_own_project_is_refused(cloud, conn):
    with pytest.raises(CascadeError, match='project you are authenticated'):
        prepare(conn, ADMIN_PROJECT)


def test_an_immutable_project_is_refused(cloud, conn):
    scenarios.project(cloud, 'frozen', options={'immutable': True})
    with pytest.raises(CascadeError, match='marked immutable'):
        prepare(conn, 'frozen')


def test_a_domain_is_refused(cloud, conn):
    scenarios.project(cloud, 'dom', is_domain=True)
    with pytest.raises(CascadeError, match='it is a domain'):
        prepare(conn, 'dom')


def test_children_are_refused_without_recursive(cloud, conn):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'kid', parent_id=parent['id'])
    with pytest.raises(CascadeError) as err:
        prepare(conn, 'parent')
    assert f'kid ({child["id"]})' in str(err.value)
    assert '--recursive' in str(err.value)


def test_recursive_targets_the_whole_subtree(cloud, conn):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'kid', parent_id=parent['id'])
    grandchild = scenarios.project(cloud, 'grandkid', parent_id=child['id'])
    scenarios.project(cloud, 'unrelated')
    _pc, targets = prepare(conn, 'parent', recursive=True)
    assert sorted(t.id for t in targets) == sorted(
        [parent['id'], child['id'], grandchild['id']]
    )
    assert {t.kind for t in targets} == {'identity.project'}


def test_an_immutable_child_is_refused_too(cloud, conn):
    parent = scenarios.project(cloud, 'parent')
    scenarios.project(
        cloud, 'kid', parent_id=parent['id'], options={'immutable': True}
    )
    with pytest.raises(CascadeError, match=r'kid .* immutable'):
        prepare(conn, 'parent', recursive=True)


# -- plan and execution ------------------------------------------------------


def test_plan_holds_the_projects_and_everything_they_own(
    cloud, conn, external
):
    a = scenarios.full_project(cloud, 'A', external)
    pc, targets = prepare(conn, 'A')
    plan = pc.plan(targets)
    assert plan.projects == [{'id': a['project']['id'], 'name': 'A'}]
    assert plan.order()[-1] == f'delete:identity.project:{a["project"]["id"]}'
    assert cloud.changes == []


def test_execute_empties_the_project_and_leaves_its_deletion_to_osc(
    cloud, conn, external
):
    a = scenarios.full_project(cloud, 'A', external)
    pid = a['project']['id']
    pc, targets = prepare(conn, 'A')
    outcome = pc.execute(pc.plan(targets), targets)
    assert cloud.owned_by(pid) == []
    # the project is disabled, empty and still there: OSC deletes it
    assert cloud.get('projects', pid)['enabled'] is False
    assert [t.id for t in outcome.empty_projects] == [pid]
    assert outcome.deleted_children == []
    assert len(outcome.runs) == 1
    assert {r.outcome for r in outcome.runs[0].results.values()} == {DONE}
    # disabling came first
    assert cloud.changes[0] == ('PATCH', f'/v3/projects/{pid}')


# -- ownership at the moment of deletion (the plan was made earlier) ------


def test_a_volume_given_to_another_project_after_the_plan_is_kept(cloud, conn):
    pid = scenarios.project(cloud, 'A')['id']
    other = scenarios.project(cloud, 'B')['id']
    mine = scenarios.volume(cloud, pid, 'mine')
    given = scenarios.volume(cloud, pid, 'given')
    events = []
    pc, targets = prepare(conn, 'A')
    pc.on_event = events.append
    plan = pc.plan(targets)
    assert step_id('delete', 'block_storage.volume', given['id']) in plan.steps
    # a transfer accepted between the plan and the run
    given['os-vol-tenant-attr:tenant_id'] = other

    outcome = pc.execute(plan, targets)

    assert cloud.exists('volumes', given['id'])
    assert not cloud.exists('volumes', mine['id'])
    assert [t.id for t in outcome.empty_projects] == [pid]
    [kept] = [e for e in events if e.kind == 'kept']
    assert kept.step.target.id == given['id']
    assert kept.message == f'owner is now {other}: kept, not in the run'


def test_a_planned_resource_gone_before_the_run_is_reported_gone(cloud, conn):
    pid = scenarios.project(cloud, 'A')['id']
    vol = scenarios.volume(cloud, pid)
    events = []
    pc, targets = prepare(conn, 'A')
    pc.on_event = events.append
    plan = pc.plan(targets)
    cloud._remove('volumes', vol['id'])
    pc.execute(plan, targets)
    assert [e.message for e in events if e.kind == 'kept'] == [
        'it is gone: kept, not in the run'
    ]
    assert not [p for m, p in cloud.changes if vol['id'] in p]


def test_a_resource_the_preview_missed_stops_the_run_and_keeps_the_project(
    cloud, conn
):
    pid = scenarios.project(cloud, 'A')['id']
    shown = scenarios.volume(cloud, pid, 'shown')
    pc, targets = prepare(conn, 'A')
    plan = pc.plan(targets)
    # made before the drain, but not in the plan that was shown (the
    # preview missed it, or it came while the prompt waited)
    missed = scenarios.volume(cloud, pid, 'missed')

    with pytest.raises(CascadeError) as err:
        pc.execute(plan, targets)

    assert 'the plan did not show' in str(err.value)
    assert f'block_storage.volume missed ({missed["id"]})' in str(err.value)
    # drained (the drain record, then the project, are written), nothing
    # deleted
    assert {m for m, _ in cloud.changes} == {'PATCH'}
    assert {p for _, p in cloud.changes} <= {
        f'/v3/projects/{pid}',
        # the fake Nova and Cinder take the quota freeze
        f'/v2.1/os-quota-sets/{pid}',
        f'/v3/os-quota-sets/{pid}',
    }
    assert cloud.exists('volumes', shown['id'])
    assert cloud.exists('volumes', missed['id'])


def test_what_must_be_kept_after_the_drain_stops_the_run_drained(cloud, conn):
    """The plan after the drain is made again: a volume attached to
    another project's server since the preview must now be kept, so
    nothing is deleted and the project stays drained."""
    pid = scenarios.project(cloud, 'A')['id']
    other = scenarios.project(cloud, 'B')['id']
    lent = scenarios.volume(cloud, pid, 'lent')
    mine = scenarios.volume(cloud, pid, 'mine')
    pc, targets = prepare(conn, 'A')
    plan = pc.plan(targets)
    assert not plan.kept()
    # an admin attaches A's volume to B's server after the preview
    scenarios.attach(cloud, lent, scenarios.server(cloud, other, 'b-vm'))

    with pytest.raises(CascadeError) as err:
        pc.execute(plan, targets)

    assert str(err.value) == cascade_messages.kept_message(
        pc.plan(targets).kept(), drained=True
    )
    assert f'lent ({lent["id"]})' in str(err.value)
    assert not [m for m, _ in cloud.changes if m == 'DELETE']
    assert cloud.exists('volumes', mine['id'])
    assert cloud.exists('projects', pid)
    assert cloud.get('projects', pid)['enabled'] is False


def test_a_port_plugged_into_another_projects_server_since_is_kept(
    cloud, conn
):
    """The port is read again before its delete: an admin made it the NIC
    of another project's server after the plan, so it is kept (the guest
    keeps its network) and the project is not deleted."""
    pid = scenarios.project(cloud, 'A')['id']
    other = scenarios.project(cloud, 'B')['id']
    net, subnet = scenarios.network(cloud, pid)
    spare = scenarios.port(cloud, pid, net, subnet, 'spare')
    guest = scenarios.server(cloud, other, 'b-vm')
    pc, targets = prepare(conn, 'A')
    plan = pc.plan(targets)
    assert step_id('delete', 'network.port', spare['id']) in plan.steps
    # the shown plan is run; at the port's turn it is B's guest's NIC
    pc.drain(targets)
    spare.update(device_id=guest['id'], device_owner='compute:nova')
    result = pc.run_round(cascade.without_projects(plan))

    [kept] = [r for r in result.results.values() if r.outcome == 'kept']
    assert kept.step.target.id == spare['id']
    assert kept.error == (
        f'NIC of server {guest["id"]} of project {other} since the plan: '
        'deleting it would take that guest off its network'
    )
    assert cloud.exists('ports', spare['id'])
    assert not [p for m, p in cloud.changes if spare['id'] in p]


def test_execute_refuses_kept_resources_before_any_change(cloud, conn):
    p = scenarios.project(cloud, 'A')
    scenarios.image(cloud, p['id'], 'golden', visibility='public')
    scenarios.volume(cloud, p['id'])
    pc, targets = prepare(conn, 'A')
    plan = pc.plan(targets)
    with pytest.raises(CascadeError) as err:
        pc.execute(plan, targets)
    assert 'Nothing was changed' in str(err.value)
    assert 'public image' in str(err.value)
    assert '--delete-shared ' in str(err.value)
    assert cloud.changes == []


def test_drain_disables_leaves_first(cloud, conn):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'kid', parent_id=parent['id'])
    grandchild = scenarios.project(cloud, 'grandkid', parent_id=child['id'])
    pc, targets = prepare(conn, 'parent', recursive=True)
    pc.drain(targets)
    drained = [p for m, p in cloud.changes if p.startswith('/v3/projects/')]
    # each project's drain (its record written, then it is disabled) is
    # done before its parent's starts
    assert list(dict.fromkeys(drained)) == [
        f'/v3/projects/{p["id"]}' for p in (grandchild, child, parent)
    ]
    assert drained == sorted(drained, key=list(dict.fromkeys(drained)).index)
    assert all(not p['enabled'] for p in (parent, child, grandchild))


def test_recursive_execute_deletes_children_leaves_first(cloud, conn):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'kid', parent_id=parent['id'])
    grandchild = scenarios.project(cloud, 'grandkid', parent_id=child['id'])
    vol = scenarios.volume(cloud, grandchild['id'])
    pc, targets = prepare(conn, 'parent', recursive=True)
    outcome = pc.execute(pc.plan(targets), targets)
    assert not cloud.exists('volumes', vol['id'])
    assert [p for p in cloud.deleted_order() if '/projects/' in p] == [
        f'/v3/projects/{grandchild["id"]}',
        f'/v3/projects/{child["id"]}',
    ]
    assert cloud.exists('projects', parent['id'])
    assert [t.id for t in outcome.empty_projects] == [parent['id']]
    assert sorted(t.id for t in outcome.deleted_children) == sorted(
        [child['id'], grandchild['id']]
    )


class _Reappearing(FakeCloud):
    """Someone creates a volume in the project while its server goes."""

    def __init__(self, project_id='', times=1, **kw):
        super().__init__(**kw)
        self.project_id = project_id
        self.times = times
        self.created = []

    def _compute(self, method, path, query, body):
        if method == 'DELETE' and self.times:
            self.times -= 1
            self.created.append(
                scenarios.volume(self, self.project_id, 'late')['id']
            )
        return super()._compute(method, path, query, body)


def test_resources_that_appear_during_the_run_are_caught_by_verification():
    with _Reappearing() as cloud:
        p = scenarios.project(cloud, 'A')
        cloud.project_id = p['id']
        scenarios.server(cloud, p['id'])
        conn = cloud.connection()
        pc, targets = prepare(conn, 'A')
        outcome = pc.execute(pc.plan(targets), targets)
        assert len(cloud.created) == 1
        assert not cloud.exists('volumes', cloud.created[0])
        assert cloud.owned_by(p['id']) == []
        assert len(outcome.runs) == 2
        [late] = outcome.runs[1].results.values()
        assert late.step.target.id == cloud.created[0]


class _Hydra(_Reappearing):
    """Every volume deleted comes back as a new one."""

    def _block_storage(self, method, path, query, body):
        if method == 'DELETE':
            self.created.append(
                scenarios.volume(self, self.project_id, 'again')['id']
            )
        return super()._block_storage(method, path, query, body)


def test_what_keeps_coming_back_is_a_leftover_error():
    with _Hydra(times=0) as cloud:
        p = scenarios.project(cloud, 'A')
        cloud.project_id = p['id']
        scenarios.volume(cloud, p['id'])
        conn = cloud.connection()
        pc, targets = prepare(conn, 'A', verify_rounds=2)
        with pytest.raises(CascadeError, match='were not deleted') as err:
            pc.execute(pc.plan(targets), targets)
    # the plan, then two verification rounds, and no more
    assert len(cloud.created) == 3
    assert 'again' in str(err.value)
    assert cloud.exists('projects', p['id'])


def test_leftovers_are_listed_with_why_they_failed(cloud, conn):
    p = scenarios.project(cloud, 'A')
    vol = scenarios.volume(cloud, p['id'], 'stubborn')
    cloud.faults += [('DELETE', f'/volumes/{vol["id"]}', 400)] * 20
    pc, targets = prepare(conn, 'A', verify_rounds=2)
    with pytest.raises(CascadeError) as err:
        pc.execute(pc.plan(targets), targets)
    message = str(err.value)
    assert message.startswith(
        'The projects were not deleted: they still own 1 resource(s): '
    )
    assert f'block_storage.volume stubborn ({vol["id"]})' in message
    assert 'injected fault' in message
    # three rounds, one attempt each (400 is not worth retrying)
    assert (
        len(
            [
                c
                for c in cloud.changes
                if c[0] == 'DELETE' and '/volumes/' in c[1]
            ]
        )
        == 3
    )
    assert not any(
        '/projects/' in c[1] and c[0] == 'DELETE' for c in cloud.changes
    )


# -- helpers -----------------------------------------------------------------


def test_without_projects_drops_project_steps_and_their_edges():
    proj = ResourceRef('identity.project', 'p1', project_id='p1')
    plan = make_plan(
        ['a', resource.delete(proj)], [('a', 'delete:identity.project:p1')]
    )
    plan.soft_edges = set(plan.edges)
    rest = cascade.without_projects(plan)
    assert list(rest.steps) == ['delete:test.thing:a']
    assert rest.edges == set() and rest.soft_edges == set()
    assert isinstance(rest, Plan)
    # the original is untouched
    assert len(plan.steps) == 2


def test_leaves_first_orders_by_depth():
    refs = [
        ResourceRef(
            'identity.project',
            i,
            project_id=i,
            attrs={'parent_id': parent} if parent else {},
        )
        for i, parent in (
            ('root', None),
            ('a', 'root'),
            ('b', 'a'),
            ('c', 'root'),
        )
    ]
    order = [r.id for r in leaves_first(refs)]
    assert order.index('b') < order.index('a') < order.index('root')
    assert order.index('c') < order.index('root')
    assert order[0] == 'b'


def test_the_refusal_suggests_delete_shared_only_where_it_would_help():
    lent = resource.keep(ResourceRef('block_storage.volume', 'v'), 'lent')
    public = resource.keep(
        ResourceRef('workflow.workflow', 'w'), 'public', shared=True
    )
    assert '--delete-shared' not in cascade_messages.kept_message(
        [lent], drained=False
    )
    assert 'Pass --delete-shared' in cascade_messages.kept_message(
        [lent, public], drained=True
    )
