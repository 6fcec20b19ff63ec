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

"""The clusters and the force-delete workflows against the fake Heat,
Magnum and Sahara."""

import datetime
import json
import os

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.v1 import cluster as cli
from osc_cascade.workflows import clusters, force_delete
from osc_cascade.workflows.force_delete import manifest as manifests
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeHeatCloud
from tests.unit.fakes.common import ADMIN_PROJECT
from tests.unit.fakes.data_processing import sahara_description

GRACE = 60.0


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # default manifests land here
    with FakeHeatCloud() as c:
        yield c


@pytest.fixture
def clock():
    # a subnet's delete retried "in use" races the server's on it
    return FakeClock(yields=True)


def k8s_stack(
    cloud, project_id, name='k8s-abc', on_delete='hang', **stack_args
):
    """A cluster's stack: a routed network, a nested group with a server
    and a Swift container, a random string."""
    stack = cloud.stack(name, project_id, on_delete=on_delete, **stack_args)
    net, subnet = scenarios.network(cloud, project_id, name=name + '-net')
    router, _ = scenarios.router(cloud, project_id, subnet)
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(stack, 'subnet', 'OS::Neutron::Subnet', subnet['id'])
    cloud.resource(stack, 'router', 'OS::Neutron::Router', router['id'])
    cloud.resource(
        stack,
        'iface',
        'OS::Neutron::RouterInterface',
        f'{router["id"]}:subnet_id={subnet["id"]}',
    )
    cloud.resource(
        stack,
        'secret',
        'OS::Heat::RandomString',
        'x1y2',
        data={'value': 's3cret'},
    )
    group = cloud.nested(stack, 'workers')
    vm = scenarios.server(cloud, project_id, 'worker-0', net, subnet)
    cloud.resource(group, 'worker-0', 'OS::Nova::Server', vm['id'])
    cloud.resource(group, 'bucket', 'OS::Swift::Container', 'bucket-1')
    return {
        'stack': stack,
        'network': net,
        'subnet': subnet,
        'router': router,
        'server': vm,
        'group': group,
    }


def force(cloud, clock, service=None, **options):
    conn = cloud.connection()
    services = (
        [service] if service else clusters.services_for(conn, stacks=False)
    )
    notes = []
    options.setdefault('grace', GRACE)
    engine = force_delete.ForceDelete(
        conn,
        services,
        force_delete.ForceDeleteOptions(**options),
        notify=notes.append,
        clock=clock,
    )
    engine.notes = notes
    return engine


def find(cloud, name, service, clock=None):
    return clusters.find_cluster(
        cloud.connection(),
        [service],
        name,
        retry=RetryPolicy(),
        clock=clock or FakeClock(),
    )


def mutations(cloud):
    return [(m, p.split('?')[0]) for m, p in cloud.changes]


def magnum_k8s(cloud, **cluster_args):
    project = scenarios.project(cloud, 'tenant')
    built = k8s_stack(
        cloud, project['id'], on_delete=cluster_args.pop('on_delete', 'hang')
    )
    built['cluster'] = cloud.magnum_cluster(
        'k8s', project['id'], built['stack'], **cluster_args
    )
    built['project'] = project
    return built


# -- ages and times ---------------------------------------------------------


@pytest.mark.parametrize(
    'text,seconds',
    [
        ('90s', 90),
        ('30m', 1800),
        ('24h', 86400),
        ('7d', 604800),
        ('45', 45),
        ('1.5h', 5400),
        (' 2D ', 172800),
    ],
)
def test_parse_age(text, seconds):
    assert clusters.parse_age(text) == seconds


@pytest.mark.parametrize('text', ['', 'h', '24x', '-1h', '1h30m'])
def test_parse_age_refuses_what_is_not_an_age(text):
    with pytest.raises(ValueError, match='not an age'):
        clusters.parse_age(text)


def test_format_age_shows_two_largest_units():
    assert clusters.format_age(3 * 86400 + 5 * 3600 + 7) == '3d 5h'
    assert clusters.format_age(3600 + 120) == '1h 2m'
    assert clusters.format_age(42) == '42s'
    assert clusters.format_age(0) == '0s'


def test_parse_time_reads_each_services_format():
    expected = datetime.datetime(2026, 11, 1, 10, 0, tzinfo=datetime.UTC)
    assert clusters.parse_time('2026-11-01T10:00:00Z') == expected
    assert clusters.parse_time('2026-11-01T10:00:00+00:00') == expected
    assert clusters.parse_time('2026-11-01T10:00:00') == expected  # Sahara


# -- finding clusters and stacks -------------------------------------------


def test_finds_magnum_cluster_by_name_and_uuid(cloud):
    built = magnum_k8s(cloud)
    magnum = clusters.MagnumClusters()
    by_name = find(cloud, 'k8s', magnum)
    by_id = find(cloud, built['cluster']['uuid'], magnum)
    assert by_name == by_id
    assert by_name.id == built['cluster']['uuid']  # not the name asked for
    assert by_name.stack_id == built['stack']['id']
    assert by_name.project_id == built['project']['id']


def test_magnum_ambiguous_name_is_a_clear_error(cloud):
    magnum_k8s(cloud)
    cloud.magnum_cluster('k8s', ADMIN_PROJECT, None)
    with pytest.raises(CascadeError, match=r'HTTP 409.*Multiple clusters'):
        find(cloud, 'k8s', clusters.MagnumClusters())


def sahara_k8s(cloud, sahara, **stack_args):
    """The Sahara cluster's stack, named and described as Sahara does."""
    return k8s_stack(
        cloud,
        sahara['project_id'],
        name=cloud.sahara_stack_name(sahara),
        description=sahara_description(sahara['name']),
        **stack_args,
    )


def test_finds_sahara_cluster_by_name_and_its_stack_by_cluster_name(cloud):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'])
    stack = sahara_k8s(cloud, sahara)['stack']
    # a stack of the same name in another project is not its stack
    cloud.stack(
        stack['stack_name'],
        ADMIN_PROJECT,
        description=sahara_description('hadoop'),
    )
    service = clusters.SaharaClusters()
    found = find(cloud, 'hadoop', service)
    assert (found.id, found.service) == (sahara['id'], 'sahara')
    assert [s.id for s in service.stacks(cloud.connection(), found)] == [
        stack['id']
    ]


