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

"""Magnum's clusters, each on a Heat stack (orchestration.py). Its
conductor is simulated on the next GET of a cluster: a cluster whose stack
is gone while it is being deleted is destroyed (Magnum's poller), a stack
that failed to delete fails the cluster, and a delete of a cluster whose
stack answers 404 destroys the record at once. A cluster with
``conductor_down`` set takes the delete request and then never changes.

A cluster on a Cluster API driver (``capi_cluster``: magnum-cluster-api
names it ``kube-<5 random>`` in ``stack_id``, magnum-capi-helm
``<name>-<12 random>``) has no stack: its delete leaves it
DELETE_IN_PROGRESS while its management cluster (``management_up``) is
not there to report the Cluster API cluster gone, which Magnum's periodic
sync waits for (magnum 23.0.0's drivers no longer include Heat's).

Microversion 1.13 (magnum/api/controllers/v1/cluster.py
``_convert_with_links``) shows ``cluster_id`` instead of ``stack_id``: a
request that asks for 1.13 or later sees that name alone."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS, new_id, page
from tests.unit.fakes.orchestration import STAMP


class ContainerInfra:
    def magnum_cluster(
        self,
        name,
        project_id,
        stack,
        *,
        status='CREATE_COMPLETE',
        updated=STAMP,
    ):
        uuid = new_id('c')
        return self.add(
            'clusters',
            id=uuid,
            uuid=uuid,
            name=name,
            project_id=project_id,
            user_id='u-' + project_id,
            status=status,
            status_reason=None,
            stack_id=stack['id'] if stack else None,
            cluster_template_id=new_id('t'),
            keypair='key',
            node_count=1,
            master_count=1,
            create_timeout=60,
            health_status=None,
            labels={},
            created_at='2026-11-01T09:00:00+00:00',
            updated_at=updated,
        )

    def _container_infra(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'id': 'v1',
                'status': 'CURRENT',
                'max_version': '1.14',
                'min_version': '1.1',
                'links': [
                    {
                        'rel': 'self',
                        'href': ENDPOINTS['container-infra'] + '/',
                    }
                ],
            }
        if path == '/clusters' and method == 'GET':
            summary = (
                'uuid',
                'name',
                'status',
                'stack_id',
                'keypair',
                'node_count',
                'master_count',
                'cluster_template_id',
                'create_timeout',
                'health_status',
                'labels',
            )
            return 200, {
                'clusters': [
                    self._cluster_view({k: c[k] for k in summary})
                    for c in map(self._poll_cluster, self.all('clusters'))
                    if c is not None
                ]
            }
        m = re.fullmatch(r'/clusters/([^/]+)', path)
        if not m:
            return 404, {'errors': [{'status': 404, 'title': 'no route'}]}
        matches = [
            c
            for c in self.all('clusters')
            if m.group(1) in (c['uuid'], c['name'])
        ]
        if len(matches) > 1:
            return 409, {
                'errors': [
                    {
                        'status': 409,
                        'code': 'client',
                        'title': 'Multiple clusters exist with '
                        'same name. Please use the '
                        'cluster uuid instead.',
                    }
                ]
            }
        cluster = self._poll_cluster(matches[0]) if matches else None
        if cluster is None:
            return 404, {
                'errors': [
                    {
                        'status': 404,
                        'code': 'client',
                        'title': f'Cluster {m.group(1)} could not be found.',
                    }
                ]
            }
        if method == 'GET':
            view = dict(cluster)
            view.pop('id')
            return 200, self._cluster_view(view)
        if method == 'DELETE':
            cluster['status'] = 'DELETE_IN_PROGRESS'
            stack = self.get('stacks', cluster['stack_id'] or '')
            if cluster.get('conductor_down'):
                pass
            elif cluster.get('capi'):
                # the driver deletes the Cluster API cluster; the record
                # goes when the management cluster reports it gone. Without
                # a management cluster the driver's call fails, and the
                # conductor says DELETE_FAILED (magnum 23.0.0 with
                # magnum-capi-helm on the minicloud: "No such file or
                # directory: 'helm'"); one that answers slowly leaves it
                # DELETE_IN_PROGRESS
                if cluster.get('management_up'):
                    self._remove('clusters', cluster['uuid'])
                elif not cluster.get('management_slow'):
                    cluster['status'] = 'DELETE_FAILED'
                    cluster['status_reason'] = 'the management cluster is gone'

            elif stack is None:
                # the conductor: Heat says 404, so the cluster is destroyed
                self._remove('clusters', cluster['uuid'])
            else:
                self.delete_stack(stack)
            return 204, None
        return 405, None

    def capi_cluster(
        self, name, project_id, stack_id, *, status='DELETE_FAILED', **extra
    ):
        """A cluster of a Cluster API driver: ``stack_id`` is the Cluster
        API cluster's name, no Heat stack."""
        cluster = self.magnum_cluster(name, project_id, None, status=status)
        cluster.update(
            stack_id=stack_id,
            capi=True,
            health_status='UNKNOWN',
            **{k: v for k, v in extra.items()},
        )
        return cluster

    def _cluster_view(self, view):
        """``stack_id`` as ``cluster_id`` from microversion 1.13; the
        fake's own keys hidden."""
        for key in (
            'capi',
            'management_up',
            'management_slow',
            'conductor_down',
        ):
            view.pop(key, None)
        # magnum/api/controllers/versions.py: any of its service strings
        version = next(
            filter(
                None,
                map(
                    self._microversion,
                    (
                        'container-infrastructure-management',
                        'container-infrastructure',
                        'container-infra',
                    ),
                ),
            ),
            None,
        )
        if version is not None and version >= (1, 13) and 'stack_id' in view:
            view['cluster_id'] = view.pop('stack_id')
        return view

    def _poll_cluster(self, cluster):
        """Magnum's poller and periodic job, on the next GET."""
        if (
            cluster['status'] != 'DELETE_IN_PROGRESS'
            or cluster.get('conductor_down')
            or cluster.get('capi')
        ):
            return cluster
        if cluster['stack_id'] and not self.stack_gone(cluster['stack_id']):
            if (
                self.get('stacks', cluster['stack_id'])['stack_status']
                == 'DELETE_FAILED'
            ):
                cluster['status'] = 'DELETE_FAILED'
            return cluster
        self._remove('clusters', cluster['uuid'])
        return None


