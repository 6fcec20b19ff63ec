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

"""`cluster force-delete` of a Magnum cluster on a Cluster API driver (no
Heat stack), on fakes modelled on magnum 23.0.0 (its drivers no longer
include Heat's; microversion 1.13 shows ``cluster_id`` for ``stack_id``),
magnum-cluster-api and magnum-capi-helm."""

import json

import pytest

from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds import container_infra
from osc_cascade.workflows import clusters, force_delete
from osc_cascade.workflows.force_delete import capi
from osc_cascade.workflows.k8s import conventions as conv
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud

MAGNUM = clusters.MagnumClusters()


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with ServicesCloud() as c:
        yield c


def conn_at(cloud, microversion=None):
    if microversion is None:
        return cloud.connection()
    return cloud.connection(
        container_infrastructure_management_default_microversion=microversion
    )


def mca_cluster(cloud, **extra):
    """A magnum-cluster-api cluster whose delete failed: its cloud
    controller manager and CSI know it by its UUID, its Cluster API
    cluster is magnum-system/kube-ab12c."""
    p = scenarios.project(cloud, 'tenant')
    pid = p['id']
    cluster = cloud.capi_cluster('k8s', pid, 'kube-ab12c', **extra)
    uuid = cluster['uuid']
    capo = 'k8s-clusterapi-cluster-magnum-system-kube-ab12c'
    net, subnet = scenarios.network(cloud, pid, capo)
    desc = f'Created by cluster-api-provider-openstack cluster {capo[23:]}'
    net['description'] = subnet['description'] = desc
    subnet['name'] = capo
    node = scenarios.server(cloud, pid, 'kube-ab12c-md-0', status='ERROR')
    scenarios.port(
        cloud,
        pid,
        net,
        subnet,
        'kube-ab12c-md-0-0',
        device_id=node['id'],
        device_owner='compute:nova',
        description=desc,
    )
    _apps, apps_subnet = scenarios.network(cloud, pid, 'apps')
    return {
        'pid': pid,
        'cluster': cluster,
        'net': net,
        'node': node,
        'lb': scenarios.occm_load_balancer(cloud, pid, subnet, uuid),
        # a cluster whose name starts with this one's UUID: not it
        'near': scenarios.occm_load_balancer(
            cloud, pid, apps_subnet, uuid + '-2'
        ),
        'vol': scenarios.volume(
            cloud, pid, 'pvc', metadata={conv.CINDER_CSI_KEY: uuid}
        ),
        'apps': _apps,
    }


@pytest.mark.parametrize('microversion', [None, '1.11', '1.13', '1.14'])
def test_stack_id_before_and_after_1_13(cloud, microversion):
    built = mca_cluster(cloud)
    conn = conn_at(cloud, microversion)
    [found] = MAGNUM.find(conn, built['cluster']['uuid'])
    assert found.stack_id == 'kube-ab12c'
    assert capi.on_cluster_api(found)
    refs = container_infra.Cluster().list(conn, built['pid'])
    assert [r.attrs.get('stack_id') for r in refs] == ['kube-ab12c']
    shown = {'cluster_id' if microversion in ('1.13', '1.14') else 'stack_id'}
    assert shown <= set(
        conn.container_infrastructure_management.get(
            f'/clusters/{found.id}'
        ).json()
    )


def test_a_heat_stack_id_is_not_a_cluster_api_cluster():
    record = clusters.ClusterRecord(
        'magnum',
        'u',
        'n',
        'p',
        'CREATE_FAILED',
        '',
        '6f4e3b1a-aaaa-4bbb-8ccc-0123456789ab',
    )
    assert not capi.on_cluster_api(record)
    assert not capi.on_cluster_api(
        clusters.ClusterRecord('magnum', 'u', 'n', 'p', 'x', '', '')
    )
    assert capi.on_cluster_api(
        clusters.ClusterRecord('magnum', 'u', 'n', 'p', 'x', '', 'k-ab12')
    )


def test_identities_of_both_drivers():
    record = clusters.ClusterRecord(
        'magnum', 'uuid-1', 'prod', 'Proj-1', 'x', '', 'prod-abcdef123456'
    )
    mca, mch = capi.identities(record)
    assert mca.occm == mca.csi == 'uuid-1'
    assert mca.capi == 'magnum-system-prod-abcdef123456'
    assert mch.occm == mch.csi == 'prod-abcdef123456'
    assert mch.capi == 'magnum-proj1-prod-abcdef123456'


def engine(cloud, **options):
    notes = []
    options.setdefault('grace', 0)
    made = force_delete.ForceDelete(
        cloud.connection(),
        [MAGNUM],
        force_delete.ForceDeleteOptions(**options),
        notify=notes.append,
        clock=FakeClock(yields=True),
    )
    made.notes = notes
    return made


def find(cloud, name):
    return clusters.find_cluster(
        cloud.connection(),
        [MAGNUM],
        name,
        retry=RetryPolicy(),
        clock=FakeClock(),
    )