def test_finds_stack_of_another_project_by_name_and_by_id(cloud):
    project = scenarios.project(cloud, 'tenant')
    stack = cloud.stack('theirs', project['id'])
    heat = clusters.HeatStacks()
    by_id = find(cloud, stack['id'], heat)
    # Heat looks names up in the caller's project only; the list, which
    # shows an admin every project, finds it
    by_name = find(cloud, 'theirs', heat)
    assert by_id == by_name
    assert by_id.project_id == project['id']
    assert ('GET', f'/v1/{ADMIN_PROJECT}/stacks?name=theirs') in (
        cloud.requests
    )


def test_ambiguous_stack_name_is_refused(cloud):
    for name in ('a', 'b'):
        cloud.stack('twin', scenarios.project(cloud, name)['id'])
    with pytest.raises(
        CascadeError, match="More than one stack is named 'twin'"
    ):
        find(cloud, 'twin', clusters.HeatStacks())


def test_unknown_cluster_error_says_where_it_looked(cloud):
    conn = cloud.connection()
    with pytest.raises(
        CascadeError,
        match=r"No cluster .*'nosuch' .*"
        r"magnum, sahara",
    ):
        clusters.find_cluster(
            conn,
            clusters.services_for(conn, stacks=False),
            'nosuch',
            retry=RetryPolicy(),
            clock=FakeClock(),
        )


def test_without_magnum_and_sahara_the_error_points_to_stack():
    with FakeHeatCloud(services=('identity', 'orchestration')) as cloud:
        with pytest.raises(CascadeError, match='pass --stack'):
            clusters.services_for(cloud.connection(), stacks=False)


# -- recording the stack's resources ---------------------------------------


def test_records_nested_resources_with_their_stack_and_owner(cloud):
    built = magnum_k8s(cloud)
    stack = clusters.StackRecord.from_api(
        {
            'id': built['stack']['id'],
            'stack_name': 'k8s-abc',
            'stack_status': 'CREATE_COMPLETE',
            'project': built['project']['id'],
        }
    )
    resources = {
        r.name: r for r in clusters.record_resources(cloud.connection(), stack)
    }
    server = resources['worker-0']
    assert server.stack == built['group']['stack_name']
    assert server.stack_id == built['group']['id']
    assert server.physical_id == built['server']['id']
    assert {r.project_id for r in resources.values()} == {
        built['project']['id']
    }
    # the SDK's resources() would drop nested_depth: it is sent
    assert any(
        'resources?nested_depth=100' in path for _, path in cloud.requests
    )


def test_left_behind_leaves_out_nested_stacks_and_heat_only_data(cloud):
    built = magnum_k8s(cloud)
    preview = force(cloud, None).preview(
        find(cloud, 'k8s', clusters.MagnumClusters())
    )
    names = {r.name for r in preview.left_behind()}
    assert names == {'net', 'subnet', 'router', 'iface', 'worker-0', 'bucket'}
    assert {r.name for r in preview.resources} == names | {'secret', 'workers'}
    assert built['stack']['id'] == preview.stack.id


# -- preview (dry run) -------------------------------------------------------


def test_preview_changes_nothing(cloud, clock):
    magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    _columns, rows = cli.preview_rows([preview], delete_leftovers=True)
    actions = {row[4]: row[7] for row in rows}
    assert actions['OS::Nova::Server'] == 'leave behind, then delete'
    assert actions['OS::Swift::Container'] == ('leave behind, then delete')
    assert preview.export['resources']  # taken before any delete
    assert cloud.changes == []


def test_preview_fails_before_any_change_when_abandon_is_disabled():
    with FakeHeatCloud(abandon_enabled=False) as cloud:
        magnum_k8s(cloud)
        engine = force(cloud, FakeClock())
        cluster = find(cloud, 'k8s', clusters.MagnumClusters())
        with pytest.raises(CascadeError) as err:
            engine.preview(cluster)
        assert 'enable_stack_abandon' in str(err.value)
        assert 'Stack Abandon is not supported.' in str(err.value)
        assert cloud.changes == []


def test_stack_whose_delete_would_take_the_callers_keypair_is_refused(
    cloud, clock
):
    stack = cloud.stack(
        'app', scenarios.project(cloud, 'tenant')['id'], on_delete='hang'
    )
    cloud.resource(stack, 'key', 'OS::Nova::KeyPair', 'deploy')
    heat = clusters.HeatStacks()
    cluster = find(cloud, 'app', heat)
    cloud.add('keypairs', id='deploy', name='deploy', user_id='admin')
    with pytest.raises(
        CascadeError,
        match=r'Heat would delete your own '
        r'keypair deploy',
    ):
        force(cloud, clock, service=heat).preview(cluster)
    # a stack being deleted already gets no delete from us: no risk
    cloud.delete_stack(stack)
    preview = force(cloud, clock, service=heat).preview(
        find(cloud, 'app', heat)
    )
    assert [r.type for r in preview.left_behind()] == ['OS::Nova::KeyPair']
    assert cloud.changes == []


def test_sdk_abandon_stack_returns_a_400_body_as_data(cloud):
    """Why the abandon goes through the adapter: if openstacksdk ever
    raises here, _stack_data's own check may be simplified."""
    cloud.abandon_enabled = False
    stack = cloud.stack('s', ADMIN_PROJECT)
    conn = cloud.connection()
    data = conn.orchestration.abandon_stack(
        conn.orchestration.get_stack(stack['id'])
    )
    assert data['error']['type'] == 'NotSupported'


# -- force-delete -------------------------------------------------------------


