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

"""Trove: database instances, through the admin's management list
(/mgmt/instances, trove_page a page with a links next entry,
as Trove's twenty). A delete is asynchronous; a replica source with
replicas is refused with Trove's 403."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ENDPOINTS, page


class Database:
    #: instances a page (Trove's instances_page_size)
    trove_page = 2

    def trove_instance(self, project_id, name='db', replica_of=None):
        return self.add(
            'trove_instances',
            name=name,
            tenant_id=project_id,
            status='ACTIVE',
            replica_of={'id': replica_of['id']} if replica_of else None,
        )

    def _database(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': [
                    {
                        'id': 'v1.0',
                        'status': 'CURRENT',
                        'links': [
                            {'rel': 'self', 'href': ENDPOINTS['database']}
                        ],
                    }
                ]
            }
        if path == '/mgmt/instances':
            items = [
                i
                for i in self._async_list('trove_instances', 'SHUTDOWN')
                if query.get('project_id') in (None, i['tenant_id'])
            ]
            chunk, link = page(
                items,
                query,
                self.trove_page,
                url=ENDPOINTS['database'] + '/mgmt/instances',
            )
            links = [{'rel': 'next', 'href': link}] if link else []
            return 200, {'instances': chunk, 'links': links}
        m = re.fullmatch(r'/instances/([^/]+)', path)
        if not m:
            return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}
        found = self._async_get('trove_instances', m.group(1), 'SHUTDOWN')
        if found is None:
            return 404, {'itemNotFound': {'code': 404, 'message': 'gone'}}
        if method == 'GET':
            return 200, {'instance': found}
        replicas = [
            i
            for i in self.all('trove_instances')
            if (i.get('replica_of') or {}).get('id') == found['id']
        ]
        if replicas:
            return 403, {
                'forbidden': {
                    'code': 403,
                    'message': 'Detach replicas before deleting replica '
                    'source.',
                }
            }
        self._start_delete('trove_instances', found['id'])
        return 202, None
