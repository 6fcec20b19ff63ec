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

"""Swift containers: reached in the project's account, emptied in bulk or
in parallel, versions handled, and a clear refusal without the reseller
role."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, FAILED
from osc_cascade.kinds import object_store
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import cascade_for, run_kind

CONTAINER = object_store.Container.name


@pytest.fixture
def cloud(request):
    options = getattr(request, 'param', {})
    with ServicesCloud(**options) as c:
        yield c


@pytest.fixture
def kind():
    return kinds_mod.build()[CONTAINER]


def test_lists_the_containers_of_the_projects_own_account(cloud, kind, pid):
    b = scenarios.project(cloud, 'B')['id']
    cloud.container(pid, 'data', objects=3)
    cloud.container(pid, 'docs', versions='docs-versions')
    cloud.container(b, 'data')

    refs = {r.name: r for r in kind.list(cloud.connection(), pid)}

    assert set(refs) == {'data', 'docs'}
    assert refs['data'].id == f'{pid}/data'  # a name is unique per account
    assert refs['data'].attrs['physical_id'] == 'data'
    assert refs['docs'].attrs['versions'] == 'docs-versions'
    # the account's names, raw (as Swift pages them, by marker)
    assert ('GET', f'/v1/AUTH_{pid}/?format=json&marker=') in cloud.requests
    assert not [p for _, p in cloud.requests if f'AUTH_{b}' in p]


def test_two_projects_namesakes_are_two_resources(cloud, kind, pid):
    b = scenarios.project(cloud, 'B')['id']
    cloud.container(pid, 'data')
    cloud.container(b, 'data')
    conn = cloud.connection()
    refs = [*kind.list(conn, pid), *kind.list(conn, b)]
    assert len({r.key for r in refs}) == 2


@pytest.mark.parametrize('cloud', [{'reseller': False}], indirect=True)
def test_without_the_reseller_role_discovery_says_what_to_grant(
    cloud, kind, pid
):
    cloud.container(pid, 'data')
    discovery = Discovery(
        cloud.connection(), {CONTAINER: kind}, clock=FakeClock()
    )
    with pytest.raises(CascadeError) as err:
        discovery.run([pid])
    message = str(err.value)
    assert 'refused (HTTP 403)' in message
    assert 'ResellerAdmin' in message
    assert 'openstack role add' in message


def test_objects_go_in_bulk_deletes_of_the_size_swift_allows(cloud, kind, pid):
    container = cloud.container(pid, 'data', objects=250)
    [ref] = kind.list(cloud.connection(), pid)

    [result] = run_kind(cloud, kind, [ref]).results.values()

    assert (result.outcome, result.attempts) == (DONE, 1)
    assert len(cloud.bulk_requests) == 3  # 100 + 100 + 50
    assert not cloud.exists('containers', container['id'])


def test_the_clusters_capabilities_are_read_once_a_run(cloud, kind, pid):
    for name in ('one', 'two', 'three'):
        cloud.container(pid, name, objects=5)
    refs = kind.list(cloud.connection(), pid)

    result = run_kind(cloud, kind, refs)

    assert [r.outcome for r in result.results.values()] == [DONE] * 3
    assert len(cloud.bulk_requests) == 3
    assert [p for m, p in cloud.requests if p.endswith('/info')] == ['/info']


@pytest.mark.parametrize('cloud', [{'bulk_delete': None}], indirect=True)
def test_without_bulk_delete_objects_go_one_by_one(cloud, kind, pid):
    container = cloud.container(pid, 'data', objects=40)
    [ref] = kind.list(cloud.connection(), pid)

    [result] = run_kind(cloud, kind, [ref]).results.values()

    assert result.outcome == DONE
    object_deletes = [
        p for m, p in cloud.changes if m == 'DELETE' and '/data/obj-' in p
    ]
    assert len(object_deletes) == 40
    assert cloud.bulk_requests == []
    assert not cloud.exists('containers', container['id'])


@pytest.mark.parametrize('header', ['versions', 'history'])
def test_a_legacy_versioned_container_stops_versioning_first(
    cloud, pid, header
):
    docs = cloud.container(pid, 'docs', **{header: 'docs-versions'})
    cloud.container(pid, 'docs-versions')
    cloud.put_object(docs, 'readme', versions=2)
    pc, targets, plan = cascade_for(cloud, pid)
    assert (
        step_id('delete', CONTAINER, f'{pid}/docs'),
        step_id('delete', CONTAINER, f'{pid}/docs-versions'),
    ) in plan.edges

    pc.execute(plan, targets)

    assert len(pc.runs) == 1  # no old version came back, nothing was added
    assert cloud.owned_by(pid) == []
    posts = [
        i
        for i, (m, p) in enumerate(cloud.changes)
        if m == 'POST' and p.endswith('/docs')
    ]
    first_object_delete = min(
        i
        for i, (m, p) in enumerate(cloud.changes)
        if m == 'DELETE' and 'bulk-delete' in p
    )
    assert posts and posts[0] < first_object_delete


def test_object_versions_are_deleted_by_their_version_id(cloud, kind, pid):
    notes = cloud.container(pid, 'notes', versioned=True)
    cloud.put_object(notes, 'todo', versions=3)
    [ref] = kind.list(cloud.connection(), pid)

    [result] = run_kind(cloud, kind, [ref]).results.values()

    assert result.outcome == DONE
    assert not cloud.exists('containers', notes['id'])
    version_deletes = [
        p for m, p in cloud.changes if m == 'DELETE' and 'version-id=' in p
    ]
    assert len(version_deletes) == 4  # three old ones and the latest


def test_a_container_that_is_not_empty_yet_is_retried(cloud, kind, pid):
    container = cloud.container(pid, 'data', objects=2)
    cloud.faults.append(('DELETE', rf'AUTH_{pid}/data$', 409))
    [ref] = kind.list(cloud.connection(), pid)
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == DONE
    assert result.attempts == 2
    assert not cloud.exists('containers', container['id'])


def test_objects_the_bulk_delete_could_not_delete_fail_the_step(
    cloud, kind, pid
):
    container = cloud.container(pid, 'data', objects=5)
    container['undeletable'] = {'obj-0003'}
    [ref] = kind.list(cloud.connection(), pid)
    [result] = run_kind(cloud, kind, [ref]).results.values()
    assert result.outcome == FAILED
    assert 'bulk delete left 1 object(s) of container data' in result.error
    assert 'obj-0003' in result.error
    assert cloud.exists('containers', container['id'])


def test_the_account_is_reached_only_through_the_callers_endpoint(
    cloud, pid, monkeypatch
):
    conn = cloud.connection()
    assert object_store.account(conn, pid).get_endpoint() == (
        f'http://swift.test/v1/AUTH_{pid}'
    )
    monkeypatch.setattr(
        type(conn.object_store),
        'get_endpoint',
        lambda self: 'http://swift.test/v1/AUTH_someone',
    )
    with pytest.raises(CascadeError, match='does not end with your'):
        object_store.account(conn, pid)


def test_the_orphan_search_cannot_list_accounts(cloud, kind):
    assert kind.list(cloud.connection(), None) == []
    assert not [p for _, p in cloud.requests if p.startswith('/v1/AUTH')]


def test_an_account_never_used_holds_nothing(cloud, kind, pid):
    cloud.faults.append(('GET', rf'/v1/AUTH_{pid}/', 404))
    assert kind.list(cloud.connection(), pid) == []
    assert ('GET', f'/v1/AUTH_{pid}/?format=json&marker=') in cloud.requests