def test_delete_finishing_within_grace_abandons_nothing(cloud, clock):
    built = magnum_k8s(cloud, on_delete='complete')
    cloud.delete_polls = 3
    engine = force(cloud, clock)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert (outcome.result, outcome.record, outcome.ok) == (
        'deleted',
        'gone',
        True,
    )
    assert not any(p.endswith('/abandon') for _, p in cloud.changes)
    assert os.listdir('.') == []  # no manifest
    assert clock.time - clock.start < GRACE
    assert not cloud.exists('networks', built['network']['id'])


def test_stuck_magnum_delete_abandons_the_stack_and_the_cluster_goes(
    cloud, clock
):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert (outcome.result, outcome.record, outcome.ok) == (
        'abandoned',
        'gone',
        True,
    )
    assert mutations(cloud) == [
        ('DELETE', f'/v1/clusters/{built["cluster"]["uuid"]}'),
        (
            'DELETE',
            f'/v1/{ADMIN_PROJECT}/stacks/k8s-abc/'
            f'{built["stack"]["id"]}/abandon',
        ),
    ]
    # the abandon came after the whole grace period, on the fake clock
    assert clock.time - clock.start >= GRACE
    assert not cloud.exists('clusters', built['cluster']['uuid'])
    assert not cloud.exists('stacks', built['stack']['id'])
    assert not cloud.exists('stacks', built['group']['id'])
    # what the stack made is still there
    assert cloud.exists('networks', built['network']['id'])
    assert cloud.exists('servers', built['server']['id'])
    assert len(outcome.left_behind) == 6


def test_lookups_and_the_normal_delete_are_retried_when_they_may_pass(
    cloud, clock
):
    built = magnum_k8s(cloud)
    uuid = built['cluster']['uuid']
    cloud.faults += [
        ('GET', r'/v1/clusters', 503),
        ('DELETE', f'/v1/clusters/{uuid}', 502),
        ('GET', r'/resources', 500),
    ]
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(
            find(cloud, 'k8s', clusters.MagnumClusters(), clock=clock)
        )
    )
    assert (outcome.result, outcome.record, outcome.ok) == (
        'abandoned',
        'gone',
        True,
    )
    assert cloud.faults == []  # each fault was met, and retried
    # on the injected clock: the three retries, then the grace period's polls
    assert clock.sleeps[:3] == [1.0, 1.0, 1.0]


def test_a_service_that_keeps_failing_is_a_clear_error(cloud):
    virtual_time = FakeClock()
    magnum_k8s(cloud)
    cloud.faults += [('GET', r'/v1/clusters', 503)] * 8
    with pytest.raises(CascadeError, match=r'HTTP 503'):
        find(cloud, 'k8s', clusters.MagnumClusters(), clock=virtual_time)
    assert virtual_time.sleeps == [1, 2, 4, 8, 16, 30, 30]


def test_cluster_already_being_deleted_is_not_deleted_again(cloud, clock):
    built = magnum_k8s(cloud, status='DELETE_IN_PROGRESS')
    cloud.delete_stack(built['stack'])
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert outcome.record == 'gone'
    assert [p for _, p in mutations(cloud)] == [
        f'/v1/{ADMIN_PROJECT}/stacks/k8s-abc/{built["stack"]["id"]}/abandon'
    ]
    assert clock.sleeps == []  # no grace period


def test_failed_delete_is_retried_and_finished_after_the_abandon(cloud, clock):
    built = magnum_k8s(cloud, status='DELETE_FAILED', on_delete='fail')
    built['stack']['stack_status'] = 'DELETE_FAILED'
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    cluster_deletes = [
        p for m, p in mutations(cloud) if p.startswith('/v1/clusters/')
    ]
    # once for the grace period (it failed again at once, so no full
    # wait), once after the abandon so that Magnum destroys the record
    assert len(cluster_deletes) == 2
    assert clock.time - clock.start < GRACE
    assert (outcome.result, outcome.record) == ('abandoned', 'gone')
    assert not cloud.exists('clusters', built['cluster']['uuid'])


