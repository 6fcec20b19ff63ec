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

"""Kubernetes leftovers of deleted projects: `orphan list` says whose
cluster made what it lists, and the reaper logs it, by the controllers'
names matched whole (``conventions.made_for``)."""

import pytest

from osc_cascade.engine.resource import ResourceRef
from osc_cascade.reaper import sweep
from osc_cascade.workflows import orphans
from osc_cascade.workflows.k8s import conventions as conv

LB = 'load_balancer.load_balancer'


@pytest.mark.parametrize(
    ('kind', 'name', 'cluster'),
    [
        (LB, 'kube_service_prod_default_web', 'cloud provider cluster prod'),
        (
            LB,
            'kube_service_prod-2_default_web',
            'cloud provider cluster prod-2',
        ),
        (LB, 'kube_service_a_b_c_d', 'cloud provider cluster a_b'),
        (LB, 'kube_service_prod_web', ''),
        (LB, 'kube_service_prod_Default_web', ''),
        (
            LB,
            'k8s-clusterapi-cluster-default-prod-kubeapi',
            'Cluster API cluster default-prod',
        ),
        (
            'network.network',
            'k8s-clusterapi-cluster-default-prod',
            'Cluster API cluster default-prod',
        ),
        ('network.port', 'k8s-clusterapi-cluster-default-prod', ''),
        (
            'network.security_group',
            'k8s-cluster-default-prod-secgroup-worker',
            'Cluster API cluster default-prod',
        ),
        ('network.security_group', 'k8s-cluster-default-prod-secgroup-x', ''),
        ('network.network', 'private', ''),
        (LB, 'kube_service_' + 'c' * 240 + '_default_web', ''),
    ],
)
def test_made_for(kind, name, cluster):
    assert conv.made_for(kind, name[:255]) == cluster


def gone(kind, name, project='p-gone'):
    return orphans.Orphan(
        ResourceRef(kind, f'id-{name}', name, project), orphans.GONE_OWNER
    )


def test_orphan_row_says_whose_cluster():
    row = gone(LB, 'kube_service_prod_default_web').row()
    assert row[5] == (
        f'{orphans.GONE_OWNER} (Kubernetes: cloud provider cluster prod)'
    )
    assert gone(LB, 'my-lb').row()[5] == orphans.GONE_OWNER


def test_reaper_logs_the_clusters_of_deleted_projects(monkeypatch):
    findings = orphans.Findings(
        [
            gone(LB, 'kube_service_prod_default_web'),
            gone(LB, 'kube_service_prod_default_api'),
            gone('network.network', 'k8s-clusterapi-cluster-default-prod'),
            gone('network.network', 'private'),
        ],
        [],
        [],
    )
    lines = []

    class Log:
        @staticmethod
        def info(text, *args):
            lines.append(text % args)

    monkeypatch.setattr(sweep, 'LOG', Log)
    sweep.log_clusters(findings)
    assert lines == [
        'project p-gone: 1 resource(s) of Kubernetes Cluster API cluster '
        'default-prod',
        'project p-gone: 2 resource(s) of Kubernetes cloud provider '
        'cluster prod',
    ]
