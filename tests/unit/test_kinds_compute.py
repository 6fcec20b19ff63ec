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

"""Nova kinds against the fake cloud."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade.engine import resource
from osc_cascade.engine.executor import DONE, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import compute
from osc_cascade.kinds.base import GONE
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud, ignoring_filters
from tests.unit.fakes.kinds import kinds_of


def projects(cloud):
    return (
        scenarios.project(cloud, 'A')['id'],
        scenarios.project(cloud, 'B')['id'],
    )


def test_servers_are_listed_with_the_project_filter_in_every_state(
    cloud, conn
):
    a, b = projects(cloud)
    for status in ('ACTIVE', 'ERROR', 'SHELVED_OFFLOADED', 'SOFT_DELETED'):
        scenarios.server(cloud, a, status.lower(), status=status)
    scenarios.server(cloud, b, 'theirs')
    refs = list(compute.Server().list(conn, a))
    assert sorted(r.name for r in refs) == [
        'active',
        'error',
        'shelved_offloaded',
        'soft_deleted',
    ]
    assert {r.project_id for r in refs} == {a}
    listing = [p for m, p in cloud.requests if '/servers/detail' in p]
    assert len(listing) == 1
    assert f'project_id={a}' in listing[0]
    assert 'all_tenants=True' in listing[0]


def test_server_attributes_for_ordering(cloud, conn):
    a, _ = projects(cloud)
    vm = scenarios.server(cloud, a, 'vm')
    vm['locked'] = True
    vol = scenarios.volume(cloud, a, attach_to=vm)
    plain = scenarios.server(cloud, a, 'plain')
    refs = {r.id: r for r in compute.Server().list(conn, a)}
    assert refs[vm['id']].attrs == {
        'status': 'ACTIVE',
        'locked': True,
        'volumes': [vol['id']],
    }
    # empty attributes are left out, so plans stay small
    assert refs[plain['id']].attrs == {'status': 'ACTIVE'}


def test_another_projects_server_never_gets_in_if_nova_ignores_filter():
    with ignoring_filters(FakeCloud)() as cloud:
        a, b = projects(cloud)
        mine = scenarios.server(cloud, a, 'mine')
        scenarios.server(cloud, b, 'theirs')
        conn = cloud.connection()
        # the fake really ignores the filter
        assert (
            len(list(conn.compute.servers(project_id=a, all_projects=True)))
            == 2
        )
        assert [r.id for r in compute.Server().list(conn, a)] == [mine['id']]


def test_server_delete_and_status_until_gone(cloud, conn):
    a, _ = projects(cloud)
    vm = scenarios.server(cloud, a)
    kind = compute.Server()
    ref = next(iter(kind.list(conn, a)))
    kind.delete(conn, ref)
    assert cloud.changes == [('DELETE', f'/v2.1/servers/{vm["id"]}')]
    assert kind.status(conn, ref) == 'ACTIVE'  # nova is still at it
    with pytest.raises(sdk_exc.NotFoundException):
        kind.status(conn, ref)


def test_soft_deleted_server_is_force_deleted(cloud, conn):
    a, _ = projects(cloud)
    vm = scenarios.server(cloud, a, status='SOFT_DELETED')
    kind = compute.Server()
    kind.delete(conn, next(iter(kind.list(conn, a))))
    assert cloud.changes == [('POST', f'/v2.1/servers/{vm["id"]}/action')]
    assert cloud.get('servers', vm['id'])['task_state'] == 'deleting'


def test_a_server_nova_only_soft_deletes_is_force_deleted_then_waited_for():
    # nova.conf's reclaim_instance_interval: DELETE leaves SOFT_DELETED
    with FakeCloud(reclaim_instance_interval=3600) as cloud:
        a, _ = projects(cloud)
        vm = scenarios.server(cloud, a)
        conn = cloud.connection()
        kind = compute.Server()
        clock = FakeClock()
        result = Executor(conn, {kind.name: kind}, clock=clock).run_step(
            resource.delete(next(iter(kind.list(conn, a))))
        )
        assert result.outcome == DONE, result.error
        assert not cloud.exists('servers', vm['id'])
        assert [m for m, _ in cloud.changes] == ['DELETE', 'POST']
        assert sum(clock.sleeps) < 5  # not the 600 s of --timeout


class _StatusCloud(FakeCloud):
    """Answers a server GET with a fixed status and task state."""

    answer = ('ERROR', None)

    def _compute(self, method, path, query, body):
        status, payload = super()._compute(method, path, query, body)
        if method == 'GET' and 'server' in (payload or {}):
            payload['server']['status'] = self.answer[0]
            payload['server']['OS-EXT-STS:task_state'] = self.answer[1]
        return status, payload


@pytest.mark.parametrize(
    'answer,expected',
    [
        (('ERROR', None), 'ERROR (delete failed)'),
        (('ERROR', 'deleting'), 'ERROR'),
        (('DELETED', None), GONE),
        (('ACTIVE', 'deleting'), 'ACTIVE'),
    ],
)
def test_server_status_tells_a_failed_delete_from_one_in_progress(
    answer, expected
):
    with _StatusCloud() as cloud:
        cloud.answer = answer
        a, _ = projects(cloud)
        scenarios.server(cloud, a)
        conn = cloud.connection()
        kind = compute.Server()
        assert kind.status(conn, next(iter(kind.list(conn, a)))) == expected


def test_plain_error_is_not_a_failed_delete():
    # a server in ERROR before the delete is common: only nova giving up
    # on the delete fails the step
    assert 'ERROR' not in compute.Server.error_statuses
    assert 'ERROR (delete failed)' in compute.Server.error_statuses


def test_server_groups_are_filtered_client_side(cloud, conn):
    a, b = projects(cloud)
    vm = scenarios.server(cloud, a)
    mine = cloud.add(
        'server_groups',
        name='ha',
        project_id=a,
        members=[vm['id']],
        policies=['anti-affinity'],
    )
    cloud.add('server_groups', name='theirs', project_id=b, members=[])
    refs = list(compute.ServerGroup().list(conn, a))
    assert [(r.id, r.attrs) for r in refs] == [
        (mine['id'], {'members': [vm['id']]})
    ]
    assert any(
        '/os-server-groups' in p and 'all_projects=True' in p
        for m, p in cloud.requests
    )


def test_server_group_goes_after_its_members_and_deletes_synchronously(
    cloud, conn
):
    a, _ = projects(cloud)
    vm = scenarios.server(cloud, a)
    group = cloud.add(
        'server_groups',
        name='ha',
        project_id=a,
        members=[vm['id'], 'gone-server'],
    )
    refs = [
        *compute.Server().list(conn, a),
        *compute.ServerGroup().list(conn, a),
    ]
    kinds = {k.name: k() for k in kinds_of(compute)}
    plan = build_plan(Inventory(refs), kinds, [{'id': a, 'name': 'A'}])
    assert plan.edges == {
        (
            f'delete:compute.server:{vm["id"]}',
            f'delete:compute.server_group:{group["id"]}',
        )
    }
    kind = kinds['compute.server_group']
    assert kind.synchronous_delete
    kind.delete(conn, next(r for r in refs if r.kind == kind.name))
    assert not cloud.exists('server_groups', group['id'])
    assert cloud.changes == [
        ('DELETE', f'/v2.1/os-server-groups/{group["id"]}')
    ]


def test_server_statuses_of_a_project_in_one_list(cloud, conn):
    a, b = projects(cloud)
    going = scenarios.server(cloud, a, 'going')
    failed = scenarios.server(cloud, a, 'failed', status='ERROR')
    scenarios.server(cloud, b, 'theirs')
    kind = compute.Server()
    refs = {r.name: r for r in kind.list(conn, a)}
    kind.delete(conn, refs['going'])
    failed['task_state'] = None  # nova gave up on it
    cloud.requests.clear()
    assert kind.list_statuses(conn, a) == {
        going['id']: 'ACTIVE',
        failed['id']: 'ERROR (delete failed)',
    }
    assert len(cloud.requests) == 1
    # gone from the list once nova has finished: the executor reads GONE
    assert going['id'] not in kind.list_statuses(conn, a)


def test_server_groups_beyond_one_page_of_novas_max_limit_are_all_listed():
    with FakeCloud(nova_max_limit=3) as cloud:
        a, b = projects(cloud)
        mine = [
            cloud.add('server_groups', name=f'g{i}', project_id=a, members=[])
            for i in range(7)
        ]
        cloud.add('server_groups', name='theirs', project_id=b, members=[])
        kind = compute.ServerGroup()
        kind.page = 5  # more than nova answers: the page comes back short
        refs = kind.list(cloud.connection(), a)
    assert {r.id for r in refs} == {g['id'] for g in mine}
    offsets = [
        p for m, p in cloud.requests if p.startswith('/v2.1/os-server-groups')
    ]
    # 3 + 3 + 2 + an empty page that ends the list
    assert len(offsets) == 4