def test_manifest_lists_what_was_left_behind(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert outcome.manifest == (
        f'cluster-k8s-{built["stack"]["id"]}-abandoned.json'
    )
    with open(outcome.manifest) as f:
        manifest = json.load(f)
    assert manifest['format'] == 1
    assert manifest['state'] == 'abandoned'
    assert manifest['cluster']['id'] == built['cluster']['uuid']
    assert manifest['stack']['project_id'] == built['project']['id']
    by_type = {r['type']: r for r in manifest['resources']}
    assert set(by_type) == {
        'OS::Neutron::Net',
        'OS::Neutron::Subnet',
        'OS::Neutron::Router',
        'OS::Neutron::RouterInterface',
        'OS::Nova::Server',
        'OS::Swift::Container',
    }
    server = by_type['OS::Nova::Server']
    assert server['physical_id'] == built['server']['id']
    assert server['project_id'] == built['project']['id']
    assert server['stack_id'] == built['group']['id']
    assert server['kind'] == 'compute.server'
    assert by_type['OS::Swift::Container']['kind'] == (
        'object_store.container'
    )
    # the abandon came after a delete: Heat returned no resources, which is
    # why they were recorded first; the export from before has them all
    assert manifest['abandon']['id'] == built['stack']['id']
    assert manifest['abandon']['resources'] == {}
    assert manifest['export']['resources']['secret']['resource_data'] == {
        'value': 's3cret'
    }
    assert (
        'worker-0' in manifest['export']['resources']['workers']['resources']
    )


def test_manifest_goes_where_asked(cloud, clock, tmp_path):
    magnum_k8s(cloud)
    path = str(tmp_path / 'left.json')
    engine = force(cloud, clock, manifest=path)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert outcome.manifest == path
    with open(path) as f:
        assert len(json.load(f)['resources']) == 6


def test_abandon_disabled_after_the_check_fails_clearly(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.abandon_enabled = False  # heat.conf changed meanwhile
    outcome = engine.run(preview)
    assert not outcome.ok and outcome.result == 'failed'
    assert 'stack abandon disabled' in outcome.error
    assert 'enable_stack_abandon' in outcome.error
    assert cloud.exists('stacks', built['stack']['id'])
    assert os.listdir('.') == []  # nothing was left behind: no manifest


@pytest.mark.parametrize(
    'status,expected',
    [
        (
            403,
            'refused to abandon stack k8s-abc (HTTP 403): force-delete needs '
            'the admin role',
        ),
        (404, 'no longer knows stack k8s-abc'),
        (409, 'locked by another operation (HTTP 409)'),
    ],
)
def test_abandon_errors_are_clear(cloud, clock, status, expected):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.faults.append(('DELETE', r'/abandon$', status))
    outcome = engine.run(preview)
    assert expected in outcome.error
    assert outcome.result == 'failed'
    assert cloud.exists('stacks', built['stack']['id'])
    assert os.listdir('.') == []  # Heat refused: nothing was left behind


# -- an abandon whose answer may hide that it happened ----------------------


def read_json(path):
    with open(path) as f:
        return json.load(f)


def test_abandon_answered_500_with_the_stack_still_there_keeps_the_manifest(
    cloud, clock
):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.faults.append(('DELETE', r'/abandon$', 500))
    outcome = engine.run(preview)
    assert 'answered HTTP 500 to the abandon of stack k8s-abc' in (
        outcome.error
    )
    assert 'still exists 60s later, so it was most likely not abandoned' in (
        outcome.error
    )
    assert outcome.result == 'failed'
    assert cloud.exists('stacks', built['stack']['id'])
    # the manifest stays, and says that the outcome is unknown
    path = f'cluster-k8s-{built["stack"]["id"]}-abandoned.json'
    assert os.listdir('.') == [path] and outcome.manifest == path
    manifest = read_json(path)
    assert manifest['state'] == 'abandon-unknown'
    assert 'HTTP 500' in manifest['abandon_answer']
    assert manifest['stack_after_abandon'] == 'still exists after 60s'
    assert len(manifest['resources']) == 6
    # the stack was looked at for the settle time, not the whole timeout
    assert 60 <= clock.time - clock.start - GRACE < 70
    # the abandon itself was not tried again
    assert [p for _, p in mutations(cloud) if p.endswith('/abandon')] == [
        f'/v1/{ADMIN_PROJECT}/stacks/k8s-abc/{built["stack"]["id"]}/abandon'
    ]


@pytest.mark.parametrize('answer', [500, 502, 504, 'drop'])
def test_abandon_answered_with_an_error_but_done_is_an_abandon(
    cloud, clock, answer
):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, wait=True)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.lost_abandon_answers.append(answer)
    outcome = engine.run(preview)
    assert (outcome.result, outcome.record, outcome.ok) == (
        'abandoned',
        'gone',
        True,
    )
    assert not cloud.exists('stacks', built['stack']['id'])
    assert len(outcome.left_behind) == 6
    manifest = read_json(outcome.manifest)
    assert manifest['state'] == 'abandoned'
    assert manifest['abandon'] is None  # Heat's answer was lost
    assert manifest['export']['resources']  # taken before: still there
    detail = f'HTTP {answer}' if answer != 'drop' else 'Connection aborted'
    assert detail in manifest['abandon_answer']
    assert any(
        'The abandon may have happened all the same' in n for n in engine.notes
    )
    assert 'stack k8s-abc is gone: it was abandoned' in engine.notes


def test_abandon_unknown_then_the_leftovers_are_deleted(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, delete_leftovers=True)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.lost_abandon_answers.append(502)
    outcome = engine.run(preview)
    assert outcome.result == 'abandoned'
    assert not cloud.exists('servers', built['server']['id'])
    assert read_json(outcome.manifest)['leftovers'] == outcome.leftovers


# -- what is left behind is what still exists -------------------------------


def test_left_behind_lists_only_what_still_exists(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    # Heat's delete removed the server and the router's interface during
    # the grace period, and still holds their rows
    cloud._remove('servers', built['server']['id'])
    iface = next(
        p
        for p in cloud.all('ports')
        if p['device_id'] == built['router']['id']
    )
    cloud._remove('ports', iface['id'])
    listed_before = len(cloud.requests)
    outcome = engine.run(preview)
    assert outcome.result == 'abandoned'
    assert {r.type for r in outcome.left_behind} == {
        'OS::Neutron::Net',
        'OS::Neutron::Subnet',
        'OS::Neutron::Router',
        # no Swift in this cloud: it cannot be checked, so it is listed
        'OS::Swift::Container',
    }
    manifest = read_json(outcome.manifest)
    assert len(manifest['resources']) == 4
    assert sorted(manifest['already_gone']) == sorted(
        [
            f'OS::Nova::Server {built["server"]["id"]}',
            f'OS::Neutron::RouterInterface {built["router"]["id"]}:'
            f'subnet_id={built["subnet"]["id"]}',
        ]
    )
    assert any(
        '4 resource(s) left behind' in n and '2 more' in n
        for n in engine.notes
    )
    # one list per kind and project
    lists = [
        p.split('?')[0]
        for m, p in cloud.requests[listed_before:]
        if m == 'GET' and 'project_id=' in p
    ]
    for collection in ('networks', 'subnets', 'routers', 'ports'):
        assert lists.count(f'/v2.0/{collection}') == 1, collection
    # the servers' kind's, and the ports' kind's to tell whose server
    # each NIC is on (#29 item 2)
    assert lists.count('/v2.1/servers/detail') == 2


def test_left_behind_when_the_check_fails_lists_everything(cloud, clock):
    magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.forbidden.add(r'/v2.0/networks\?')
    outcome = engine.run(preview)
    assert outcome.result == 'abandoned' and outcome.ok
    assert len(outcome.left_behind) == 6
    assert any('could not check which' in n for n in engine.notes)


# -- one cluster's failure is its own ----------------------------------------


def test_one_cluster_failing_among_three_leaves_the_others_done(
    cloud, clock, monkeypatch
):
    built = {}
    for name in ('a', 'b', 'c'):
        project = scenarios.project(cloud, name + '-tenant')
        built[name] = k8s_stack(cloud, project['id'], name=name + '-stack')
        built[name]['cluster'] = cloud.magnum_cluster(
            name, project['id'], built[name]['stack']
        )
    engine = force(cloud, clock)
    magnum = clusters.MagnumClusters()
    previews = engine.preview_all([find(cloud, n, magnum) for n in 'abc'])
    real_write = manifests.write_manifest

    def disk_full_for_b(path, manifest):
        if path.startswith('cluster-b-') and manifest['state'] == 'abandoned':
            raise OSError(28, 'No space left on device')
        real_write(path, manifest)

    monkeypatch.setattr(manifests, 'write_manifest', disk_full_for_b)
    outcomes = engine.run_all(previews)
    assert [(o.cluster.name, o.result, o.ok) for o in outcomes] == [
        ('a', 'abandoned', True),
        ('b', 'abandoned', False),
        ('c', 'abandoned', True),
    ]
    b = outcomes[1]
    assert b.error == (
        'unexpected error: OSError: [Errno 28] No space left on device'
    )
    assert b.problems() == [f'{b.cluster.label()}: {b.error}']
    assert b.manifest.startswith('cluster-b-')  # the one written before
    for name in 'ac':
        assert not cloud.exists('stacks', built[name]['stack']['id'])


def test_a_preview_that_fails_is_that_clusters_alone(cloud, clock):
    magnum_k8s(cloud)
    other = scenarios.project(cloud, 'other')
    broken = cloud.magnum_cluster('broken', other['id'], None)
    # a Heat stack's id (a name that is none is a Cluster API driver's)
    broken['stack_id'] = 'deadbeef' * 4
    cloud.faults += [('GET', r'/stacks/(deadbeef){4}', 403)]
    engine = force(cloud, clock)
    magnum = clusters.MagnumClusters()
    previews = engine.preview_all(
        [find(cloud, 'broken', magnum), find(cloud, 'k8s', magnum)]
    )
    assert 'HTTP 403' in previews[0].error
    assert not previews[1].error
    outcomes = engine.run_all(previews)
    assert [(o.result, o.ok) for o in outcomes] == [
        ('failed', False),
        ('abandoned', True),
    ]
    # nothing was done to the cluster whose preview failed
    assert ('DELETE', f'/v1/clusters/{broken["uuid"]}') not in (
        mutations(cloud)
    )


# -- resuming from a manifest alone ------------------------------------------


def abandoned_without_leftovers(cloud, clock):
    """A force-delete that stopped after the abandon: the cluster and its
    stack are gone, the manifest lists what they left."""
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert outcome.result == 'abandoned'
    assert not cloud.exists('clusters', built['cluster']['uuid'])
    return built, outcome.manifest


def resumer(cloud, clock):
    """A force-delete with no cluster service: a resume needs none."""
    return force_delete.ForceDelete(
        cloud.connection(),
        [],
        force_delete.ForceDeleteOptions(delete_leftovers=True),
        clock=clock,
    )


def test_resume_from_a_manifest_alone_deletes_what_still_exists(cloud, clock):
    built, path = abandoned_without_leftovers(cloud, clock)
    engine = resumer(cloud, clock)
    manifest = engine.load(path)
    assert manifest.cluster.id == built['cluster']['uuid']
    before = len(cloud.requests)
    outcome = engine.resume(manifest)
    # no cluster looked up: Magnum was not asked
    assert not [
        p for _, p in cloud.requests[before:] if p.startswith('/v1/clusters')
    ]
    assert outcome.result == 'abandoned'
    assert outcome.not_deleted() == [
        'OS::Swift::Container bucket-1: not deleted: object-store is not '
        'in the catalog',
    ]
    for collection in ('networks', 'subnets', 'routers', 'servers'):
        assert not cloud.exists(collection, built[collection[:-1]]['id'])
    written = read_json(path)
    assert written['leftovers'] == outcome.leftovers
    assert written['state'] == 'abandoned'
    assert written['cluster']['id'] == built['cluster']['uuid']


def test_resume_again_keeps_what_was_deleted_and_looks_only_for_the_rest(
    cloud, clock
):
    built, path = abandoned_without_leftovers(cloud, clock)
    engine = resumer(cloud, clock)
    cloud.forbidden.add(rf'/servers/{built["server"]["id"]}$')
    first = engine.resume(engine.load(path))
    server = f'OS::Nova::Server {built["server"]["id"]}'
    assert first.leftovers[server].startswith('failed:')
    cloud.forbidden.clear()
    second = engine.resume(engine.load(path))
    assert second.leftovers[server] == 'deleted'
    router = f'OS::Neutron::Router {built["router"]["id"]}'
    # deleted by the first resume, so not looked for: still 'deleted'
    assert first.leftovers[router] == second.leftovers[router] == 'deleted'
    assert read_json(path)['leftovers'] == second.leftovers


def test_resume_of_a_manifest_written_before_the_abandon_was_known(
    cloud, clock
):
    _built, path = abandoned_without_leftovers(cloud, clock)
    data = read_json(path)
    data['state'] = 'abandoning'  # the run died right after the abandon
    force_delete.write_manifest(path, data)
    engine = resumer(cloud, clock)
    outcome = engine.resume(engine.load(path))  # the stack is gone
    assert outcome.ok is False  # the Swift container, as above
    assert read_json(path)['state'] == 'abandoned'


def test_resume_refuses_while_the_stack_was_not_abandoned(cloud, clock):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.faults.append(('DELETE', r'/abandon$', 503))
    outcome = engine.run(preview)
    assert read_json(outcome.manifest)['state'] == 'abandon-unknown'
    with pytest.raises(CascadeError) as err:
        resumer(cloud, clock).load(outcome.manifest)
    assert 'and the stack still exists' in str(err.value)
    assert cloud.exists('servers', built['server']['id'])


def test_resume_dry_run_says_what_it_would_do(cloud, clock):
    built, path = abandoned_without_leftovers(cloud, clock)
    cloud._remove('servers', built['server']['id'])
    engine = resumer(cloud, clock)
    changes = len(cloud.changes)
    actions = {
        r.type: action
        for r, action in engine.pending_actions(engine.load(path))
    }
    assert actions['OS::Nova::Server'] == 'nothing: already gone'
    assert actions['OS::Neutron::Net'] == 'delete'
    assert actions['OS::Swift::Container'] == 'delete'  # cannot be checked
    assert len(cloud.changes) == changes


@pytest.mark.parametrize(
    'content,expected',
    [
        (None, 'Cannot read the manifest'),
        ('{not json', 'not JSON'),
        ('{"format": 2}', 'not a force-delete manifest of format 1'),
        ('{"format": 1, "state": "abandoned"}', "KeyError: 'cluster'"),
    ],
)
def test_a_file_that_is_no_manifest_is_refused(tmp_path, content, expected):
    path = tmp_path / 'm.json'
    if content is not None:
        path.write_text(content)
    with pytest.raises(CascadeError, match=expected):
        force_delete.read_manifest(str(path))


def test_magnum_cluster_without_a_stack_is_deleted_normally(cloud, clock):
    cluster = cloud.magnum_cluster(
        'broken', ADMIN_PROJECT, None, status='CREATE_FAILED'
    )
    engine = force(cloud, clock)
    preview = engine.preview(find(cloud, 'broken', clusters.MagnumClusters()))
    assert preview.stack is None
    outcome = engine.run(preview)
    assert (outcome.result, outcome.record) == ('deleted', 'gone')
    assert not cloud.exists('clusters', cluster['uuid'])


def test_wait_for_a_record_that_stays_is_an_error(cloud, clock):
    built = magnum_k8s(cloud)
    built['cluster']['conductor_down'] = True
    engine = force(cloud, clock, wait=True, timeout=120)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert outcome.result == 'abandoned'
    assert 'still exists after 120s (status DELETE_IN_PROGRESS)' in (
        outcome.error
    )
    assert not outcome.ok


def test_without_wait_the_record_status_is_reported(cloud, clock):
    built = magnum_k8s(cloud)
    built['cluster']['conductor_down'] = True
    engine = force(cloud, clock)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert (outcome.result, outcome.record, outcome.ok) == (
        'abandoned',
        'DELETE_IN_PROGRESS',
        True,
    )


def test_sahara_cluster_is_force_deleted(cloud, clock):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'])
    built = sahara_k8s(cloud, sahara)
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'hadoop', clusters.SaharaClusters()))
    )
    assert (outcome.result, outcome.record) == ('abandoned', 'gone')
    assert mutations(cloud)[0] == ('DELETE', f'/v2/clusters/{sahara["id"]}')
    assert not cloud.exists('sahara_clusters', sahara['id'])
    assert cloud.exists('networks', built['network']['id'])
    assert outcome.manifest.startswith('cluster-hadoop-')


