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

"""The cascade without cloud admin (``workflows.scoped``, issue #20): a
domain manager through a role it gives itself for the run, a member that
empties its project and keeps it, and the refusals, on the fake cloud's
non-admin tokens (``fakes.scoped``)."""

import json
from unittest import mock

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows import (
    after_delete,
    assignments,
    drain_record,
    scoped,
)
from osc_cascade.workflows.cascade import CascadeOptions
from tests.unit import scenarios
from tests.unit.fakes.run import scoped_cascade
from tests.unit.fakes.scoped import ScopedCloud

DOMAIN = 'dom-managed'


@pytest.fixture
def cloud():
    with ScopedCloud() as c:
        yield c


@pytest.fixture
def world(cloud):
    """Project target of domain dom-managed with a routed server and its
    attached volume, its member alice, and the domain's manager."""
    project = scenarios.project(
        cloud, 'target', domain_id=DOMAIN, parent_id=DOMAIN
    )
    pid = project['id']
    manager = cloud.add_user('managed-manager', DOMAIN)
    cloud.assign(manager, 'manager', domain=DOMAIN)
    alice = cloud.add_user('alice', DOMAIN)
    cloud.assign(alice, 'member', project=project)
    net, subnet = scenarios.network(cloud, pid)
    vm = scenarios.server(cloud, pid, net=net, subnet=subnet)
    vol = scenarios.volume(cloud, pid, attach_to=vm)
    return {
        'pid': pid,
        'manager': manager,
        'alice': alice,
        'vm': vm,
        'vol': vol,
    }


def as_manager(cloud, world):
    return cloud.connection_as(world['manager'], domain_id=DOMAIN)


def record_of(cloud, pid):
    text = cloud.get('projects', pid).get(drain_record.RECORD)
    return json.loads(text) if text else None


def test_a_domain_manager_cascades_through_a_role_it_gives_back(cloud, world):
    pid, manager = world['pid'], world['manager']
    wf = scoped_cascade(as_manager(cloud, world))
    targets = wf.resolve(['target'])
    plan = wf.plan(targets)

    # the role given for the run is recorded on the project, then given
    assert (
        record_of(cloud, pid)[assignments.TEMPORARY]['user_id']
        == (manager['id'])
    )
    assert cloud.roles_of(manager['id'], project_id=pid) == ['member']
    assert any('role member given to you for the run' in n for n in plan.notes)
    assert scoped.STAYS_OPEN in plan.notes

    outcome = wf.execute(plan, targets)

    # alice's role went (recorded first), the project is disabled last
    assert cloud.roles_of(world['alice']['id'], project_id=pid) == []
    record = record_of(cloud, pid)
    assert record[assignments.ASSIGNMENTS] == [
        {
            'user_id': world['alice']['id'],
            'role_id': 'role-member',
            'role': 'member',
            'inherited': False,
        }
    ]
    assert record['stage'] == drain_record.DELETING
    assert cloud.get('projects', pid)['enabled'] is False
    assert cloud.owned_by(pid) == []
    assert [p.id for p in outcome.empty_projects] == [pid]
    # nothing was asked of every project, and the Cinder owner Cinder
    # hides from a non-admin did not hide the volume
    assert not any('all_tenants' in path for _m, path in cloud.requests)
    assert not cloud.exists('volumes', world['vol']['id'])

    wf.conn.identity.delete_project(pid)  # as OSC does after the hook
    assert after_delete.finish(wf, outcome) == []
    assert wf.temporary is None


def test_a_failed_run_takes_its_role_back_and_the_restore_puts_the_others_back(
    cloud, world
):
    pid, manager = world['pid'], world['manager']
    wf = scoped_cascade(as_manager(cloud, world))
    targets = wf.resolve([pid])
    plan = wf.plan(targets)
    cloud.forbidden.add(f'/servers/{world["vm"]["id"]}')

    with pytest.raises(CascadeError, match='were not deleted'):
        wf.execute(plan, targets)

    assert cloud.roles_of(manager['id'], project_id=pid) == []
    record = record_of(cloud, pid)
    assert assignments.TEMPORARY not in record
    assert [a['user_id'] for a in record[assignments.ASSIGNMENTS]] == [
        world['alice']['id']
    ]
    assert cloud.get('projects', pid)['enabled'] is True  # never disabled

    assert wf.drainer.restore(pid) == []
    assert cloud.roles_of(world['alice']['id'], project_id=pid) == ['member']
    assert record_of(cloud, pid) is None


