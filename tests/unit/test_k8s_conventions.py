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

"""The conventions of a Kubernetes cluster's controllers, each with its
near misses: a name is not proof (``workflows.k8s.conventions``)."""

import pytest

from osc_cascade.workflows.k8s import conventions as conv

PROD = conv.Identity.of('prod', 'default', 'prod')


def lb(name, description=None, tags=None):
    return {
        'name': name,
        'description': description
        if description is not None
        else 'Kubernetes external service default/web from cluster prod',
        'tags': tags if tags is not None else [name],
    }


def test_occm_load_balancer_of_the_cluster():
    m = conv.match_load_balancer(PROD, lb('kube_service_prod_default_web'))
    assert m.mine and m.convention == 'OCCM load balancer name'


def test_occm_load_balancer_without_description_or_tags():
    # OCCM before tags, or a description someone cleared
    m = conv.match_load_balancer(
        PROD, lb('kube_service_prod_default_web', description='', tags=[])
    )
    assert m.mine


@pytest.mark.parametrize(
    'name',
    [
        'kube_service_prod-2_default_web',  # cluster prod-2
        'kube_service_prod2_default_web',
        'kube_service_prod_x_default_web',  # cluster prod_x
        'kube_service_prod_default',  # no service
        'kube_service_prod_default_web_',
        'kube_service_prod_Default_web',  # not a namespace
        'kube_service_production_default_web',
        'xkube_service_prod_default_web',
        'kube_service_prod__web',
    ],
)
def test_occm_near_misses_are_not_the_clusters(name):
    m = conv.match_load_balancer(
        PROD,
        lb(
            name,
            description=f'Kubernetes external service a/b from cluster {name}',
        ),
    )
    assert not m.mine and not m.doubt


def test_near_miss_of_another_cluster_says_why():
    m = conv.match_load_balancer(
        PROD,
        lb(
            'kube_service_prod-2_default_web',
            'Kubernetes external service default/web from cluster prod-2',
        ),
    )
    assert not m.mine and 'prod-2' in m.why


def test_name_of_the_cluster_described_for_another_is_kept():
    m = conv.match_load_balancer(
        PROD,
        lb(
            'kube_service_prod_default_web',
            'Kubernetes external service default/web from cluster prod-2',
        ),
    )
    assert m.doubt and 'prod-2' in m.why


def test_name_and_description_of_different_services_is_kept():
    m = conv.match_load_balancer(
        PROD,
        lb(
            'kube_service_prod_default_web',
            'Kubernetes external service default/api from cluster prod',
        ),
    )
    assert m.doubt


def test_load_balancer_shared_with_another_clusters_service_is_kept():
    name = 'kube_service_prod_default_web'
    m = conv.match_load_balancer(
        PROD, lb(name, tags=[name, 'kube_service_prod-2_default_api'])
    )
    assert m.doubt and 'kube_service_prod-2_default_api' in m.why


def test_load_balancer_shared_among_the_clusters_own_services():
    name = 'kube_service_prod_default_web'
    m = conv.match_load_balancer(
        PROD, lb(name, tags=[name, 'kube_service_prod_other_api', 'x'])
    )
    assert m.mine


def test_name_cut_at_255_needs_the_description():
    ident = conv.Identity.of('c' * 240)
    name = f'kube_service_{"c" * 240}_default_web'[:255]
    assert len(name) == 255
    assert conv.match_load_balancer(ident, lb(name, description='')).doubt


def test_described_for_the_cluster_with_another_name_is_kept():
    m = conv.match_load_balancer(PROD, lb('my-own-lb'))
    assert not m.mine
    m = conv.match_load_balancer(PROD, lb('kube_service_other'))
    assert m.doubt