def test_sahara_cluster_left_in_error_is_deleted_again(cloud, clock):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'], status='Error')
    sahara_k8s(cloud, sahara, on_delete='fail')
    engine = force(cloud, clock, wait=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'hadoop', clusters.SaharaClusters()))
    )
    deletes = [p for _, p in mutations(cloud) if p.startswith('/v2/')]
    assert deletes == [f'/v2/clusters/{sahara["id"]}'] * 2
    assert outcome.record == 'gone'


# -- which stack is a Sahara cluster's (issue #29, suspect 3) -----------------


def sahara_stacks(cloud, sahara):
    return clusters.SaharaClusters().stacks(
        cloud.connection(), find(cloud, sahara['name'], SAHARA)
    )


SAHARA = clusters.SaharaClusters()


def test_a_sahara_stack_named_after_the_cluster_and_its_id_is_found(cloud):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'])
    stack = sahara_k8s(cloud, sahara)['stack']
    assert stack['stack_name'] == 'hadoop' + sahara['id'][:8]
    # a stack of the cluster's bare name, Sahara's or not, is not its stack
    cloud.stack('hadoop', project['id'])
    assert [s.id for s in sahara_stacks(cloud, sahara)] == [stack['id']]


def test_a_legacy_sahara_stack_named_after_the_cluster_is_found(cloud):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'], legacy=True)
    stack = sahara_k8s(cloud, sahara)['stack']
    assert [s.id for s in sahara_stacks(cloud, sahara)] == [stack['id']]


