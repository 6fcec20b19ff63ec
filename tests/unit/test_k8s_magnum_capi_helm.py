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

"""magnum-capi-helm with another ``[capi_helm] namespace_prefix``
(``magnum_capi_helm/driver_utils.py``: ``cluster_namespace`` is
``<prefix>-<project id, alphanumerics>``): the operator says it with
``--capi-helm-namespace-prefix``; without it, only what the cloud
provider and the CSI drivers made (named by the release) is found."""

import json

import pytest

from osc_cascade.workflows.force_delete import capi
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.test_k8s_magnum import (
    engine,
    find,
)


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with ServicesCloud() as c:
        yield c


RELEASE = 'prod-abcdef123456'


def helm_cluster(cloud, prefix):
    p = scenarios.project(cloud, 'tenant')
    pid = p['id']
    cluster = cloud.capi_cluster('prod', pid, RELEASE)
    ns = f'{prefix}-{pid.replace("-", "").lower()}'
    capo = f'k8s-clusterapi-cluster-{ns}-{RELEASE}'
    net, subnet = scenarios.network(cloud, pid, capo)
    net['description'] = subnet['description'] = (
        f'Created by cluster-api-provider-openstack cluster {ns}-{RELEASE}'
    )
    subnet['name'] = capo
    return {
        'cluster': cluster,
        'net': net,
        'lb': scenarios.occm_load_balancer(cloud, pid, subnet, RELEASE),
    }


def planned(cloud, **options):
    [preview] = engine(cloud, **options).preview_all([find(cloud, 'prod')])
    assert not preview.error, preview.error
    return {s.target.id: s.action for s in preview.plan.steps.values()}


def test_the_default_prefix_finds_the_cloud_providers_part_alone(cloud):
    built = helm_cluster(cloud, 'mc')
    actions = planned(cloud)
    assert actions[built['lb']['id']] == 'delete'
    # the load balancer's subnet is the Cluster API network's, not found
    assert built['net']['id'] not in actions


def test_the_operators_prefix_finds_the_cluster_api_network(cloud):
    built = helm_cluster(cloud, 'mc')
    actions = planned(cloud, capi_helm_prefix='mc')
    assert actions[built['lb']['id']] == 'delete'
    assert actions[built['net']['id']] == 'delete'
    record = find(cloud, 'prod')
    assert capi.capi_clusters(record, 'mc')[1].startswith('mc-')


def test_cli_option(cloud, osc):
    built = helm_cluster(cloud, 'mc')
    args = ('cluster', 'force-delete', 'prod', '--dry-run', '-f', 'json')
    result = osc(*args, '--capi-helm-namespace-prefix', 'mc')
    assert result.code == 0, result.stderr
    rows = {r['Physical ID']: r['Action'] for r in json.loads(result.stdout)}
    assert rows[built['net']['id']] == 'delete'
    result = osc(*args)
    assert result.code == 0, result.stderr
    rows = {r['Physical ID']: r['Action'] for r in json.loads(result.stdout)}
    assert built['net']['id'] not in rows