def test_the_drain_takes_groups_and_inherited_roles_and_names_what_stays(
    cloud, world
):
    pid = world['pid']
    project = cloud.get('projects', pid)
    cloud.assign({'id': 'g-team', 'group': True}, 'reader', project=project)
    heir = cloud.add_user('heir', DOMAIN)
    cloud.assign(heir, 'member', project=project, inherited=True)
    boss = cloud.add_user('boss', DOMAIN)
    cloud.assign(boss, 'admin', project=project)
    before = sorted(
        json.dumps(a, sort_keys=True)
        for a in assignments.on_project(cloud.connection(), pid)
    )
    wf = scoped_cascade(as_manager(cloud, world))
    targets = wf.resolve([pid])
    wf.plan(targets)

    wf.drain(targets)

    removed = record_of(cloud, pid)[assignments.ASSIGNMENTS]
    assert sorted(assignments.label(a) for a in removed) == sorted(
        [
            f'user {world["alice"]["id"]}: member',
            f'user {heir["id"]}: member, inherited by the subtree',
            'group g-team: reader',
        ]
    )
    # a domain manager may not revoke admin: it stays, and a note says so
    assert cloud.roles_of(boss['id'], project_id=pid) == ['admin']
    stays = [n for n in wf.notes if 'may not remove' in n]
    assert len(stays) == 1
    assert f'user {boss["id"]}: admin' in stays[0]

    wf.release()
    assert wf.drainer.restore(pid) == []
    after = sorted(
        json.dumps(a, sort_keys=True)
        for a in assignments.on_project(cloud.connection(), pid)
    )
    assert after == before


def test_a_role_left_by_a_killed_run_is_taken_back_by_the_restore(
    cloud, world
):
    pid, manager = world['pid'], world['manager']
    wf = scoped_cascade(as_manager(cloud, world))
    wf.plan(wf.resolve([pid]))  # the role is given; the run dies here

    scoped_cascade(as_manager(cloud, world)).drainer.restore(pid)

    assert cloud.roles_of(manager['id'], project_id=pid) == []
    assert record_of(cloud, pid) is None


def test_a_member_empties_its_project_and_keeps_it(cloud, world):
    pid, alice = world['pid'], world['alice']
    wf = scoped_cascade(
        cloud.connection_as(alice, project_id=pid), keep_project=True
    )
    targets = wf.resolve(['target'])  # its own, named by its token
    plan = wf.plan(targets)
    outcome = wf.execute(plan, targets)

    assert outcome.empty_projects == []  # OSC deletes nothing
    assert cloud.owned_by(pid) == []
    assert cloud.get('projects', pid)['enabled'] is True
    assert cloud.roles_of(alice['id'], project_id=pid) == ['member']
    assert record_of(cloud, pid) is None
    assert not any(m == 'PATCH' for m, p in cloud.changes if '/v3/' in p)


def test_a_member_may_not_delete_the_project(cloud, world):
    wf = scoped_cascade(
        cloud.connection_as(world['alice'], project_id=world['pid'])
    )
    with pytest.raises(CascadeError) as exc:
        wf.resolve([world['pid']])
    assert '--keep-project' in str(exc.value)
    assert (
        f'`openstack role add --user {world["alice"]["id"]} --domain '
        f'{DOMAIN} manager`' in str(exc.value)
    )
    assert cloud.changes == []


def test_the_manager_of_another_domain_is_refused(cloud, world):
    other = cloud.add_user('other-manager', 'dom-other')
    cloud.assign(other, 'manager', domain='dom-other')
    wf = scoped_cascade(cloud.connection_as(other, domain_id='dom-other'))

    with pytest.raises(CascadeError) as exc:
        wf.resolve([world['pid']])

    message = str(exc.value)
    assert '\n' not in message
    assert 'is not in domain dom-other' in message
    assert '`openstack role add --user' in message
    assert cloud.changes == []


def test_a_user_without_a_role_on_the_project_is_told_which(cloud, world):
    elsewhere = scenarios.project(cloud, 'elsewhere')
    bob = cloud.add_user('bob')
    cloud.assign(bob, 'member', project=elsewhere)
    wf = scoped_cascade(
        cloud.connection_as(bob, project_id=elsewhere['id']),
        keep_project=True,
    )
    targets = wf.resolve([world['pid']])

    with pytest.raises(CascadeError) as exc:
        wf.plan(targets)

    assert (
        f'`openstack role add --user {bob["id"]} --project '
        f'{world["pid"]} member`' in str(exc.value)
    )
    assert cloud.exists('servers', world['vm']['id'])


def test_a_volume_attached_to_a_server_it_cannot_see_is_kept(cloud, world):
    pid = world['pid']
    other = scenarios.project(cloud, 'other', domain_id=DOMAIN)
    theirs = scenarios.server(cloud, other['id'], name='theirs')
    shared_disk = scenarios.volume(cloud, pid, name='disk', attach_to=theirs)
    wf = scoped_cascade(as_manager(cloud, world))

    plan = wf.plan(wf.resolve([pid]))

    kept = {s.target.id: s for s in plan.kept()}
    assert shared_disk['id'] in kept
    assert f'server {theirs["id"]}' in kept[shared_disk['id']].params['reason']
    assert scoped.NOT_CHECKED in plan.notes


