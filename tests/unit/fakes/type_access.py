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

"""Private flavors (Nova), volume types (Cinder) and share types (Manila)
and their access lists. Nova pages its flavor list at its max_limit; an
admin sees the private ones only when asked (``is_public=false``); a
public one has no access list; removing a project that is not on the list
is a 404, as in the services."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ENDPOINTS, page

#: service -> (collection, public field, access path, access key, action,
#: the action's project field, the access entries' id field)
TYPES = {
    'nova': (
        'flavors',
        'os-flavor-access:is_public',
        'os-flavor-access',
        'flavor_access',
        'removeTenantAccess',
        'tenant',
        'flavor_id',
        'tenant_id',
    ),
    'cinder': (
        'volume_types',
        'os-volume-type-access:is_public',
        'os-volume-type-access',
        'volume_type_access',
        'removeProjectAccess',
        'project',
        'volume_type_id',
        'project_id',
    ),
    'manila': (
        'share_types',
        'share_type_access:is_public',
        'share_type_access',
        'share_type_access',
        'removeProjectAccess',
        'project',
        'share_type_id',
        'project_id',
    ),
}


def _not_found(message):
    return 404, {'itemNotFound': {'code': 404, 'message': message}}


class _AccessLists:
    def private_type(self, service, name, members=(), public=False):
        """A flavor or type of the admin's, with projects on its access
        list (a public one has none)."""
        coll, public_key = TYPES[service][:2]
        extra = (
            {'vcpus': 1, 'ram': 512, 'disk': 1} if service == 'nova' else {}
        )
        return self.add(
            coll,
            name=name,
            **{public_key: public},
            members=[] if public else list(members),
            **extra,
        )

    def _types(self, service, path, method, query, body, list_path, url=''):
        coll, public_key, access, key, action, field, of, member = TYPES[
            service
        ]
        if path == list_path:
            wanted = (query.get('is_public') or 'true').lower()
            # without is_public an admin sees the public ones only
            shown = [
                {k: v for k, v in t.items() if k != 'members'}
                for t in self.all(coll)
                if wanted in ('all', 'none')
                or t.get(public_key, True) == (wanted != 'false')
            ]
            if service != 'nova':
                return 200, {coll: shown}
            chunk, link = page(shown, query, self.nova_max_limit, url=url)
            links = [{'rel': 'next', 'href': link}] if link else []
            return 200, {coll: chunk, f'{coll}_links': links}
        prefix = re.escape(
            list_path.rsplit('/', 1)[0] if service == 'nova' else list_path
        )
        m = re.fullmatch(
            rf'{prefix}/([^/]+)/({re.escape(access)}|action)', path
        )
        if not m:
            return None
        found = self.get(coll, m.group(1))
        if found is None:
            return _not_found(f'{m.group(1)} not found')
        if found.get(public_key, True):
            return _not_found('Access list not available for public types.')
        if m.group(2) == access:
            return 200, {
                key: [
                    {of: found['id'], member: p}
                    for p in found.get('members', [])
                ]
            }
        project = body[action][field]
        if project not in found['members']:
            return _not_found(f'{project} has no access to {found["id"]}')
        found['members'].remove(project)
        return 202, None


class TypeAccess(_AccessLists):
    """Nova's private flavors and Cinder's private volume types."""

    def _compute(self, method, path, query, body):
        answer = self._types(
            'nova',
            path,
            method,
            query,
            body,
            '/flavors/detail',
            ENDPOINTS['compute'] + '/flavors/detail',
        )
        if answer is None and path == '/flavors':
            answer = self._types(
                'nova',
                '/flavors/detail',
                method,
                query,
                body,
                '/flavors/detail',
            )
        return answer or super()._compute(method, path, query, body)

    def _block_storage(self, method, path, query, body):
        answer = self._types('cinder', path, method, query, body, '/types')
        return answer or super()._block_storage(method, path, query, body)


class ShareTypeAccess(_AccessLists):
    """Manila's private share types."""

    def _shared_file_system(self, method, path, query, body):
        answer = self._types('manila', path, method, query, body, '/types')
        return answer or super()._shared_file_system(method, path, query, body)
