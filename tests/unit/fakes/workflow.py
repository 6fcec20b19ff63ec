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

"""Mistral: workflows and their cron and event triggers, listed for every
project with ``all_projects`` (else the caller's), ``mistral_page`` a
page with a ``next`` link. A workflow that any project's trigger starts
is refused with Mistral's 400."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS, page

COLLECTIONS = ('workflows', 'cron_triggers', 'event_triggers')


class Workflow:
    #: items a page (Mistral's configured max)
    mistral_page = 2

    def mistral(self, collection, project_id, **obj):
        obj.setdefault('name', collection[:-1])
        return self.add(collection, project_id=project_id, **obj)

    def _workflow(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': [
                    {
                        'id': 'v2.0',
                        'status': 'CURRENT',
                        'links': [
                            {'rel': 'self', 'href': ENDPOINTS['workflow']}
                        ],
                    }
                ]
            }
        m = re.fullmatch(
            r'/({})(?:/([^/]+))?'.format('|'.join(COLLECTIONS)), path
        )
        if not m:
            return 404, {'faultstring': 'no route'}
        coll, id_ = m.groups()
        if id_ is None:
            everyone = query.get('all_projects') == 'true'
            wanted = query.get('project_id') or (
                None if everyone else ADMIN_PROJECT
            )
            items = [
                o for o in self.all(coll) if wanted in (None, o['project_id'])
            ]
            chunk, link = page(
                items,
                query,
                self.mistral_page,
                url=ENDPOINTS['workflow'] + f'/{coll}',
            )
            answer = {coll: chunk}
            if link:
                answer['next'] = link
            return 200, answer
        found = self.get(coll, id_)
        if found is None:
            return 404, {'faultstring': f'{coll} {id_} not found'}
        if method == 'DELETE':
            if coll == 'workflows':
                for kind in ('cron', 'event'):
                    if [
                        t
                        for t in self.all(f'{kind}_triggers')
                        if t['workflow_id'] == id_
                    ]:
                        return 400, {
                            'faultstring': "Can't delete workflow that has "
                            f'{kind} triggers associated.'
                        }
            self._remove(coll, id_)
            return 204, None
        return 200, found
