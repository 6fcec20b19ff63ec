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

"""Aodh: alarms, a bare list filtered by ``q.field``/``q.value`` (a
project's, or every project's with ``all_projects``), paged by
``limit`` and ``marker`` when asked."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ENDPOINTS, page


class Alarming:
    def alarm(self, project_id, name='cpu-high'):
        return self.add(
            'alarms',
            id=None,
            alarm_id=f'alarm-{len(self.all("alarms"))}-{project_id}',
            name=name,
            project_id=project_id,
        )

    def add(self, collection, **obj):
        if collection == 'alarms':
            obj['id'] = obj['alarm_id']
        return super().add(collection, **obj)

    def _alarming(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': {
                    'values': [
                        {
                            'id': 'v2',
                            'status': 'stable',
                            'links': [
                                {
                                    'rel': 'self',
                                    'href': ENDPOINTS['alarming'] + '/v2',
                                }
                            ],
                        }
                    ]
                }
            }
        if path == '/v2/alarms':
            field, value = query.get('q.field'), query.get('q.value')
            items = [
                {k: v for k, v in a.items() if k != 'id'}
                for a in self.all('alarms')
                if (field == 'all_projects' and value == 'true')
                or (field == 'project_id' and a['project_id'] == value)
            ]
            size = int(query.get('limit') or len(items) or 1)
            chunk, _link = page(items, query, size, 'alarm_id')
            return 200, chunk
        m = re.fullmatch(r'/v2/alarms/([^/]+)', path)
        if m and method == 'DELETE':
            if not self.exists('alarms', m.group(1)):
                return 404, {'error_message': {'faultstring': 'not found'}}
            self._remove('alarms', m.group(1))
            return 204, None
        return 404, {'error_message': {'faultstring': 'no route'}}
