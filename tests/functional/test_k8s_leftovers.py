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

"""`cluster leftovers delete` on the minicloud: the footprints of two
Kubernetes clusters, `prod` and `prod-2`, made in one project as their
controllers make them (names, descriptions, tags, metadata), one load
balancer of `prod` with a member on a shared network of another project.
The command deletes `prod`'s footprint and nothing of `prod-2` or of the
other project.

Kept light: no servers (a CAPO port without one), two load balancers.
Magnum is not on the minicloud (its Cluster API drivers need a management
cluster), so nothing here runs a Magnum cluster.
"""

from __future__ import annotations

import io
import json
import sys

from cliff import commandmanager
import pytest

from osc_cascade.v1.cluster_leftovers import DeleteClusterLeftovers
from tests.functional import topology
from tests.functional.conftest import ADMIN_CLOUD
from tests.functional.topology import unique, wait_for

pytestmark = pytest.mark.functional

CSI = 'cinder.csi.openstack.org/cluster'
CAPO = 'Created by cluster-api-provider-openstack cluster default-prod'


def run(monkeypatch, *argv):
    """The command in-process (the venv's entry points do not know it
    yet), as a user runs it against the minicloud."""
    from openstackclient import shell

    load = commandmanager.CommandManager.load_commands

    def load_commands(self, namespace):
        load(self, namespace)
        self.add_command('cluster leftovers delete', DeleteClusterLeftovers)

    monkeypatch.setattr(
        commandmanager.CommandManager, 'load_commands', load_commands
    )
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, 'stdout', out)
    monkeypatch.setattr(sys, 'stderr', err)
    app = shell.OpenStackShell()
    app.stdout, app.stderr = out, err
    code = app.run(['--os-cloud', ADMIN_CLOUD, *argv])
    return code, out.getvalue(), err.getvalue()


def lb_settled(lbaas, lb_id):
    wait_for(
        lambda: lbaas.get_load_balancer(lb_id).provisioning_status == 'ACTIVE',
        timeout=180,
        what='the load balancer to settle',
    )


def occm_lb(conn, subnet_id, cluster, svc='web'):
    name = f'kube_service_{cluster}_default_{svc}'
    lb = conn.load_balancer.create_load_balancer(
        name=name,
        description=f'Kubernetes external service default/{svc} from '
        f'cluster {cluster}',
        tags=[name],
        vip_subnet_id=subnet_id,
    )
    lb_settled(conn.load_balancer, lb.id)
    return lb


@pytest.fixture(scope='module')
def world(admin):
    project = topology.make_project(admin, unique('k8s'))
    other = topology.make_project(admin, unique('k8s-other'))
    conn = topology.scoped(admin, project)
    ids = {'project': project.id, 'other': other.id}
    shared = admin.network.create_network(
        name=unique('shared'), project_id=other.id, is_shared=True
    )
    shared_subnet = admin.network.create_subnet(
        network_id=shared.id,
        project_id=other.id,
        cidr='10.77.0.0/24',
        ip_version=4,
    )
    ids['shared'], ids['shared_subnet'] = shared.id, shared_subnet.id
    name = 'k8s-clusterapi-cluster-default-prod'
    net, subnet, router = topology.capo_network(
        admin, conn, name, CAPO, '10.78.0.0/24'
    )
    public = topology.public_network(admin)
    # prod-2's Cluster API network beside it, and one of prod's name in
    # the other project: neither is prod's
    ids['net2'] = conn.network.create_network(
        name=name + '-2',
        description=CAPO.replace('prod', 'prod-2'),
    ).id
    ids['their_net'] = admin.network.create_network(
        name=name, description=CAPO, project_id=other.id
    ).id
    sg = conn.network.create_security_group(
        name='k8s-cluster-default-prod-secgroup-worker',
        description='Cluster API managed group',
    )
    port = conn.network.create_port(
        network_id=net.id,
        name='prod-md-0-abcde-0',
        description=CAPO,
        security_group_ids=[sg.id],
    )
    apps = conn.network.create_network(name='apps')
    apps_subnet = conn.network.create_subnet(
        network_id=apps.id, name='apps', cidr='10.79.0.0/24', ip_version=4
    )
    ids.update(
        net=net.id,
        subnet=subnet.id,
        router=router.id,
        sg=sg.id,
        port=port.id,
        apps=apps.id,
    )
    lb = occm_lb(conn, subnet.id, 'prod')
    listener = conn.load_balancer.create_listener(
        name='listener_0_' + lb.name,
        protocol='TCP',
        protocol_port=80,
        load_balancer_id=lb.id,
    )
    lb_settled(conn.load_balancer, lb.id)
    pool = conn.load_balancer.create_pool(
        name='pool_0_' + lb.name,
        protocol='TCP',
        lb_algorithm='ROUND_ROBIN',
        listener_id=listener.id,
    )
    lb_settled(conn.load_balancer, lb.id)
    conn.load_balancer.create_member(
        pool,
        address='10.77.0.60',
        protocol_port=80,
        subnet_id=shared_subnet.id,
    )
    lb_settled(conn.load_balancer, lb.id)
    ids['lb'] = lb.id
    ids['lb2'] = occm_lb(conn, apps_subnet.id, 'prod-2').id
    # floating IPs: CAPO's on its port; the cloud controller manager's of
    # prod and of prod-2, not associated (the minicloud's Octavia has the
    # noop network driver: its VIP ports are not in Neutron)
    ids['fip'] = conn.network.create_ip(
        floating_network_id=public.id, port_id=port.id, description=CAPO
    ).id
    for key, cluster in (('fip_occm', 'prod'), ('fip2', 'prod-2')):
        ids[key] = conn.network.create_ip(
            floating_network_id=public.id,
            description='Floating IP for Kubernetes external service '
            f'default/web from cluster {cluster}',
        ).id
    for key, cluster in (('vol', 'prod'), ('vol2', 'prod-2')):
        ids[key] = conn.block_storage.create_volume(
            size=1, name=f'pvc-{key}', metadata={CSI: cluster}
        ).id
    for key in ('vol', 'vol2'):
        topology.wait_status(
            lambda k=key: conn.block_storage.get_volume(ids[k]),
            'available',
            'the volume',
        )
    return ids


