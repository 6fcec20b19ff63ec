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

"""Magnum clusters (their stacks go with them) and cluster templates."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.events import KEPT
from osc_cascade.engine.executor import DONE, FAILED
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.kinds import container_infra as magnum
from osc_cascade.kinds import orchestration
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.kinds import sdk_error
from tests.unit.fakes.run import cascade_for, run_kind

CLUSTER = magnum.Cluster.name
TEMPLATE = magnum.ClusterTemplate.name
STACK = orchestration.Stack.name


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def cluster_of(cloud, project_id, **stack_options):
    template = cloud.cluster_template(project_id)
    stack = cloud.stack('k8s-stack', project_id, **stack_options)
    cluster = cloud.magnum_cluster('k8s', project_id, stack)
    cluster['cluster_template_id'] = template['id']
    return cluster, template, stack


def test_lists_the_projects_clusters_and_templates(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    cluster, template, _stack = cluster_of(cloud, a)
    cluster_of(cloud, b)
    kinds = kinds_mod.build()
    conn = cloud.connection()
    [c] = kinds[CLUSTER].list(conn, a)
    [t] = kinds[TEMPLATE].list(conn, a)
    assert (c.id, t.id) == (cluster['uuid'], template['uuid'])
    assert ('GET', '/v1/clusters/detail') in cloud.requests


def test_the_stack_goes_with_the_cluster_and_the_template_after_it(cloud):
    a = scenarios.project(cloud, 'A')['id']
    cluster, template, stack = cluster_of(cloud, a)
    pc, targets, plan = cascade_for(cloud, a)
    me = step_id('delete', CLUSTER, cluster['uuid'])
    assert (me, step_id('delete', STACK, stack['id'])) in plan.soft_edges
    assert (me, step_id('delete', TEMPLATE, template['uuid'])) in (
        plan.edges - plan.soft_edges
    )

    pc.execute(plan, targets)

    results = {r.step.target.id: r for r in pc.runs[0].results.values()}
    assert results[cluster['uuid']].outcome == DONE
    assert results[stack['id']].attempts == 0  # Magnum had deleted it
    assert cloud.owned_by(a) == []


def test_a_cluster_that_cannot_be_deleted_names_force_delete(cloud):
    a = scenarios.project(cloud, 'A')['id']
    cluster, template, stack = cluster_of(cloud, a, on_delete='fail')
    pc, targets, plan = cascade_for(cloud, a)
    with pytest.raises(CascadeError):
        pc.execute(plan, targets)
    results = {r.step.target.id: r for r in pc.runs[0].results.values()}
    assert results[cluster['uuid']].outcome == FAILED
    assert 'openstack cluster force-delete --delete-leftovers' in (
        results[cluster['uuid']].error
    )
    # its stack was still tried directly, and failed with its own hint
    assert 'force-delete --stack' in results[stack['id']].error
    assert cloud.exists('cluster_templates', template['uuid'])


def test_a_template_in_use_is_retried_as_in_use(cloud):
    a = scenarios.project(cloud, 'A')['id']
    _cluster, _template, _stack = cluster_of(cloud, a)
    kind = kinds_mod.build()[TEMPLATE]
    [result] = run_kind(
        cloud, kind, kind.list(cloud.connection(), a)
    ).results.values()
    assert result.outcome == FAILED
    assert result.error.startswith('gave up after 8 attempts')
    assert 'referenced by one or multiple clusters' in result.error
    assert not kind.is_in_use(
        sdk_error(sdk_exc.BadRequestException, 400, 'Invalid name')
    )


def test_a_cluster_api_cluster_that_cannot_be_deleted_names_force_delete(
    cloud,
):
    """magnum-capi-helm without its management cluster (the minicloud's
    real Magnum): the delete ends DELETE_FAILED, and there is no stack to
    abandon."""
    a = scenarios.project(cloud, 'A')['id']
    cluster = cloud.capi_cluster('k8s', a, 'k8s-abcdef123456')
    pc, targets, plan = cascade_for(cloud, a)
    with pytest.raises(CascadeError):
        pc.execute(plan, targets)
    results = {r.step.target.id: r for r in pc.runs[0].results.values()}
    error = results[cluster['uuid']].error
    assert 'openstack cluster force-delete <cluster id>' in error
    assert 'abandon' not in error and '--delete-leftovers' not in error


def template_plan(cloud, project_id, **options):
    """The plan of the project's cluster templates alone."""
    kind = kinds_mod.build(**options)[TEMPLATE]
    return build_plan(
        Inventory(kind.list(cloud.connection(), project_id)),
        {TEMPLATE: kind},
        [{'id': project_id, 'name': 'A'}],
    )


def test_a_public_template_is_kept_unless_shared_ones_are_asked_for(cloud):
    """Magnum lists a public template to every project, and any of them
    may make clusters from it (db/sqlalchemy/api.py
    get_cluster_template_by_uuid): others may use it, as a public image."""
    a = scenarios.project(cloud, 'A')['id']
    public = cloud.cluster_template(a, public=True)
    private = cloud.cluster_template(a)
    steps = {s.target.id: s for s in template_plan(cloud, a).steps.values()}
    assert steps[private['uuid']].is_delete
    assert steps[public['uuid']].params == {
        'reason': 'public cluster template: other projects may use it',
        'shared': True,
    }
    shared = template_plan(cloud, a, delete_shared=True)
    assert all(s.is_delete for s in shared.steps.values())


def test_a_template_another_projects_cluster_uses_is_kept(cloud):
    """Magnum refuses the delete of a template a cluster uses, whoever's
    (ClusterTemplateReferenced, 400): another project's cluster keeps it,
    with --delete-shared too; the project's own clusters go before it."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    mine, template, _stack = cluster_of(cloud, a)
    theirs = cloud.magnum_cluster('k8s-b', b, None)
    theirs['cluster_template_id'] = template['uuid']
    for options in ({}, {'delete_shared': True}):
        [step] = template_plan(cloud, a, **options).steps.values()
        assert step.params == {
            'reason': f'used by clusters of project(s) {b}: Magnum '
            'refuses its delete'
        }, options
    _pc, _targets, plan = cascade_for(cloud, a)
    assert [s.target.id for s in plan.kept()] == [template['uuid']]
    assert step_id('delete', CLUSTER, mine['uuid']) in plan.steps


def test_a_template_made_public_since_the_plan_is_kept(cloud):
    a = scenarios.project(cloud, 'A')['id']
    template = cloud.cluster_template(a)
    kind = kinds_mod.build()[TEMPLATE]
    refs = kind.list(cloud.connection(), a)
    template['public'] = True
    [result] = run_kind(cloud, kind, refs).results.values()
    assert result.outcome == KEPT
    assert 'it is now public: others may use it' in result.error
    assert cloud.exists('cluster_templates', template['uuid'])
    assert ('GET', f'/v1/clustertemplates/{template["uuid"]}') in (
        cloud.requests
    )
