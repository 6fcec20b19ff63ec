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

"""Magnum: clusters (their Heat stacks go with them) and cluster templates.

An admin's list of clusters spans every project (Magnum's
``cluster:get_all_all_projects``), and only the detailed list says whose a
cluster is. A cluster's stack waits for the cluster's delete, which deletes
it, and is deleted directly only if that fails; a template goes after the
clusters made from it (Magnum refuses while one is).

A template another project's cluster uses is kept (Magnum refuses its
delete, whoever's the cluster is); a public one too, as every project may
make clusters from it, unless ``delete_shared`` asks for it. A template is
read again before its delete (``reread``): one made public since the plan
is kept.
"""

from __future__ import annotations

import re

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.orchestration import Stack
from osc_cascade.kinds.registry import register

#: a cluster delete that failed, with the way out
STUCK = (
    'DELETE_FAILED: Magnum cannot delete the cluster; abandon its '
    'stack and delete what it leaves with `openstack cluster '
    'force-delete --delete-leftovers <cluster id>`'
)
#: the same, of a cluster on a Cluster API driver: no stack; the driver
#: failed to reach its management cluster (magnum 23.0.0 with
#: magnum-capi-helm on the minicloud)
STUCK_CLUSTER_API = (
    'DELETE_FAILED: Magnum cannot delete the cluster (its Cluster API '
    'driver failed); delete what its controllers made and ask Magnum again '
    'with `openstack cluster force-delete <cluster id>`'
)
#: a Heat stack's id; a Cluster API driver's name of its cluster is not
_HEAT_STACK_ID = re.compile(
    r'[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}'
)


def on_cluster_api(stack_id: str) -> bool:
    """Whether a Magnum cluster's ``stack_id`` names a Cluster API cluster
    (magnum-cluster-api's ``kube-<5 random>``, magnum-capi-helm's
    ``<name>-<12 random>``), not a Heat stack."""
    return bool(stack_id) and not _HEAT_STACK_ID.fullmatch(stack_id.lower())


def stack_id_of(cluster: dict) -> str:
    """A cluster's ``stack_id`` (a Heat stack, or a Cluster API driver's
    name of the cluster), which microversion 1.13 renames ``cluster_id``
    (magnum/api/controllers/v1/cluster.py)."""
    return cluster.get('stack_id') or cluster.get('cluster_id') or ''


def clusters_detail(conn) -> list[dict]:
    """Magnum's clusters with their projects (an admin's: every
    project's)."""
    # raw: the SDK's clusters() lists /clusters, whose items Magnum cuts
    # to a few fields without project_id (_convert_with_links)
    return request(
        conn.container_infrastructure_management, 'GET', '/clusters/detail'
    ).json()['clusters']


@register
class Cluster(ResourceKind):
    name = 'container_infra.cluster'
    service_type = 'container-infrastructure-management'
    error_statuses = frozenset({STUCK, STUCK_CLUSTER_API})

    def list(self, conn, project_id):
        items = clusters_detail(conn)
        return owned(
            (
                ResourceRef(
                    kind=self.name,
                    id=c['uuid'],
                    name=c.get('name') or '',
                    project_id=c.get('project_id') or '',
                    attrs={
                        k: v
                        for k, v in (
                            ('stack_id', stack_id_of(c)),
                            ('template_id', c.get('cluster_template_id')),
                        )
                        if v
                    },
                )
                for c in items
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        yield Edge(
            me,
            delete_of(Stack.name, ref.attrs.get('stack_id', '')),
            required=False,
        )
        yield Edge(
            me,
            delete_of(ClusterTemplate.name, ref.attrs.get('template_id', '')),
        )

    def delete(self, conn, ref):
        conn.container_infrastructure_management.delete_cluster(
            ref.id, ignore_missing=False
        )

    def status(self, conn, ref):
        status = conn.container_infrastructure_management.get_cluster(
            ref.id
        ).status
        if status != 'DELETE_FAILED':
            return status
        if on_cluster_api(ref.attrs.get('stack_id', '')):
            return STUCK_CLUSTER_API
        return STUCK


@register
class ClusterTemplate(ResourceKind):
    name = 'container_infra.cluster_template'
    service_type = 'container-infrastructure-management'
    synchronous_delete = True
    reread = True

    def list(self, conn, project_id):
        # raw: the SDK's ClusterTemplate has no project_id (4.16 to 4.22)
        api = conn.container_infrastructure_management
        templates = [
            t
            for t in request(api, 'GET', '/clustertemplates/detail').json()[
                'clustertemplates'
            ]
            if project_id in (None, t.get('project_id'))
        ]
        # who makes clusters from them: an admin's detail list is every
        # project's (a scoped token's is its own: Magnum refuses the delete
        # of a template another project uses, and it is retried)
        users: dict[str, set[str]] = {}
        if templates:
            for c in clusters_detail(conn):
                users.setdefault(
                    c.get('cluster_template_id') or '', set()
                ).add(c.get('project_id') or '')
        return owned(
            (
                ResourceRef(
                    kind=self.name,
                    id=t['uuid'],
                    name=t.get('name') or '',
                    project_id=t.get('project_id') or '',
                    attrs={
                        k: v
                        for k, v in (
                            ('public', bool(t.get('public'))),
                            (
                                'used_by',
                                sorted(
                                    users.get(t['uuid'], set())
                                    - {t.get('project_id') or ''}
                                ),
                            ),
                        )
                        if v
                    },
                )
                for t in templates
            ),
            project_id,
        )

    def primary_step(self, ref):
        if ref.attrs.get('used_by'):
            return resource.keep(
                ref,
                'used by clusters of project(s) '
                + ', '.join(ref.attrs['used_by'])
                + ': Magnum refuses its delete',
            )
        if ref.attrs.get('public') and not self.options.get('delete_shared'):
            return resource.keep(
                ref,
                'public cluster template: other projects may use it',
                shared=True,
            )
        return super().primary_step(ref)

    def read(self, conn, ref):
        try:
            return request(
                conn.container_infrastructure_management,
                'GET',
                f'/clustertemplates/{ref.id}',
            ).json()
        except sdk_exc.NotFoundException:
            return GONE

    def owner_in(self, found):
        return found.get('project_id') or ''

    def use_changed(self, conn, found, ref):
        if (
            found.get('public')
            and not ref.attrs.get('public')
            and not self.options.get('delete_shared')
        ):
            return 'it is now public: others may use it'
        return ''

    def delete(self, conn, ref):
        conn.container_infrastructure_management.delete_cluster_template(
            ref.id, ignore_missing=False
        )

    def is_in_use(self, exc):
        # "ClusterTemplate ... is referenced by one or multiple clusters"
        return super().is_in_use(exc) or (
            isinstance(exc, sdk_exc.BadRequestException)
            and 'referenced' in str(exc)
        )
