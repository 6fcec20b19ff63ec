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

"""Sahara's clusters (API v2), each with a Heat stack of its name
(orchestration.py). Sahara's engine is simulated on the next GET of a
cluster: a cluster whose stack is gone while it is being deleted is
destroyed (Sahara's delete loop), and a stack that failed to delete fails
the cluster."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ENDPOINTS, new_id, versions


def sahara_description(name):
    """The description Sahara's Heat engine gives a cluster's stack
    (sahara/service/heat/templates.py)."""
    return (
        'Data Processing Cluster by Sahara\n'
        f'Sahara cluster name: {name}\n'
        'Sahara engine: heat.3.0'
    )


class DataProcessing:
    def sahara_cluster(
        self,
        name,
        project_id,
        *,
        status='Active',
        updated='2026-11-01T10:00:00',
        legacy=False,
    ):
        """A cluster; its stack is named as Sahara names it (its
        extra['heat_stack_name'], which the API does not show): after the
        cluster and the first 8 of its id, or, ``legacy``, as before,
        after the cluster alone."""
        cluster = self.add(
            'sahara_clusters',
            id=new_id('h'),
            name=name,
            project_id=project_id,
            status=status,
            status_description='',
            plugin_name='vanilla',
            plugin_version='2.7.1',
            is_protected=False,
            is_public=False,
            created_at='2026-11-01T09:00:00',
            updated_at=updated,
            node_groups=[],
        )
        names = self.__dict__.setdefault('sahara_stack_names', {})
        names[cluster['id']] = name if legacy else name + cluster['id'][:8]
        return cluster

    def sahara_stack_name(self, cluster):
        return self.sahara_stack_names[cluster['id']]

    def sahara_stack(self, cluster, **stack_args):
        """The cluster's stack as Sahara makes it."""
        return self.stack(
            self.sahara_stack_name(cluster),
            cluster['project_id'],
            description=sahara_description(cluster['name']),
            **stack_args,
        )

    def _data_processing(self, method, path, query, body):
        if path in ('', '/'):
            return 200, versions('v2', ENDPOINTS['data-processing'] + '/')
        if path == '/clusters' and method == 'GET':
            items = [
                c
                for c in map(self._poll_sahara, self.all('sahara_clusters'))
                if c
            ]
            if 'name' in query:
                items = [c for c in items if c['name'] == query['name']]
            return 200, {
                'clusters': items,
                'markers': {'prev': None, 'next': None},
            }
        m = re.fullmatch(r'/clusters/([^/]+)', path)
        cluster = (
            self._poll_sahara(self.get('sahara_clusters', m.group(1)))
            if m
            else None
        )
        if cluster is None:
            return 404, {
                'error_code': 404,
                'error_name': 'NOT_FOUND',
                'error_message': f'Object with {{\'id\': '
                f'\'{m and m.group(1)}\'}} not '
                f'found',
            }
        if method == 'GET':
            return 200, {'cluster': cluster}
        if method == 'DELETE':
            cluster['status'] = 'Deleting'
            stack = self.stack_by_name(
                self.sahara_stack_name(cluster), cluster['project_id']
            )
            if stack is not None:
                self.delete_stack(stack)
            return 204, None
        return 405, None

    def _poll_sahara(self, cluster):
        """Sahara's delete thread: waits for the stack to go, fails the
        cluster if the stack delete failed."""
        if cluster is None or cluster['status'] != 'Deleting':
            return cluster
        stack = self.stack_by_name(
            self.sahara_stack_name(cluster), cluster['project_id']
        )
        if stack is not None and not self.stack_gone(stack['id']):
            if stack['stack_status'] == 'DELETE_FAILED':
                cluster['status'] = 'Error'
            return cluster
        self._remove('sahara_clusters', cluster['id'])
        return None