def test_a_stack_of_the_clusters_name_that_sahara_did_not_make_is_refused(
    cloud, clock
):
    """The cluster's own stack is gone; a user's stack of the cluster's
    name in its project is not abandoned, nor what it holds deleted."""
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'], status='Error')
    theirs = k8s_stack(cloud, project['id'], name='hadoop')
    engine = force(cloud, clock, delete_leftovers=True)
    [preview] = engine.preview_all([find(cloud, 'hadoop', SAHARA)])
    assert preview.error == (
        f'sahara cluster hadoop ({sahara["id"]}): stack hadoop '
        f'({theirs["stack"]["id"]}) of its project is named after it, but '
        f'its description does not say that Sahara made it for this '
        f'cluster: refusing; force-delete the right stack with --stack.'
    )
    assert engine.run(preview).ok is False
    assert not mutations(cloud)
    assert cloud.exists('networks', theirs['network']['id'])


def test_two_sahara_stacks_of_the_clusters_name_are_refused(cloud, clock):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'], legacy=True)
    one = cloud.sahara_stack(sahara)
    two = cloud.sahara_stack(sahara)
    engine = force(cloud, clock, delete_leftovers=True)
    [preview] = engine.preview_all([find(cloud, 'hadoop', SAHARA)])
    assert preview.error == (
        f'sahara cluster hadoop ({sahara["id"]}): 2 stacks of project '
        f'{project["id"]} are named \'hadoop\': {one["id"]}, {two["id"]}; '
        f'force-delete the right one with --stack.'
    )
    assert not mutations(cloud)