def test_the_settle_needs_admin(cloud, world):
    with pytest.raises(CascadeError, match='--settle needs the admin role'):
        scoped_cascade(
            as_manager(cloud, world), options=CascadeOptions(settle=60)
        )


def test_only_a_caller_without_the_admin_role_needs_the_scoped_path(
    cloud, world
):
    assert not scoped.needs_scoped(cloud.connection())
    assert scoped.needs_scoped(as_manager(cloud, world))


def as_manager_on_the_command_line(domain):
    """OSC's options that make the fake admin's a domain manager's login
    (the later options win; an empty project scope is none)."""
    return (
        '--os-username',
        'managed-manager' if domain == DOMAIN else 'other-manager',
        '--os-user-domain-id',
        domain,
        '--os-project-name',
        '',
        '--os-project-domain-id',
        '',
        '--os-domain-id',
        domain,
    )


def test_the_command_takes_the_path_without_admin_by_itself(cloud, world, osc):
    result = osc(
        *as_manager_on_the_command_line(DOMAIN),
        'project',
        'delete',
        '--cascade',
        '--yes',
        world['pid'],
    )

    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', world['pid'])
    assert 'listed and deleted through a token scoped to project' in (
        result.stderr
    )
    assert cloud.owned_by(world['pid']) == []


@pytest.mark.parametrize('status', [409, 403, 503])
def test_the_role_given_for_the_run_goes_when_osc_fails_to_delete(
    cloud, world, osc, status
):
    # issue 29: OSC's own delete of the emptied project (after the hook)
    # fails and raises; cliff runs no after() then, so the role given for
    # the run is taken back before the project is handed to OSC (Keystone
    # would have deleted it with the project)
    pid, manager = world['pid'], world['manager']
    cloud.faults.extend([('DELETE', rf'/v3/projects/{pid}$', status)] * 10)

    result = osc(
        *as_manager_on_the_command_line(DOMAIN),
        'project',
        'delete',
        '--cascade',
        '--yes',
        pid,
    )

    assert result.code == 1
    assert cloud.exists('projects', pid)
    assert cloud.roles_of(manager['id'], project_id=pid) == []
    record = record_of(cloud, pid)
    assert assignments.TEMPORARY not in record
    # what the restore gives back is still recorded
    assert [a['user_id'] for a in record[assignments.ASSIGNMENTS]] == [
        world['alice']['id']
    ]


def test_a_role_that_cannot_be_taken_back_before_the_delete_is_named(
    cloud, world
):
    pid, manager = world['pid'], world['manager']
    wf = scoped_cascade(as_manager(cloud, world))
    targets = wf.resolve([pid])
    plan = wf.plan(targets)
    mine = f'/projects/{pid}/users/{manager["id"]}/roles/'
    cloud.faults.extend([('DELETE', mine, 503)] * 10)

    outcome = wf.execute(plan, targets)

    assert [p.id for p in outcome.empty_projects] == [pid]
    [note] = [n for n in wf.notes if 'may stay' in n]
    assert (
        f'`openstack role remove --user {manager["id"]} --project {pid} '
        'member`' in note
    )
    # the record keeps it: the restore takes it back
    assert (
        record_of(cloud, pid)[assignments.TEMPORARY]['user_id']
        == (manager['id'])
    )
    cloud.faults.clear()
    assert wf.drainer.restore(pid) == []
    assert cloud.roles_of(manager['id'], project_id=pid) == []


def test_the_command_refuses_another_domains_manager_in_one_line(
    cloud, world, osc
):
    other = cloud.add_user('other-manager', 'dom-other')
    cloud.assign(other, 'manager', domain='dom-other')

    result = osc(
        *as_manager_on_the_command_line('dom-other'),
        'project',
        'delete',
        '--cascade',
        '--yes',
        world['pid'],
    )

    assert result.code == 1
    assert result.stderr.count('\n') == 1, result.stderr
    assert 'is not in domain dom-other' in result.stderr
    assert cloud.exists('projects', world['pid'])


def drained_by_the_manager(cloud, world):
    """The drain without admin of the world's project, its locks let go:
    alice's role taken away and recorded."""
    wf = scoped_cascade(as_manager(cloud, world))
    targets = wf.resolve([world['pid']])
    wf.plan(targets)
    wf.drain(targets)
    wf.release()
    return wf