ARGS = (
    'cluster',
    'leftovers',
    'delete',
    'prod',
    '--capi-namespace',
    'default',
)


def test_deletes_prods_footprint_and_nothing_else(admin, world, monkeypatch):
    code, out, err = run(
        monkeypatch,
        *ARGS,
        '--project',
        world['project'],
        '--dry-run',
        '-f',
        'json',
    )
    assert code == 0, err
    plan = {r['ID']: r for r in json.loads(out)}
    code, table, err = run(
        monkeypatch, *ARGS, '--project', world['project'], '--dry-run'
    )
    # shown with -s (the run patched sys.stdout)
    sys.__stdout__.write(table + err)
    mine = ('lb', 'vol', 'net', 'subnet', 'router', 'sg', 'port', 'fip')
    for key in (*mine, 'fip_occm'):
        assert world[key] in plan, key
        assert plan[world[key]]['Action'] == 'delete', plan[world[key]]
    assert plan[world['lb2']]['Action'] == 'keep'
    assert plan[world['vol2']]['Action'] == 'keep'
    for key in ('shared', 'shared_subnet', 'apps', 'their_net'):
        assert world[key] not in plan, key
    # a near miss is shown, kept, with why
    assert plan[world['net2']]['Action'] == 'keep'
    assert "not the cluster's" in plan[world['net2']]['Reason']
    assert world['fip2'] not in plan

    code, out, err = run(
        monkeypatch, *ARGS, '--project', world['project'], '--yes'
    )
    sys.__stdout__.write(out + err)
    assert code == 0, err
    lbaas, neutron, cinder = (
        admin.load_balancer,
        admin.network,
        admin.block_storage,
    )
    assert lbaas.find_load_balancer(world['lb']) is None or (
        lbaas.get_load_balancer(world['lb']).provisioning_status == 'DELETED'
    )
    assert lbaas.get_load_balancer(world['lb2']).provisioning_status == (
        'ACTIVE'
    )
    assert neutron.find_network(world['net']) is None
    assert neutron.find_router(world['router']) is None
    assert neutron.find_security_group(world['sg']) is None
    assert neutron.find_network(world['shared']) is not None
    assert neutron.find_subnet(world['shared_subnet']) is not None
    assert neutron.find_network(world['apps']) is not None
    assert neutron.find_network(world['net2']) is not None
    assert neutron.find_network(world['their_net']) is not None
    assert neutron.find_ip(world['fip']) is None
    assert neutron.find_ip(world['fip_occm']) is None
    assert neutron.find_ip(world['fip2']) is not None
    assert cinder.find_volume(world['vol'], all_projects=True) is None
    assert cinder.find_volume(world['vol2'], all_projects=True) is not None
