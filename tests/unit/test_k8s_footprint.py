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

"""A Kubernetes cluster's footprint on the fake cloud, and `cluster
leftovers delete` in-process: the cluster `prod` beside `prod-2` and
another project."""

import json

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.v1.cluster_leftovers import DeleteClusterLeftovers
from osc_cascade.workflows.k8s import conventions as conv
from osc_cascade.workflows.k8s import footprint
from tests.unit import scenarios
from tests.unit.conftest import shell_runner
from tests.unit.fakes.clouds import ServicesCloud

CSI = conv.CINDER_CSI_KEY
CAPO = 'Created by cluster-api-provider-openstack cluster default-prod'


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def world(cloud, external):
    return make_world(cloud, external)


def make_world(cloud, external):
    """`prod`'s footprint beside `prod-2`'s and another project's."""
    p = scenarios.project(cloud, 'k8s')
    other = scenarios.project(cloud, 'other')
    pid = p['id']
    shared_net, shared_subnet = scenarios.network(cloud, other['id'], 'shared')
    net, subnet = scenarios.network(
        cloud, pid, 'k8s-clusterapi-cluster-default-prod'
    )
    net['description'] = subnet['description'] = CAPO
    subnet['name'] = net['name']
    router, _iface = scenarios.router(
        cloud, pid, subnet, external, name=net['name']
    )
    router['description'] = CAPO
    sg = scenarios.security_group(
        cloud, pid, 'k8s-cluster-default-prod-secgroup-worker'
    )
    node = scenarios.server(cloud, pid, 'prod-md-0-abcde', status='ERROR')
    scenarios.port(
        cloud,
        pid,
        net,
        subnet,
        'prod-md-0-abcde-0',
        device_id=node['id'],
        device_owner='compute:nova',
        description=CAPO,
        security_groups=[sg['id']],
    )
    lb = scenarios.occm_load_balancer(
        cloud, pid, subnet, 'prod', members=[shared_subnet]
    )
    _apps, apps_subnet = scenarios.network(cloud, pid, 'apps')
    lb2 = scenarios.occm_load_balancer(cloud, pid, apps_subnet, 'prod-2')
    near = scenarios.occm_load_balancer(cloud, pid, apps_subnet, 'prod_x')
    theirs = scenarios.occm_load_balancer(
        cloud, other['id'], shared_subnet, 'prod'
    )
    vol = scenarios.volume(cloud, pid, 'pvc-1', metadata={CSI: 'prod'})
    vol2 = scenarios.volume(cloud, pid, 'pvc-2', metadata={CSI: 'prod-2'})
    return {
        'pid': pid,
        'other': other['id'],
        'net': net,
        'subnet': subnet,
        'router': router,
        'sg': sg,
        'node': node,
        'lb': lb,
        'lb2': lb2,
        'near': near,
        'theirs': theirs,
        'vol': vol,
        'vol2': vol2,
        'shared_net': shared_net,
    }


def find(conn, pid, capi=True):
    ident = conv.Identity.of(
        'prod', 'default' if capi else '', 'prod' if capi else ''
    )
    return footprint.find(conn, ident, pid, retry=RetryPolicy(), clock=Clock())


def ids(found):
    return {r.id for r, _c in found.values()}


def test_footprint_is_prods_whole_convention_only(conn, world):
    fp = find(conn, world['pid'])
    mine = ids(fp.mine)
    for key in ('net', 'subnet', 'router', 'sg', 'node', 'lb', 'vol'):
        assert world[key]['id'] in mine, key
    for key in ('lb2', 'near', 'theirs', 'vol2', 'shared_net'):
        assert world[key]['id'] not in mine | ids(fp.kept), key
    assert world['near']['id'] in ids(fp.strangers)
    assert world['lb2']['id'] in ids(fp.strangers)
    assert not fp.active


def test_network_with_someone_elses_port_is_kept(cloud, conn, world):
    # a server that is not the cluster's, on the cluster's network
    stranger = scenarios.server(cloud, world['pid'], 'mine-not-prods')
    scenarios.port(
        cloud,
        world['pid'],
        world['net'],
        world['subnet'],
        'p',
        device_id=stranger['id'],
        device_owner='compute:nova',
        security_groups=[world['sg']['id']],
    )
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert world['net']['id'] in kept
    assert world['subnet']['id'] in kept
    assert world['router']['id'] in kept  # it serves the kept subnet
    assert world['sg']['id'] in kept
    assert world['lb']['id'] in ids(fp.mine)