def test_the_command_ends_1_refusing_a_stranger_of_the_clusters_name(
    cloud, osc
):
    project = scenarios.project(cloud, 'hadoop-team')
    sahara = cloud.sahara_cluster('hadoop', project['id'], status='Error')
    theirs = k8s_stack(cloud, project['id'], name='hadoop')
    result = osc(
        'cluster', 'force-delete', sahara['id'], '--yes',
        '--delete-leftovers', '--grace', '0',
    )  # fmt: skip
    assert result.code == 1
    assert (
        f'stack hadoop ({theirs["stack"]["id"]}) of its project is named '
        'after it, but its description does not say that Sahara made it '
        'for this cluster: refusing'
    ) in result.stderr, result.stderr
    assert not mutations(cloud)


def test_plain_stack_is_force_deleted(cloud, clock):
    project = scenarios.project(cloud, 'tenant')
    built = k8s_stack(cloud, project['id'], name='app')
    engine = force(cloud, clock, service=clusters.HeatStacks())
    outcome = engine.run(
        engine.preview(find(cloud, 'app', clusters.HeatStacks()))
    )
    assert (outcome.result, outcome.record) == ('abandoned', 'gone')
    assert mutations(cloud)[0] == (
        'DELETE',
        f'/v1/{ADMIN_PROJECT}/stacks/app/{built["stack"]["id"]}',
    )
    assert (
        outcome.manifest == f'stack-app-{built["stack"]["id"]}-abandoned.json'
    )
    assert not cloud.exists('stacks', built['stack']['id'])
    assert {r.project_id for r in outcome.left_behind} == {project['id']}


# -- leftovers ---------------------------------------------------------------


