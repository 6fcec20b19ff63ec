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

"""Mistral: workflows and their cron and event triggers, ``mistral_page``
a page with a ``next`` link. An admin lists every project's, a project
filter holds; a token scoped to a project without admin (``fakes.scoped``)
is refused ``all_projects`` (403) and lists its project's, the public ones
and those shared with it. A workflow that any project's trigger starts is
refused with Mistral's 400; one shared with other projects (workflow
members) is deleted with its members. A workflow's members are shown to
its own project and to each member its own: an admin of another project
gets an empty list, as Mistral 23 answers it (db ``_get_criterion``).
The event trigger list takes no filter: any answers Mistral 23's 500."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS, page

COLLECTIONS = ('workflows', 'cron_triggers', 'event_triggers')
#: what Mistral's event trigger list takes: paging, sorting, all_projects
PAGING = {
    'marker',
    'limit',
    'sort_keys',
    'sort_dirs',
    'fields',
    'all_projects',
}


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
        caller, is_admin = self._mistral_caller()
        m = re.fullmatch(r'/workflows/([^/]+)/members(?:/([^/]+))?', path)
        if m:
            return self._mistral_members(method, caller, *m.groups(), body)
        m = re.fullmatch(
            r'/({})(?:/([^/]+))?'.format('|'.join(COLLECTIONS)), path
        )
        if not m:
            return 404, {'faultstring': 'no route'}
        coll, id_ = m.groups()
        if id_ is None:
            if coll == 'event_triggers' and set(query) - PAGING:
                # its get_all(**filters): WSME has no type for a filter
                return 500, {
                    'faultcode': 'Server',
                    'faultstring': "'NoneType' object has no attribute "
                    "'datatype'",
                }
            if query.get('all_projects') == 'true' and not is_admin:
                return 403, {
                    'faultstring': 'Operation forbidden (insufficient '
                    'permissions)'
                }
            wanted = query.get('project_id')
            items = [
                o
                for o in self.all(coll)
                if wanted in (None, o['project_id'])
                and (is_admin or self._mistral_sees(caller, coll, o))
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
                for member in self._mistral_members_of(id_):
                    self._remove('workflow_members', member['id'])
            self._remove(coll, id_)
            return 204, None
        return 200, found

    def mistral_share(self, workflow_id, member_id, status='accepted'):
        """The workflow's owner shares it with ``member_id``, which
        accepts it (``status``)."""
        owner = self.get('workflows', workflow_id)['project_id']
        return self.add(
            'workflow_members',
            resource_id=workflow_id,
            resource_type='workflow',
            project_id=owner,
            member_id=member_id,
            status=status,
        )

    def _mistral_caller(self):
        """(project, admin) of the request's token: the admin's, or one
        of ``fakes.scoped`` (a role admin is Mistral's context_is_admin)."""
        caller = getattr(self, '_caller', lambda: None)()
        if caller is None:
            return ADMIN_PROJECT, True
        return caller['project_id'], 'admin' in caller['roles']

    def _mistral_members_of(self, workflow_id):
        return [
            m
            for m in self.all('workflow_members')
            if m['resource_id'] == workflow_id
        ]

    def _mistral_sees(self, project_id, coll, obj):
        """A non-admin's list: its own, the public ones and the workflows
        shared with it (accepted)."""
        if obj['project_id'] == project_id or obj.get('scope') == 'public':
            return True
        return coll == 'workflows' and any(
            m['member_id'] == project_id and m['status'] == 'accepted'
            for m in self._mistral_members_of(obj['id'])
        )

    def _mistral_members(self, method, caller, workflow_id, member_id, body):
        # the owner's rows, and a member's own row: nothing else, to anyone
        seen = [
            m
            for m in self._mistral_members_of(workflow_id)
            if caller in (m['project_id'], m['member_id'])
        ]
        if method == 'GET' and member_id is None:
            return 200, {'members': seen}
        if method == 'POST':
            return 201, self.mistral_share(
                workflow_id, body['member_id'], status='pending'
            )
        found = [m for m in seen if m['member_id'] == member_id]
        if not found:
            return 404, {'faultstring': 'Resource member not found'}
        if method == 'PUT':
            found[0]['status'] = body['status']
            return 200, found[0]
        if method == 'DELETE':
            self._remove('workflow_members', found[0]['id'])
            return 204, None
        return 200, found[0]