def test_another_clusters_load_balancer_keeps_the_network(cloud, conn, world):
    scenarios.occm_load_balancer(
        cloud, world['pid'], world['subnet'], 'prod-2', svc='api'
    )
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert 'Octavia' in kept[world['net']['id']]
    assert world['subnet']['id'] in kept


def test_volume_on_a_server_not_the_clusters_is_kept(cloud, conn, world):
    stranger = scenarios.server(cloud, world['pid'], 'db')
    scenarios.attach(cloud, world['vol'], stranger)
    fp = find(conn, world['pid'])
    assert 'db' not in ids(fp.mine)
    assert world['vol']['id'] in ids(fp.kept)


def test_active_nodes_are_reported(conn, world):
    world['node']['status'] = 'ACTIVE'
    fp = find(conn, world['pid'])
    assert [r.id for r in fp.active] == [world['node']['id']]


def test_plan_orders_and_keeps(conn, world):
    fp = find(conn, world['pid'])
    plan = footprint.plan(fp, kinds_mod.build())
    order = plan.order()
    deletes = [s for s in order if s.startswith('delete:')]
    pos = {plan.steps[s].target.id: i for i, s in enumerate(deletes)}
    lb, netkey = world['lb']['id'], world['net']['id']
    assert (plan.steps[deletes[pos[lb]]].id, deletes[pos[netkey]]) in {
        (a, b) for a, b in plan.edges
    } or pos[lb] < pos[netkey]
    kept = [s for s in plan.steps.values() if s.action == 'keep']
    assert {s.target.id for s in kept} >= {
        world['near']['id'],
        world['lb2']['id'],
    }


@pytest.fixture
def osc(monkeypatch, virtual_time):
    return leftovers_shell(monkeypatch)


def leftovers_shell(monkeypatch):
    """The shell, with the command added: the test venv's entry points
    may not know it yet."""
    return shell_runner(
        monkeypatch,
        prepare=lambda app: app.command_manager.add_command(
            'cluster leftovers delete', DeleteClusterLeftovers
        ),
    )


ARGS = (
    'cluster',
    'leftovers',
    'delete',
    'prod',
    '--capi-namespace',
    'default',
)


def test_cli_dry_run_then_delete(cloud, osc, world, tmp_path):
    result = osc(*ARGS, '--project', world['pid'], '--dry-run', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r['ID'] for r in rows} >= {world['lb']['id'], world['vol']['id']}
    before = {lb['id'] for lb in cloud.all('loadbalancers')}
    assert world['lb']['id'] in before
    result = osc(
        *ARGS, '--project', world['pid'], '--yes',
        '--report-file', str(tmp_path / 'run.json'),
    )  # fmt: skip
    assert result.code == 0, result.stderr
    done = json.loads((tmp_path / 'run.json').read_text())
    assert done['command'] == 'cluster leftovers delete'
    assert f'note: the record of the run: {tmp_path / "run.json"}' in (
        result.stderr
    )
    lbs = {lb['id'] for lb in cloud.all('loadbalancers')}
    assert world['lb']['id'] not in lbs
    assert {
        world['lb2']['id'],
        world['near']['id'],
        world['theirs']['id'],
    } <= lbs
    vols = {v['id'] for v in cloud.all('volumes')}
    assert world['vol']['id'] not in vols and world['vol2']['id'] in vols
    nets = {n['id'] for n in cloud.all('networks')}
    assert world['net']['id'] not in nets and world['shared_net']['id'] in nets


def test_cli_refuses_a_cluster_with_active_nodes(osc, world):
    world['node']['status'] = 'ACTIVE'
    result = osc(*ARGS, '--project', world['pid'], '--dry-run')
    assert result.code == 1
    assert 'ACTIVE' in result.stderr and '--force' in result.stderr
    result = osc(*ARGS, '--project', world['pid'], '--dry-run', '--force')
    assert result.code == 0, result.stderr


def test_cli_graph(osc, world):
    result = osc(*ARGS, '--project', world['pid'], '--dry-run', '-f', 'dot')
    assert result.code == 0, result.stderr
    assert result.stdout.startswith('digraph')
    assert world['lb']['id'] in result.stdout
    result = osc(*ARGS, '--project', world['pid'], '-f', 'dot')
    assert result.code == 1 and '-f dot needs --dry-run' in result.stderr


