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

"""What CAPO makes beside its marked ports: the trunk on a machine's
port (cluster-api-provider-openstack ``networking/trunk.go``: named as
the port, CAPO's description) and the boot volume of a machine
(``compute/rootvolume.go``: ``<machine>-root``, described ``Root volume
for <machine>``)."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.workflows.k8s import footprint
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.test_k8s_footprint import (
    ARGS,
    CAPO,
    find,
    ids,
    leftovers_shell,
    make_world,
)


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def world(cloud, external):
    return make_world(cloud, external)


@pytest.fixture
def osc(monkeypatch, virtual_time):
    return leftovers_shell(monkeypatch)


def node_port(cloud):
    return next(
        p for p in cloud.all('ports') if p['name'] == 'prod-md-0-abcde-0'
    )


def trunk(cloud, world, parent, description=CAPO, sub_ports=()):
    made = cloud.add(
        'trunks',
        name=parent['name'],
        description=description,
        project_id=world['pid'],
        tenant_id=world['pid'],
        port_id=parent['id'],
        sub_ports=[
            {'port_id': p['id'], 'segmentation_type': 'vlan'}
            for p in sub_ports
        ],
    )
    # Neutron's trunk_details extension on the parent port
    parent['trunk_details'] = {
        'trunk_id': made['id'],
        'sub_ports': made['sub_ports'],
    }
    return made


def test_a_trunk_wholly_the_clusters_goes_with_its_parent_port(
    cloud, conn, world
):
    port = node_port(cloud)
    made = trunk(cloud, world, port)
    fp = find(conn, world['pid'])
    mine = ids(fp.mine)
    assert {made['id'], port['id'], world['node']['id']} <= mine
    plan = footprint.plan(fp, kinds_mod.build())
    order = [plan.steps[s].target.id for s in plan.order()]
    # the server, then the trunk (Neutron: in use while bound), then
    # the parent port (in use as a trunk's parent while the trunk is)
    assert (
        order.index(world['node']['id'])
        < order.index(made['id'])
        < order.index(port['id'])
    )


def test_the_cli_deletes_the_trunk_then_its_port(cloud, osc, world):
    port = node_port(cloud)
    made = trunk(cloud, world, port)
    result = osc(*ARGS, '--project', world['pid'], '--yes')
    assert result.code == 0, result.stderr
    assert not cloud.exists('trunks', made['id'])
    assert not cloud.exists('ports', port['id'])
    assert not cloud.exists('networks', world['net']['id'])


def test_a_trunk_with_a_subport_not_the_clusters_is_kept(cloud, conn, world):
    port = node_port(cloud)
    other = scenarios.port(
        cloud, world['pid'], world['net'], world['subnet'], 'someone-else'
    )
    made = trunk(cloud, world, port, sub_ports=[other])
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert other['id'] in kept[made['id']]
    assert made['id'] in kept[port['id']]
    assert made['id'] not in ids(fp.mine)


def test_a_trunk_described_for_another_cluster_keeps_the_port(
    cloud, conn, world
):
    port = node_port(cloud)
    made = trunk(
        cloud,
        world,
        port,
        description='Created by cluster-api-provider-openstack cluster x-y',
    )
    fp = find(conn, world['pid'])
    kept = {r.id: why for r, why in fp.kept.values()}
    assert made['id'] in kept[port['id']]
    assert made['id'] not in ids(fp.mine) | set(kept)


def root_volume(cloud, world, name, description, attach_to):
    return scenarios.volume(
        cloud,
        world['pid'],
        name,
        description=description,
        attach_to=attach_to,
    )


def test_capos_root_volume_goes_after_its_server(cloud, conn, world):
    node = world['node']
    vol = root_volume(
        cloud, world, 'prod-md-0-abcde-root', 'Root volume for prod-md-0-abcde',
        node,
    )  # fmt: skip
    fp = find(conn, world['pid'])
    assert dict((r.id, c) for r, c in fp.mine.values())[vol['id']] == (
        'CAPO root volume of its server'
    )
    plan = footprint.plan(fp, kinds_mod.build())
    order = [plan.steps[s].target.id for s in plan.order()]
    assert order.index(node['id']) < order.index(vol['id'])


def test_a_volume_not_named_as_capos_root_volume_stays(cloud, conn, world):
    node = world['node']
    near = [
        # another machine's name
        root_volume(
            cloud, world, 'prod-md-0-zzzzz-root',
            'Root volume for prod-md-0-zzzzz', node,
        ),
        # the name without CAPO's description
        root_volume(cloud, world, 'prod-md-0-abcde-root', 'mine', node),
        # attached to the cluster's server and to another too
        root_volume(
            cloud, world, 'prod-md-0-abcde-root',
            'Root volume for prod-md-0-abcde', node,
        ),
        # not attached: its server is gone, nothing names the cluster
        root_volume(
            cloud, world, 'prod-md-0-abcde-root',
            'Root volume for prod-md-0-abcde', None,
        ),
    ]  # fmt: skip
    stranger = scenarios.server(cloud, world['pid'], 'not-the-clusters')
    scenarios.attach(cloud, near[2], stranger)
    fp = find(conn, world['pid'])
    assert not {v['id'] for v in near} & ids(fp.mine)
