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

"""Trove instances, Aodh alarms, Mistral workflows and triggers, Ironic
nodes: each listed page by page for the project (every project's for the
orphan search), deleted in the order the service accepts (its fake refuses
any other, as the service does), kept where it is not the project's to
delete."""

import types
from urllib import parse

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import scopes
from osc_cascade.api.http import request
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE
from osc_cascade.kinds import alarming, baremetal, database, workflow
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.identity import SYSTEM_TOKEN
from tests.unit.fakes.run import cascade_for, run_kind


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def ab(cloud):
    return [scenarios.project(cloud, n)['id'] for n in 'AB']


def names(refs):
    return sorted(r.name for r in refs)


def build(name, **attrs):
    kind = kinds_mod.build()[name]
    for k, v in attrs.items():
        setattr(kind, k, v)
    return kind


MAKERS = {
    database.Instance.name: lambda c, p, n: c.trove_instance(p, n),
    alarming.Alarm.name: lambda c, p, n: c.alarm(p, n),
    workflow.Workflow.name: lambda c, p, n: c.mistral('workflows', p, name=n),
    workflow.CronTrigger.name: lambda c, p, n: c.mistral(
        'cron_triggers', p, name=n, workflow_id='w'
    ),
    workflow.EventTrigger.name: lambda c, p, n: c.mistral(
        'event_triggers', p, name=n, workflow_id='w'
    ),
    baremetal.NodeLease.name: lambda c, p, n: c.node(n, lessee=p),
    baremetal.Node.name: lambda c, p, n: c.node(n, owner=p),
}


@pytest.mark.parametrize('name', sorted(MAKERS))
def test_lists_the_projects_own_page_by_page(cloud, ab, name):
    a, b = ab
    for n in range(5):
        MAKERS[name](cloud, a, f'a{n}')
    MAKERS[name](cloud, b, 'b')
    # every fake pages at two; Aodh pages only when asked
    kind = build(name, page=2) if name == alarming.Alarm.name else build(name)
    conn = cloud.connection()
    before = len(cloud.requests)

    assert names(kind.list(conn, a)) == [f'a{n}' for n in range(5)]
    assert len(cloud.requests) - before >= 3
    assert names(kind.list(conn, None)) == [*(f'a{n}' for n in range(5)), 'b']


def test_a_trove_replica_goes_before_its_source(cloud, ab):
    a, _b = ab
    source = cloud.trove_instance(a, 'source')
    replica = cloud.trove_instance(a, 'replica', source)
    conn = cloud.connection()
    with pytest.raises(sdk_exc.ForbiddenException, match='replica'):
        conn.database.delete_instance(source['id'], ignore_missing=False)
    kind = build(database.Instance.name)
    refused = len(cloud.deleted_order())
    run = run_kind(cloud, kind, kind.list(conn, a))
    assert {r.outcome for r in run.results.values()} == {DONE}
    assert cloud.all('trove_instances') == []
    assert [p.rsplit('/', 1)[1] for p in cloud.deleted_order()[refused:]] == [
        replica['id'],
        source['id'],
    ]


def test_alarms_go_and_others_stay(cloud, ab):
    a, b = ab
    cloud.alarm(a)
    theirs = cloud.alarm(b)
    kind = build(alarming.Alarm.name)
    run = run_kind(cloud, kind, kind.list(cloud.connection(), a))
    assert {r.outcome for r in run.results.values()} == {DONE}
    assert [x['id'] for x in cloud.all('alarms')] == [theirs['id']]


def test_triggers_go_before_their_workflow(cloud, ab):
    a, _b = ab
    wf = cloud.mistral('workflows', a, scope='private')
    cron = cloud.mistral('cron_triggers', a, workflow_id=wf['id'])
    event = cloud.mistral('event_triggers', a, workflow_id=wf['id'])
    conn = cloud.connection()
    with pytest.raises(sdk_exc.BadRequestException, match='triggers'):
        conn.workflow.delete_workflow(wf['id'], ignore_missing=False)
    # an admin is shown no member of a private workflow: kept, with why
    _pc, _t, plan = cascade_for(cloud, a)
    kept = step_id('keep', workflow.Workflow.name, wf['id'])
    assert plan.steps[kept].params['reason'] == workflow.MEMBERS_UNSEEN
    assert plan.kept()
    pc, targets, plan = cascade_for(cloud, a, delete_shared=True)
    for trigger, kind in (
        (cron, workflow.CronTrigger),
        (event, workflow.EventTrigger),
    ):
        assert (
            step_id('delete', kind.name, trigger['id']),
            step_id('delete', workflow.Workflow.name, wf['id']),
        ) in plan.edges
    pc.execute(plan, targets)
    assert not any(cloud.all(c) for c in ('workflows', 'cron_triggers'))


