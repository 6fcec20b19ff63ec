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

"""Quota sets: the store of a project's own quota values that every fake
service's quota API reads (``set_quota``, ``has_quota``), and the quota
APIs of Nova, Cinder and Neutron, which FakeCloud does without."""

from __future__ import annotations

import re

NOVA_DEFAULT_QUOTAS = {
    'instances': 10,
    'cores': 20,
    'ram': 51200,
    'key_pairs': 100,
    'server_groups': 10,
}
CINDER_DEFAULT_QUOTAS = {
    'volumes': 10,
    'snapshots': 10,
    'gigabytes': 1000,
    'backups': 10,
}


class Quotas:
    def set_quota(self, service, project_id, **values):
        self.add(
            'quota_sets',
            id=f'{service}/{project_id}',
            service=service,
            project=project_id,
            values=values,
        )

    def has_quota(self, service, project_id):
        return self.exists('quota_sets', f'{service}/{project_id}')

    def _quota_set(self, service, m, method, defaults):
        project_id, default = m.groups()
        key = f'{service}/{project_id}'
        if method == 'DELETE':
            self._remove('quota_sets', key)
            return 202 if service == 'manila' else 204, None
        own = (
            {}
            if default
            else (self.get('quota_sets', key) or {}).get('values', {})
        )
        return 200, {'quota_set': {**defaults, **own, 'id': project_id}}

    def _compute(self, method, path, query, body):
        m = re.fullmatch(r'/os-quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('nova', m, method, NOVA_DEFAULT_QUOTAS)
        return super()._compute(method, path, query, body)

    def _block_storage(self, method, path, query, body):
        m = re.fullmatch(r'/os-quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('cinder', m, method, CINDER_DEFAULT_QUOTAS)
        return super()._block_storage(method, path, query, body)

    def _network(self, method, path, query, body):
        if path == '/v2.0/quotas':
            return 200, {
                'quotas': [
                    {
                        'project_id': q['project'],
                        'tenant_id': q['project'],
                        **q['values'],
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'neutron'
                ]
            }
        m = re.fullmatch(r'/v2\.0/quotas/([^/]+)', path)
        if m and method == 'DELETE':
            self._remove('quota_sets', f'neutron/{m.group(1)}')
            return 204, None
        return super()._network(method, path, query, body)