def test_cli_needs_capi_namespace_for_capi_alone(osc, world):
    result = osc(*ARGS[:4], '--project', world['pid'], '--no-cloud-provider')
    assert result.code == 1 and '--capi-namespace' in result.stderr


def test_volume_with_a_snapshot_not_the_clusters_is_kept(cloud, conn, world):
    scenarios.snapshot(cloud, world['pid'], world['vol'], 'manual')
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert 'not the cluster' in kept[world['vol']['id']]


def test_cluster_snapshot_of_its_volume_goes_first(cloud, conn, world):
    snap = scenarios.snapshot(cloud, world['pid'], world['vol'], 'csi')
    snap['metadata'] = {CSI: 'prod'}
    fp = find(conn, world['pid'])
    assert {world['vol']['id'], snap['id']} <= ids(fp.mine)


def test_active_nodes_behind_its_load_balancers(cloud, conn, world):
    """Without Cluster API's marks, the cluster's nodes are its load
    balancers' members: an ACTIVE one refuses, in any project."""
    node = scenarios.server(cloud, world['other'], 'worker-1')
    net = next(
        n
        for n in cloud.all('networks')
        if n['id'] == world['shared_net']['id']
    )
    subnet = next(
        s for s in cloud.all('subnets') if s['network_id'] == net['id']
    )
    member = cloud.all('lb_pools')[0]['members'][0]
    assert member['subnet_id'] == subnet['id']
    port = scenarios.port(
        cloud,
        world['other'],
        net,
        subnet,
        'node-port',
        device_id=node['id'],
        device_owner='compute:nova',
    )
    port['fixed_ips'] = [
        {'subnet_id': subnet['id'], 'ip_address': member['address']}
    ]
    fp = find(conn, world['pid'], capi=False)
    assert [r.id for r in fp.active] == [node['id']]
    node['status'] = 'SHUTOFF'
    assert not find(conn, world['pid'], capi=False).active


def test_what_discovery_does_not_find_the_projects_is_kept(
    conn, world, monkeypatch
):
    run = footprint.Discovery.run

    def without_lb(self, *args, **kwargs):
        refs, notes = run(self, *args, **kwargs)
        return [r for r in refs if r.id != world['lb']['id']], notes

    monkeypatch.setattr(footprint.Discovery, 'run', without_lb)
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert 'discovery' in kept[world['lb']['id']]
    assert world['lb']['id'] not in ids(fp.mine)


def test_a_trunks_parent_port_is_kept(cloud, conn, world):
    port = next(
        p for p in cloud.all('ports') if p['name'] == 'prod-md-0-abcde-0'
    )
    port['trunk_details'] = {'trunk_id': 'trunk-1', 'sub_ports': []}
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert 'trunk-1' in kept[port['id']]
    # its server is still the cluster's (its ports are), and goes; what
    # the port holds stays with it
    assert world['node']['id'] in ids(fp.mine)
    assert {world['sg']['id'], world['net']['id']} <= set(kept)


def test_a_signal_stops_the_deletion_and_a_rerun_finishes_it(
    cloud, osc, world, monkeypatch, shell_signal_handlers
):
    import os
    import signal

    from osc_cascade.kinds import block_storage

    real_delete = block_storage.Volume.delete
    signalled = []

    def delete_then_signal(self, conn, ref):
        real_delete(self, conn, ref)
        if not signalled:
            signalled.append(ref.id)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(block_storage.Volume, 'delete', delete_then_signal)
    with pytest.raises(SystemExit) as exit_:
        osc(*ARGS, '--project', world['pid'], '--yes', '--parallel', '1')
    assert exit_.value.code == 130
    assert signalled == [world['vol']['id']]
    # stopped before the end: the network's delete comes last
    assert cloud.exists('networks', world['net']['id'])
    result = osc(*ARGS, '--project', world['pid'], '--yes')
    assert result.code == 0, result.stderr
    assert not cloud.exists('loadbalancers', world['lb']['id'])
    assert not cloud.exists('networks', world['net']['id'])
    assert cloud.exists('loadbalancers', world['lb2']['id'])
