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

"""Barbican: its project quotas only."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ENDPOINTS, page

#: Barbican's quota resources: a project's quotas show each, None if unset
QUOTA_RESOURCES = ('secrets', 'orders', 'containers', 'consumers', 'cas')
NO_QUOTAS = {
    'code': 404,
    'title': 'Not Found',
    'description': 'Project quotas not found.',
}


class KeyManager:
    #: the most rows a page (Barbican's max_limit_paging, 100 by default)
    quota_page = 2

    def _key_manager(self, method, path, query, body):
        if path in ('', '/'):
            return 300, {
                'versions': {
                    'values': [
                        {
                            'id': 'v1',
                            'status': 'stable',
                            'links': [
                                {
                                    'rel': 'self',
                                    'href': ENDPOINTS['key-manager'] + '/v1/',
                                }
                            ],
                        }
                    ]
                }
            }
        if path == '/v1/project-quotas':
            rows = [
                {'project_id': q['project'], 'project_quotas': q['values']}
                for q in self.all('quota_sets')
                if q['service'] == 'barbican'
            ]
            # Barbican pages by offset and limit, ten a page by default
            chunk, link = page(
                rows,
                {'limit': 10, **query},
                self.quota_page,
                'project_id',
                ENDPOINTS['key-manager'] + '/v1/project-quotas',
                offset=True,
            )
            body = {'project_quotas': chunk, 'total': len(rows)}
            if link:
                body['next'] = link
            return 200, body
        m = re.fullmatch(r'/v1/project-quotas/([^/]+)', path)
        if m and method == 'DELETE':
            # as the real one: none of its own is a 404 (issue #31)
            if not self.exists('quota_sets', f'barbican/{m.group(1)}'):
                return 404, NO_QUOTAS
            self._remove('quota_sets', f'barbican/{m.group(1)}')
            return 204, None
        return 404, {'code': 404, 'title': 'Not Found'}