def test_delete_leftovers_in_dependency_order(cloud, clock):
    built = magnum_k8s(cloud)
    cloud.resource(
        built['stack'], 'deploy', 'OS::Heat::SoftwareDeployment', 'dep-1'
    )
    other_net, _ = scenarios.network(
        cloud, built['project']['id'], name='not-the-stacks'
    )
    engine = force(cloud, clock, delete_leftovers=True)
    outcome = engine.run(
        engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    order = [p.split('?')[0] for m, p in cloud.changes]
    router = built['router']['id']
    assert order.index(f'/v2.0/routers/{router}/remove_router_interface') < (
        order.index(f'/v2.0/routers/{router}')
    )
    assert order.index(f'/v2.1/servers/{built["server"]["id"]}') < (
        order.index(f'/v2.0/networks/{built["network"]["id"]}')
    )
    for collection in ('networks', 'subnets', 'routers', 'servers'):
        assert not cloud.exists(collection, built[collection[:-1]]['id'])
    assert cloud.exists('networks', other_net['id'])
    leftovers = outcome.leftovers
    assert (
        leftovers[
            f'OS::Neutron::RouterInterface {router}:subnet_id='
            f'{built["subnet"]["id"]}'
        ]
        == 'deleted'
    )
    assert outcome.not_deleted() == [
        'OS::Heat::SoftwareDeployment dep-1: not deleted: the cascade has '
        'no kind for OS::Heat::SoftwareDeployment',
        # the fake cloud has no Swift
        'OS::Swift::Container bucket-1: not deleted: object-store is not '
        'in the catalog',
    ]
    assert not outcome.ok
    with open(outcome.manifest) as f:
        assert json.load(f)['leftovers'] == leftovers


def test_leftovers_gone_meanwhile_are_not_a_failure(cloud, clock):
    project = scenarios.project(cloud, 'tenant')
    stack = cloud.stack('app', project['id'], on_delete='hang')
    net, _ = scenarios.network(cloud, project['id'])
    vol = scenarios.volume(cloud, project['id'])
    cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    cloud.resource(stack, 'vol', 'OS::Cinder::Volume', vol['id'])
    engine = force(
        cloud, clock, service=clusters.HeatStacks(), delete_leftovers=True
    )
    preview = engine.preview(find(cloud, 'app', clusters.HeatStacks()))
    cloud._remove('volumes', vol['id'])  # deleted by hand meanwhile
    outcome = engine.run(preview)
    assert outcome.leftovers == {
        f'OS::Neutron::Net {net["id"]}': 'deleted',
        f'OS::Cinder::Volume {vol["id"]}': 'already gone',
    }
    assert outcome.ok


def test_leftover_child_stack_of_os_heat_stack_is_deleted(cloud, clock):
    project = scenarios.project(cloud, 'tenant')
    parent = cloud.stack('parent', project['id'], on_delete='hang')
    child = cloud.stack('child', project['id'])  # a stack of its own
    cloud.resource(parent, 'remote', 'OS::Heat::Stack', child['id'])
    engine = force(
        cloud, clock, service=clusters.HeatStacks(), delete_leftovers=True
    )
    outcome = engine.run(
        engine.preview(find(cloud, 'parent', clusters.HeatStacks()))
    )
    assert outcome.leftovers == {f'OS::Heat::Stack {child["id"]}': 'deleted'}
    assert ('DELETE', f'/v1/{ADMIN_PROJECT}/stacks/child/{child["id"]}') in (
        mutations(cloud)
    )
    assert not cloud.exists('stacks', child['id'])


def test_leftover_that_fails_is_reported_and_blocks_what_needs_it(
    cloud, clock
):
    built = magnum_k8s(cloud)
    engine = force(cloud, clock, delete_leftovers=True)
    preview = engine.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    cloud.forbidden.add(rf'/servers/{built["server"]["id"]}$')
    outcome = engine.run(preview)
    server = outcome.leftovers[f'OS::Nova::Server {built["server"]["id"]}']
    assert server.startswith('failed:') and '403' in server
    assert cloud.exists('servers', built['server']['id'])
    assert outcome.result == 'abandoned' and not outcome.ok
    assert any('failed' in line for line in outcome.not_deleted())


# -- the stuck sweep ---------------------------------------------------------

NOW = datetime.datetime(2026, 11, 3, 10, 0, tzinfo=datetime.UTC)
DAYS_AGO_2 = '2026-11-01T10:00:00+00:00'
HOUR_AGO = '2026-11-03T09:00:00+00:00'


def test_stuck_sweep_takes_old_unsettled_and_failed_deletes(cloud):
    for name, status, updated in (
        ('old-deleting', 'DELETE_IN_PROGRESS', DAYS_AGO_2),
        ('young-deleting', 'DELETE_IN_PROGRESS', HOUR_AGO),
        ('old-creating', 'CREATE_IN_PROGRESS', '2026-11-02T09:00:00Z'),
        ('old-delete-failed', 'DELETE_FAILED', DAYS_AGO_2),
        ('old-create-failed', 'CREATE_FAILED', DAYS_AGO_2),
        ('old-complete', 'CREATE_COMPLETE', DAYS_AGO_2),
    ):
        stack = cloud.stack(
            name + '-stack',
            ADMIN_PROJECT,
            status='DELETE_IN_PROGRESS',
            on_delete='hang',
        )
        cloud.magnum_cluster(
            name, ADMIN_PROJECT, stack, status=status, updated=updated
        )
    stuck = clusters.find_stuck(
        cloud.connection(),
        [clusters.MagnumClusters()],
        clusters.parse_age('24h'),
        NOW,
        retry=RetryPolicy(),
        clock=FakeClock(),
    )
    assert [(s.cluster.name, clusters.format_age(s.age)) for s in stuck] == [
        ('old-delete-failed', '2d'),
        ('old-deleting', '2d'),
        ('old-creating', '1d 1h'),
    ]


def test_stuck_sweep_of_sahara_treats_error_as_final(cloud):
    for name, status in (
        ('deleting', 'Deleting'),
        ('spawning', 'Spawning'),
        ('error', 'Error'),
        ('active', 'Active'),
    ):
        cloud.sahara_cluster(
            name,
            ADMIN_PROJECT,
            status=status,
            updated='2026-11-01T10:00:00',
            legacy=True,
        )
    # Sahara's delete waits for its stack
    cloud.stack(
        'deleting',
        ADMIN_PROJECT,
        status='DELETE_IN_PROGRESS',
        on_delete='hang',
    )
    stuck = clusters.find_stuck(
        cloud.connection(),
        [clusters.SaharaClusters()],
        3600,
        NOW,
        retry=RetryPolicy(),
        clock=FakeClock(),
    )
    assert sorted(s.cluster.name for s in stuck) == ['deleting', 'spawning']


def test_stuck_sweep_of_stacks_covers_every_project(cloud):
    project = scenarios.project(cloud, 'tenant')
    old = cloud.stack(
        'old', project['id'], status='DELETE_IN_PROGRESS', updated=None
    )  # never updated: its creation counts
    cloud.stack(
        'young',
        project['id'],
        status='DELETE_IN_PROGRESS',
        updated='2026-11-03T09:59:00Z',
    )
    cloud.nested(old, 'group')['stack_status'] = 'DELETE_IN_PROGRESS'
    stuck = clusters.find_stuck(
        cloud.connection(),
        [clusters.HeatStacks()],
        600,
        NOW,
        retry=RetryPolicy(),
        clock=FakeClock(),
    )
    assert [(s.cluster.name, s.cluster.project_id) for s in stuck] == [
        ('old', project['id'])
    ]
    columns, rows = cli.stuck_rows(stuck)
    assert dict(zip(columns, rows[0]))['Updated At'] == (
        '2026-11-01T10:00:00Z'
    )


@pytest.mark.parametrize(
    'service,status',
    [
        (clusters.MagnumClusters(), 'UPDATE_IN_PROGRESS'),
        (clusters.MagnumClusters(), 'ROLLBACK_IN_PROGRESS'),
        (clusters.HeatStacks(), 'RESUME_IN_PROGRESS'),
        (clusters.HeatStacks(), 'SNAPSHOT_IN_PROGRESS'),
        (clusters.SaharaClusters(), 'Scaling'),
        (clusters.SaharaClusters(), 'Decommissioning'),
    ],
)
def test_updating_is_stuck_but_taken_only_when_asked(service, status):
    assert service.is_stuck(status)
    assert service.is_updating(status)


@pytest.mark.parametrize(
    'service,status',
    [
        (clusters.MagnumClusters(), 'CREATE_IN_PROGRESS'),
        (clusters.MagnumClusters(), 'DELETE_IN_PROGRESS'),
        (clusters.MagnumClusters(), 'DELETE_FAILED'),
        (clusters.HeatStacks(), 'DELETE_IN_PROGRESS'),
        (clusters.SaharaClusters(), 'Spawning'),
        (clusters.SaharaClusters(), 'Deleting'),
    ],
)
def test_creating_and_deleting_are_not_updating(service, status):
    assert service.is_stuck(status)
    assert not service.is_updating(status)


def test_stuck_sweep_takes_updating_clusters_only_when_asked(cloud):
    for name, status in (
        ('deleting', 'DELETE_IN_PROGRESS'),
        ('updating', 'UPDATE_IN_PROGRESS'),
        ('rolling-back', 'ROLLBACK_IN_PROGRESS'),
    ):
        stack = cloud.stack(name + '-stack', ADMIN_PROJECT)
        cloud.magnum_cluster(
            name, ADMIN_PROJECT, stack, status=status, updated=DAYS_AGO_2
        )

    def sweep(**options):
        return sorted(
            s.cluster.name
            for s in clusters.find_stuck(
                cloud.connection(),
                [clusters.MagnumClusters()],
                3600,
                NOW,
                retry=RetryPolicy(),
                clock=FakeClock(),
                **options,
            )
        )

    assert sweep() == ['deleting']
    assert sweep(include_updating=True) == [
        'deleting',
        'rolling-back',
        'updating',
    ]


def test_a_second_run_points_to_the_manifest_of_the_first(cloud, clock):
    built = magnum_k8s(cloud)
    built['cluster']['conductor_down'] = True  # the record stays
    first = force(cloud, clock)
    outcome = first.run(
        first.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert outcome.result == 'abandoned'
    again = force(cloud, clock)
    second = again.run(
        again.preview(find(cloud, 'k8s', clusters.MagnumClusters()))
    )
    assert second.result == 'deleted'  # nothing left to abandon
    assert any(
        f'{outcome.manifest} lists what an earlier run left behind' in n
        and f'--delete-leftovers --manifest {outcome.manifest}' in n
        for n in again.notes
    )