def test_an_assignment_keystone_fails_to_put_back_stays_in_the_record(
    cloud, world
):
    # issue 29 item 5: the record is the only copy of what was removed
    pid, alice = world['pid'], world['alice']
    wf = drained_by_the_manager(cloud, world)
    cloud.forbidden.add(f'/projects/{pid}/users/{alice["id"]}/roles/')

    [note] = wf.drainer.restore(pid)

    assert f'role assignment user {alice["id"]}: member' in note
    assert 'quota' not in note
    # the refusal says what the restore needs, not what the drain did
    assert drain_record.RESTORE_NEEDS in note
    assert drain_record.NEEDS not in note
    record = record_of(cloud, pid)
    assert [a['user_id'] for a in record[assignments.ASSIGNMENTS]] == [
        alice['id']
    ]
    assert cloud.roles_of(alice['id'], project_id=pid) == []

    # a second restore puts back exactly what the first did not
    cloud.forbidden.clear()
    assert wf.drainer.restore(pid) == []
    assert cloud.roles_of(alice['id'], project_id=pid) == ['member']
    assert record_of(cloud, pid) is None


def test_the_restore_command_names_the_assignment_and_a_second_one_retries(
    cloud, world, osc
):
    pid, alice = world['pid'], world['alice']
    drained_by_the_manager(cloud, world)
    cloud.forbidden.add(f'/projects/{pid}/users/{alice["id"]}/roles/')

    result = osc('project', 'restore', pid)

    assert result.code == 1
    assert f'role assignment user {alice["id"]}: member' in result.stderr
    assert 'quota set' not in result.stderr
    assert record_of(cloud, pid)[assignments.ASSIGNMENTS]

    cloud.forbidden.clear()
    result = osc('project', 'restore', pid)
    assert result.code == 0, result.stderr
    assert cloud.roles_of(alice['id'], project_id=pid) == ['member']
    assert record_of(cloud, pid) is None


def test_a_revoke_whose_answer_was_lost_stays_in_the_record(cloud, world):
    # the suspect of issue 29: Keystone took the revoke, the answer was
    # lost (a timeout) and every retry failed; the assignment is gone
    # from the project, so the record must keep it for the restore
    pid, alice = world['pid'], world['alice']
    grant = f'/projects/{pid}/users/{alice["id"]}/roles/'
    cloud.lost_answers.append(('DELETE', grant))
    cloud.faults.extend([('DELETE', grant, 503)] * 10)

    wf = drained_by_the_manager(cloud, world)

    assert cloud.roles_of(alice['id'], project_id=pid) == []
    removed = record_of(cloud, pid)[assignments.ASSIGNMENTS]
    assert [a['user_id'] for a in removed] == [alice['id']]
    cloud.faults.clear()
    assert wf.drainer.restore(pid) == []
    assert cloud.roles_of(alice['id'], project_id=pid) == ['member']


def test_a_revoke_that_failed_keeps_the_assignment_in_the_record(cloud, world):
    # a revoke that failed (5xx) may still be carried out later: in
    # doubt the record keeps it (the restore's grant of an assignment
    # that is there changes nothing), and a line says it may stay
    pid, alice = world['pid'], world['alice']
    grant = f'/projects/{pid}/users/{alice["id"]}/roles/'
    cloud.faults.extend([('DELETE', grant, 503)] * 10)

    wf = drained_by_the_manager(cloud, world)

    assert cloud.roles_of(alice['id'], project_id=pid) == ['member']
    removed = record_of(cloud, pid)[assignments.ASSIGNMENTS]
    assert [a['user_id'] for a in removed] == [alice['id']]
    [note] = [n for n in wf.notes if 'may stay' in n]
    assert f'user {alice["id"]}: member' in note
    cloud.faults.clear()
    assert wf.drainer.restore(pid) == []
    assert cloud.roles_of(alice['id'], project_id=pid) == ['member']
    assert record_of(cloud, pid) is None


def test_the_scoped_connection_reaches_the_projects_swift_account(cloud):
    # openstacksdk writes the caller's own Swift account into its config
    # as an endpoint override once its object_store is made, and
    # connect_as copies it: the project's token would reach the caller's
    # account
    caller = cloud.connection_as(
        {'name': 'manager', 'domain_id': 'default'},
        project_id='caller-project',
    )
    caller.config.config['object_store_endpoint_override'] = (
        'http://swift.test/v1/AUTH_caller-project'
    )
    with (
        mock.patch.object(
            type(caller),
            'current_project_id',
            new_callable=mock.PropertyMock,
            return_value='caller-project',
        ),
        mock.patch.object(type(caller), 'authorize'),
    ):
        got = scoped._scoped_to(caller, 'the-project')

    assert 'object_store_endpoint_override' not in got.config.config
    # the caller's own connection is left as it was
    assert caller.config.config['object_store_endpoint_override']
