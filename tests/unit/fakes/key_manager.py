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

"""Barbican: its project quotas, and secrets, containers and orders as a
token sees them.

As Barbican does (``tests/functional/test_real_barbican.py``), a list
is the token's project's alone, whatever its filter (an admin's too: the
admin's own project's), ten a page by default, a hundred at most, with an
offset ``next`` link; an item names no project, only its href
(``secret_ref``, ...). A delete is the project's (a token without admin on
another project's: 404, as its lookup is within the token's project); a
secret private to its creator (its ACL) refuses the project's other
users (403, policy ``secret:delete``); from microversion 1.2 a secret with
consumers refuses its delete (409), before it drops them; a container's
delete drops its consumers. Deletes are logged in ``changes``."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, page

#: Barbican's quota resources: a project's quotas show each, None if unset
QUOTA_RESOURCES = ('secrets', 'orders', 'containers', 'consumers', 'cas')
NO_QUOTAS = {
    'code': 404,
    'title': 'Not Found',
    'description': 'Project quotas not found.',
}


#: Barbican's collections and their items' href key
COLLECTIONS = {
    'secrets': 'secret_ref',
    'containers': 'container_ref',
    'orders': 'order_ref',
}


class KeyManager:
    #: the most rows a page (Barbican's max_limit_paging, 100 by default)
    quota_page = 2
    #: the most items a page of secrets, containers, orders (max 100)
    item_page = 100

    def barbican(self, coll, project_id, name, creator_id='u-admin', **extra):
        """A secret, container or order of the project."""
        item = self.add(
            coll,
            name=name,
            project_id=project_id,
            creator_id=creator_id,
            status='ACTIVE',
            created='2026-01-01T00:00:00',
            consumers=[],
            private=False,
            **extra,
        )
        href = f'{self.endpoints["key-manager"]}/v1/{coll}/{item["id"]}'
        item[COLLECTIONS[coll]] = href
        return item

    def _barbican_caller(self):
        """(project, user) of the token: the admin's own project without
        one of its own (``fakes.scoped``)."""
        caller = getattr(self, '_caller', lambda: None)()
        if caller is None:
            return ADMIN_PROJECT, 'u-admin'
        return caller['project_id'], caller['user_id']

    def _barbican_items(self, method, coll, item_id, query):
        project, user = self._barbican_caller()
        if item_id is None and method == 'GET':
            rows = [
                {
                    k: v
                    for k, v in i.items()
                    if k not in ('project_id', 'private')
                }
                for i in self.all(coll)
                if i['project_id'] == project
            ]
            chunk, link = page(
                rows,
                {'limit': 10, **query},
                self.item_page,
                'id',
                f'{self.endpoints["key-manager"]}/v1/{coll}',
                offset=True,
            )
            body = {coll: chunk, 'total': len(rows)}
            if link:
                body['next'] = link
            return 200, body
        item = self.get(coll, item_id) if item_id else None
        if item is None or item['project_id'] != project:
            return 404, {'code': 404, 'title': 'Not Found'}
        if method != 'DELETE':
            return 200, item
        if item['private'] and item['creator_id'] != user:
            return 403, {'code': 403, 'title': 'Forbidden'}
        version = self.header('OpenStack-API-Version') or ''
        if coll == 'secrets' and item['consumers'] and version.endswith('1.2'):
            return 409, {
                'code': 409,
                'title': 'Conflict',
                'description': 'Secret has consumers',
            }
        self._remove(coll, item_id)
        return 204, None

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
                                    'href': self.endpoints['key-manager']
                                    + '/v1/',
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
                self.endpoints['key-manager'] + '/v1/project-quotas',
                offset=True,
            )
            body = {'project_quotas': chunk, 'total': len(rows)}
            if link:
                body['next'] = link
            return 200, body
        m = re.fullmatch(r'/v1/(secrets|containers|orders)(?:/([^/]+))?', path)
        if m:
            return self._barbican_items(method, m.group(1), m.group(2), query)
        m = re.fullmatch(r'/v1/project-quotas/([^/]+)', path)
        if m and method == 'DELETE':
            # as the real one: none of its own is a 404 (issue #31)
            if not self.exists('quota_sets', f'barbican/{m.group(1)}'):
                return 404, NO_QUOTAS
            self._remove('quota_sets', f'barbican/{m.group(1)}')
            return 204, None
        return 404, {'code': 404, 'title': 'Not Found'}