def test_a_public_workflow_is_kept_unless_shared_ones_go(cloud, ab):
    a, _b = ab
    wf = cloud.mistral('workflows', a, scope='public')
    _pc, _t, plan = cascade_for(cloud, a)
    kept = step_id('keep', workflow.Workflow.name, wf['id'])
    assert 'other projects may run it' in plan.steps[kept].params['reason']
    _pc, _t, plan = cascade_for(cloud, a, delete_shared=True)
    assert step_id('delete', workflow.Workflow.name, wf['id']) in plan.steps


def test_a_leased_node_is_released_after_the_server_on_it(cloud, ab, external):
    p = scenarios.full_project(cloud, 'C', external)
    pid = p['project']['id']
    node = cloud.node('leased', lessee=pid, instance_uuid=p['server']['id'])
    other = cloud.node('other', lessee=ab[1])
    pc, targets, plan = cascade_for(cloud, pid)
    lease = step_id('delete', baremetal.NodeLease.name, node['id'])
    assert (step_id('delete', 'compute.server', p['server']['id']), lease) in (
        plan.edges
    )
    pc.execute(plan, targets)
    assert cloud.get('nodes', node['id'])['lessee'] is None  # released
    assert cloud.get('nodes', other['id'])['lessee'] == ab[1]
    assert ('PATCH', f'/v1/nodes/{node["id"]}') in cloud.changes
    assert not [
        c for c in cloud.changes if c[0] == 'DELETE' and 'nodes' in c[1]
    ]


def test_a_node_the_project_owns_is_kept_and_keeps_it(cloud, ab):
    a, b = ab
    owned = cloud.node('owned', owner=a, lessee=b)
    both = cloud.node('both', owner=a, lessee=a)
    _pc, _t, plan = cascade_for(cloud, a)
    for node in (owned, both):
        step = plan.steps[step_id('keep', baremetal.Node.name, node['id'])]
        assert 'owns this bare metal node' in step.params['reason']
    # a node it owns and leases is not released: the keep says it all
    assert not [s for s in plan.steps if baremetal.NodeLease.name in s]
    assert cloud.get('nodes', owned['id'])['lessee'] == b


def test_a_project_admin_who_may_not_list_every_node_keeps_the_project(
    cloud, ab
):
    """Ironic's default policies (ironic 39.0.0): an admin whose token is
    scoped to its own project may not list every project's nodes
    (``baremetal:node:list_all`` is a system reader's); an ``owner``
    filter is then narrowed, silently, to the caller's own project, and a
    node that project A owns was not seen: A was deleted. Asked with
    ``project``, Ironic refuses (403) instead; a user whom Keystone gives
    no system-scoped token (no role on the system) is refused in one line
    that says what it lacks, and nothing is deleted."""
    a, _b = ab
    cloud.ironic_list_all = False
    cloud.system_roles = []
    cloud.node('owned', owner=a)
    with pytest.raises(CascadeError, match=r'baremetal\.node.*HTTP 403') as e:
        cascade_for(cloud, a)
    assert '\n' not in str(e.value)
    assert 'role add --system all' in str(e.value)
    assert cloud.changes == []
    # Keystone was asked, once, and refused
    assert len(system_token_asks(cloud)) == 1


def system_token_asks(cloud):
    return [
        r
        for r in cloud.mocker.request_history
        if r.path.endswith('/auth/tokens')
        and 'system' in (r.json()['auth'].get('scope') or {})
    ]


def ironic_tokens(cloud):
    """The tokens of the requests to Ironic's nodes."""
    return {
        r.headers.get('X-Auth-Token')
        for r in cloud.mocker.request_history
        if r.path.startswith('/v1/nodes')
    }