def test_capo_api_load_balancer():
    name = 'k8s-clusterapi-cluster-default-prod-kubeapi'
    ok = conv.match_load_balancer(
        PROD,
        lb(
            name,
            'Created by cluster-api-provider-openstack cluster default-prod',
        ),
    )
    assert ok.mine
    for near in (
        'k8s-clusterapi-cluster-default-prod-2-kubeapi',
        'k8s-clusterapi-cluster-default-prod',
        'k8s-clusterapi-cluster-other-prod-kubeapi',
    ):
        assert not conv.match_load_balancer(PROD, lb(near, '')).mine
    other = conv.match_load_balancer(
        PROD,
        lb(name, 'Created by cluster-api-provider-openstack cluster x-y'),
    )
    assert other.doubt


def test_capo_network_subnet_router():
    desc = 'Created by cluster-api-provider-openstack cluster default-prod'
    for kind in ('network', 'subnet', 'router'):
        ok = conv.match_network_item(
            PROD,
            kind,
            {
                'name': 'k8s-clusterapi-cluster-default-prod',
                'description': desc,
            },
        )
        assert ok.mine
        near = conv.match_network_item(
            PROD,
            kind,
            {
                'name': 'k8s-clusterapi-cluster-default-prod-2',
                'description': desc.replace('prod', 'prod-2'),
            },
        )
        assert not near.mine and not near.doubt and near.why
        odd = conv.match_network_item(
            PROD,
            kind,
            {
                'name': 'k8s-clusterapi-cluster-default-prod',
                'description': 'my own network',
            },
        )
        assert odd.doubt


def test_capo_is_not_looked_for_without_its_namespace():
    ident = conv.Identity.of('prod')
    assert not conv.match_network_item(
        ident, 'network', {'name': 'k8s-clusterapi-cluster-default-prod'}
    ).mine
    assert not conv.match_port(ident, {'description': ''}).mine


def test_capo_security_groups_and_ports():
    for role in ('controlplane', 'worker', 'bastion'):
        assert conv.match_security_group(
            PROD, {'name': f'k8s-cluster-default-prod-secgroup-{role}'}
        ).mine
    assert not conv.match_security_group(
        PROD, {'name': 'k8s-cluster-default-prod-2-secgroup-worker'}
    ).mine
    assert not conv.match_security_group(
        PROD, {'name': 'k8s-cluster-default-prod-secgroup-other'}
    ).mine
    desc = 'Created by cluster-api-provider-openstack cluster default-prod'
    assert conv.match_port(PROD, {'description': desc}).mine
    assert not conv.match_port(PROD, {'description': desc + '-2'}).mine


def test_occm_floating_ip_and_security_group():
    desc = (
        'Floating IP for Kubernetes external service default/web from '
        'cluster prod'
    )
    assert conv.match_floating_ip(PROD, {'description': desc}).mine
    assert not conv.match_floating_ip(PROD, {'description': desc + '-2'}).mine
    assert not conv.match_floating_ip(PROD, {'description': ''}).mine
    sg = {
        'name': 'lb-sg-1234-default-web',
        'description': 'Security Group for default/web Service '
        'LoadBalancer in cluster prod',
    }
    assert conv.match_security_group(PROD, sg).mine
    assert not conv.match_security_group(
        PROD, {**sg, 'description': sg['description'] + '-2'}
    ).mine
    assert not conv.match_security_group(
        PROD, {**sg, 'name': 'lb-sg-1234-default-api'}
    ).mine


def test_csi_metadata():
    key = conv.CINDER_CSI_KEY
    assert conv.match_metadata(key, 'prod', {'metadata': {key: 'prod'}}).mine
    near = conv.match_metadata(key, 'prod', {'metadata': {key: 'prod-2'}})
    assert not near.mine and 'prod-2' in near.why
    assert not conv.match_metadata(key, 'prod', {'metadata': {}}).mine
    assert not conv.match_metadata(
        key, 'prod', {'metadata': {'other': 'prod'}}
    ).mine
    assert not conv.match_metadata(key, '', {'metadata': {key: ''}}).mine
