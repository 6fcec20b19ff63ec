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

"""The application credential a Magnum Cluster API driver made for a
cluster, its creator's: magnum-cluster-api names it the cluster's UUID
(``Magnum cluster (<uuid>)``), magnum-capi-helm ``magnum-<uuid>-<8 hex>``
(``Magnum cluster (<name>)``). Deleted with the footprint when the whole
convention matches, in the cluster's project."""

import pytest

from osc_cascade.workflows import clusters
from osc_cascade.workflows.force_delete import capi
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.test_k8s_magnum import (
    engine,
    find,
    mca_cluster,
)


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with ServicesCloud() as c:
        yield c


def cred(cloud, cluster, name, description, project_id=None):
    return cloud.add(
        'application_credentials',
        user_id=cluster['user_id'],
        project_id=project_id or cluster['project_id'],
        name=name,
        description=description,
    )


def test_each_drivers_credential_goes_with_the_footprint(cloud):
    built = mca_cluster(cloud)
    c = built['cluster']
    uuid = c['uuid']
    mca = cred(cloud, c, uuid, f'Magnum cluster ({uuid})')
    mch = cred(cloud, c, f'magnum-{uuid}-0a1b2c3d', 'Magnum cluster (k8s)')
    near = [
        # the user's own, or another cluster's
        cred(cloud, c, 'ci', 'for the CI'),
        cred(cloud, c, uuid + '-2', f'Magnum cluster ({uuid}-2)'),
        cred(cloud, c, f'magnum-{uuid}-0a1b2c3d4', 'Magnum cluster (k8s)'),
        # the name, but not the description
        cred(cloud, c, uuid, 'mine'),
        # the whole convention, scoped to another project
        cred(cloud, c, uuid, f'Magnum cluster ({uuid})', project_id='p2'),
    ]
    force = engine(cloud)
    [preview] = force.preview_all([find(cloud, 'k8s')])
    planned = {s.target.id: s.action for s in preview.plan.steps.values()}
    assert planned[mca['id']] == planned[mch['id']] == 'delete'
    assert not {c['id'] for c in near} & set(planned)
    [outcome] = force.run_all([preview])
    assert outcome.ok, outcome.problems()
    left = {c['id'] for c in cloud.all('application_credentials')}
    assert not {mca['id'], mch['id']} & left
    assert {c['id'] for c in near} <= left


def test_a_cluster_without_its_creator_looks_for_none():
    record = clusters.ClusterRecord('magnum', 'u', 'n', 'p', 'x', '', 'k-1')
    assert record.user_id == ''
    assert capi.driver_credential(
        record, {'name': 'u', 'description': 'Magnum cluster (u)',
                 'project_id': 'p'},
    )  # fmt: skip