def test_an_admin_lists_and_releases_with_its_system_scoped_token(cloud, ab):
    """Ironic's defaults, and the admin has a role on the system (as
    Keystone's bootstrap gives it): the nodes are listed and the lease
    released with the same user's system-scoped token, which Keystone is
    asked for once per client session."""
    a, b = ab
    cloud.ironic_list_all = False
    owned = cloud.node('owned', owner=a, lessee=b)
    leased = cloud.node('leased', owner=b, lessee=a)
    _pc, _t, plan = cascade_for(cloud, a)
    assert step_id('keep', baremetal.Node.name, owned['id']) in plan.steps
    cloud.get('nodes', owned['id'])['owner'] = None  # as the keep says
    pc, targets, plan = cascade_for(cloud, a)
    pc.execute(plan, targets)
    assert cloud.get('nodes', leased['id'])['lessee'] is None
    assert cloud.get('nodes', owned['id'])['lessee'] == b
    assert ironic_tokens(cloud) == {SYSTEM_TOKEN}
    assert len(system_token_asks(cloud)) == 2  # two cascades, two clients


def test_a_system_reader_lists_but_may_not_release_a_lease(cloud, ab):
    """A system reader who is no system member: Ironic lists the nodes but
    refuses the lessee's removal (``baremetal:node:update:lessee``): the
    release fails, the lessee stays, and the project is not empty."""
    a, b = ab
    cloud.ironic_list_all = False
    cloud.system_roles = ['reader']
    leased = cloud.node('leased', owner=b, lessee=a)
    pc, targets, plan = cascade_for(cloud, a)
    lease = step_id('delete', baremetal.NodeLease.name, leased['id'])
    assert lease in plan.steps
    with pytest.raises(CascadeError, match=r'not deleted.*403'):
        pc.execute(plan, targets)
    assert cloud.get('nodes', leased['id'])['lessee'] == a
    assert cloud.get('projects', a) is not None


def test_the_service_role_lists_with_the_clients_own_token(cloud, ab):
    """No role on the system, but the client's project-scoped token is
    Ironic's service role: its own token lists and releases."""
    a, b = ab
    cloud.system_roles = []
    leased = cloud.node('leased', owner=b, lessee=a)
    pc, targets, plan = cascade_for(cloud, a)
    pc.execute(plan, targets)
    assert cloud.get('nodes', leased['id'])['lessee'] is None
    assert ironic_tokens(cloud) == {'fake-token'}


def test_a_node_of_another_project_is_hidden_from_a_project_token(cloud, ab):
    """Why the release needs the system-scoped token too: Ironic hides
    another project's node from a project-scoped admin (404, which a
    release would take for a node gone), as the fake does."""
    a, b = ab
    cloud.ironic_list_all = False
    leased = cloud.node('leased', owner=b, lessee=a)
    conn = cloud.connection()
    with pytest.raises(sdk_exc.NotFoundException):
        request(conn.baremetal, 'GET', f'/nodes/{leased["id"]}')
    system = scopes.system_scoped(conn)
    assert request(system.baremetal, 'GET', f'/nodes/{leased["id"]}').ok


def test_no_system_scoped_token_without_a_users_auth():
    """An auth type that names no user (admin_token, none) asks Keystone
    for nothing: the client's own token it is."""
    conn = types.SimpleNamespace(
        config=types.SimpleNamespace(config={'auth_type': 'none'}),
        session=object(),
    )
    assert scopes.system_scoped(conn) is None


def test_a_system_reader_lists_a_projects_nodes_in_one_filter(cloud, ab):
    a, b = ab
    owned = cloud.node('owned', owner=a, lessee=b)
    leased = cloud.node('leased', owner=b, lessee=a)
    refs = {
        kind.name: names(kind().list(cloud.connection(), a))
        for kind in (baremetal.Node, baremetal.NodeLease)
    }
    assert refs == {
        baremetal.Node.name: [owned['name']],
        baremetal.NodeLease.name: [leased['name']],
    }
    asked = [
        parse.parse_qs(url.query)
        for url in (parse.urlsplit(u) for _m, u in cloud.requests)
        if url.path == '/v1/nodes'
    ]
    assert asked and all(q.get('project') == [a] for q in asked)