class ClusterTemplates:
    """What the cascade's kinds of Magnum use: the detailed cluster list
    (it says whose a cluster is), cluster templates, and quotas."""

    #: quota rows a page (Magnum's max_limit)
    quota_page = 2

    def cluster_template(self, project_id, name='k8s', public=False):
        uuid = new_id('ct')
        return self.add(
            'cluster_templates',
            id=uuid,
            uuid=uuid,
            name=name,
            project_id=project_id,
            public=public,
            coe='kubernetes',
        )

    def _container_infra(self, method, path, query, body):
        if path == '/clusters/detail':
            return 200, {
                'clusters': [
                    self._cluster_view(
                        {k: v for k, v in c.items() if k != 'id'}
                    )
                    for c in map(self._poll_cluster, self.all('clusters'))
                    if c is not None
                ]
            }
        if path == '/clustertemplates/detail':
            return 200, {
                'clustertemplates': [
                    {k: v for k, v in t.items() if k != 'id'}
                    for t in self.all('cluster_templates')
                ]
            }
        m = re.fullmatch(r'/clustertemplates/([^/]+)', path)
        if m and method == 'GET':
            template = self.get('cluster_templates', m.group(1))
            if template is None:
                return 404, {'errors': [{'status': 404, 'title': 'none'}]}
            return 200, {k: v for k, v in template.items() if k != 'id'}
        if m and method == 'DELETE':
            if not self.exists('cluster_templates', m.group(1)):
                return 404, {'errors': [{'status': 404, 'title': 'none'}]}
            if any(
                c['cluster_template_id'] == m.group(1)
                for c in self.all('clusters')
            ):
                return 400, {
                    'errors': [
                        {
                            'status': 400,
                            'code': 'client',
                            'title': (
                                f'ClusterTemplate {m.group(1)} is referenced by '
                                f'one or multiple clusters.'
                            ),
                        }
                    ]
                }
            self._remove('cluster_templates', m.group(1))
            return 204, None
        if path == '/quotas':
            # every project's only with all_tenants, which the next link
            # drops (as Magnum's does): else the caller's project's
            rows, link = page(
                [
                    {
                        'id': f'{q["project"]}/{name}',
                        'project_id': q['project'],
                        'resource': name,
                        'hard_limit': limit,
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'magnum'
                    and (
                        query.get('all_tenants') == 'True'
                        or q['project'] == ADMIN_PROJECT
                    )
                    for name, limit in q['values'].items()
                ],
                query,
                self.quota_page,
                url=ENDPOINTS['container-infra'] + '/quotas',
            )
            body = {'quotas': rows}
            if link:
                body['next'] = link
            return 200, body
        m = re.fullmatch(r'/quotas/([^/]+)/([^/]+)', path)
        if m and method == 'DELETE':
            quota = self.get('quota_sets', f'magnum/{m.group(1)}')
            if quota is None or m.group(2) not in quota['values']:
                return 404, {'errors': [{'status': 404, 'title': 'none'}]}
            del quota['values'][m.group(2)]
            if not quota['values']:
                self._remove('quota_sets', quota['id'])
            return 204, None
        return super()._container_infra(method, path, query, body)