def test_force_delete_deletes_the_footprint_then_asks_magnum(cloud):
    built = mca_cluster(cloud)
    force = engine(cloud)
    [preview] = force.preview_all([find(cloud, 'k8s')])
    assert not preview.error and preview.stack is None
    planned = {s.target.id: s.action for s in preview.plan.steps.values()}
    for key in ('lb', 'vol', 'net', 'node'):
        assert planned[built[key]['id']] == 'delete', key
    assert planned[built['near']['id']] == 'keep'
    [outcome] = force.run_all([preview])
    assert outcome.ok, outcome.problems()
    assert outcome.result == capi.FOOTPRINT_DELETED
    # the management cluster is gone: the driver's delete fails, and
    # Magnum keeps the record DELETE_FAILED (as the real one does)
    assert outcome.record == 'DELETE_FAILED'
    assert any(
        'failed to delete the Cluster API cluster' in n
        and 'only an operator can remove the record' in n
        for n in force.notes
    )
    assert not cloud.exists('loadbalancers', built['lb']['id'])
    assert cloud.exists('loadbalancers', built['near']['id'])
    assert not cloud.exists('volumes', built['vol']['id'])
    assert not cloud.exists('networks', built['net']['id'])
    assert cloud.exists('networks', built['apps']['id'])
    assert ('DELETE', f'/v1/clusters/{built["cluster"]["uuid"]}') in [
        (m, p.split('?')[0]) for m, p in cloud.changes
    ]
    # no Heat stack of the cluster's stack_id was looked up
    assert not any(
        'kube-ab12c' in p for _m, p in cloud.requests if '/stacks' in p
    )


def test_a_slow_management_cluster_leaves_it_deleting(cloud):
    mca_cluster(cloud, management_slow=True)
    force = engine(cloud)
    [outcome] = force.run_all(force.preview_all([find(cloud, 'k8s')]))
    assert outcome.ok and outcome.record == 'DELETE_IN_PROGRESS'
    assert any(
        'deletes it once its management cluster reports' in n
        for n in force.notes
    )


def test_magnum_finishes_when_its_management_cluster_answers(cloud):
    built = mca_cluster(cloud, management_up=True)
    force = engine(cloud)
    [outcome] = force.run_all(force.preview_all([find(cloud, 'k8s')]))
    # the normal delete removed the record; what Cluster API does not
    # delete (the cloud controller manager's load balancer, the CSI
    # volume) goes after it, the cluster being gone
    assert outcome.ok and outcome.record == 'gone'
    assert outcome.result == force_delete.DELETED_NORMALLY
    assert not cloud.exists('loadbalancers', built['lb']['id'])
    assert not cloud.exists('volumes', built['vol']['id'])
    assert cloud.exists('loadbalancers', built['near']['id'])


def test_healthy_cluster_is_refused_without_force(cloud):
    built = mca_cluster(cloud, status='CREATE_COMPLETE')
    built['cluster']['health_status'] = 'HEALTHY'
    force = engine(cloud)
    [preview] = force.preview_all([find(cloud, 'k8s')])
    assert 'HEALTHY' in preview.error and '--force' in preview.error
    [preview] = engine(cloud, force=True).preview_all([find(cloud, 'k8s')])
    assert not preview.error


def test_active_nodes_are_refused_without_force(cloud):
    built = mca_cluster(cloud)
    built['node']['status'] = 'ACTIVE'
    [preview] = engine(cloud).preview_all([find(cloud, 'k8s')])
    assert 'ACTIVE' in preview.error
    [outcome] = engine(cloud).run_all([preview])
    assert not outcome.ok
    assert cloud.exists('loadbalancers', built['lb']['id'])


def test_cli_dry_run_and_stuck_list(cloud, osc):
    built = mca_cluster(cloud)
    result = osc(
        'cluster',
        'force-delete',
        built['cluster']['uuid'],
        '--dry-run',
        '-f',
        'json',
    )
    assert result.code == 0, result.stderr
    rows = {r['Physical ID']: r for r in json.loads(result.stdout)}
    assert rows[built['lb']['id']]['Action'] == 'delete'
    assert rows[built['near']['id']]['Action'].startswith('keep: ')
    result = osc(
        'cluster', 'stuck', 'list', '--older-than', '0s', '-f', 'json'
    )
    assert result.code == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row['Stack ID'] == 'kube-ab12c'


def test_a_cluster_whose_driver_named_nothing_says_its_record_stays(cloud):
    """magnum-cluster-api on the minicloud: its create fails at its first
    call to the management cluster, before it saves the Cluster API
    cluster's name (stack_id stays null), and its delete fails too."""
    p = scenarios.project(cloud, 'tenant')
    cloud.capi_cluster('k8s', p['id'], None, status='CREATE_FAILED')
    force = engine(cloud)
    [preview] = force.preview_all([find(cloud, 'k8s')])
    assert not preview.error
    [outcome] = force.run_all([preview])
    assert outcome.record == 'DELETE_FAILED'
    assert outcome.result == force_delete.RECORD_LEFT
    assert any(
        'names no stack nor Cluster API cluster' in n for n in force.notes
    )
    assert any(
        'only an operator can remove the record' in n for n in force.notes
    )
