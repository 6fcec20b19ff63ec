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

"""Ironic: nodes, filtered by ``owner`` and ``lessee`` (microversions
1.50 and 1.65: asked with less, Ironic refuses the filter) and by
``project`` (owner or lessee), ``ironic_page`` a page with a ``next``
link; a PATCH that removes the lessee.

Ironic's default policies (ironic 39.0.0, ``ironic/common/policy.py``):
``baremetal:node:list_all`` is a system reader's (a system-scoped token,
``SYSTEM_TOKEN``, with the role reader) or its service role's.
``ironic_list_all`` True is a project-scoped caller with the service role
(as the minicloud makes its cloud admin); False one without (an admin of
its own project, ADMIN_PROJECT). A caller without ``list_all`` has, as
Ironic does (``api_utils.check_list_policy``), a ``project`` filter naming
another project refused (403), and any other listing narrowed, silently,
to the nodes the caller's project owns or leases; and a node its project
neither owns nor leases is hidden from it (404, ``conceal_node``), its
PATCH too; a system-scoped token updates a lessee only with the role
member."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS, page
from tests.unit.fakes.identity import SYSTEM_TOKEN

#: the node fields a list may ask for (Ironic's node list: not created_at
#: nor updated_at, which it refuses, 400 "Field created_at is not a valid
#: field.", found on the minicloud)
NODE_FIELDS = frozenset(
    {'uuid', 'name', 'owner', 'lessee', 'instance_uuid', 'provision_state'}
)


class Baremetal:
    #: nodes a page (Ironic's max_limit)
    ironic_page = 2
    #: the caller may list every project's nodes (see the module)
    ironic_list_all = True

    def _ironic_lists_all(self):
        if self.header('X-Auth-Token') == SYSTEM_TOKEN:
            return 'reader' in self.system_roles
        return self.ironic_list_all

    def node(self, name='node', owner=None, lessee=None, instance_uuid=None):
        uuid_ = f'node-{len(self.all("nodes"))}-{name}'
        return self.add(
            'nodes',
            id=uuid_,
            uuid=uuid_,
            name=name,
            owner=owner,
            lessee=lessee,
            instance_uuid=instance_uuid,
        )

    def _baremetal(self, method, path, query, body):
        if path in ('', '/'):
            v1 = {
                'id': 'v1',
                'status': 'CURRENT',
                'min_version': '1.1',
                'version': '1.90',
                'links': [
                    {'rel': 'self', 'href': ENDPOINTS['baremetal'] + '/v1/'}
                ],
            }
            return 200, {'versions': [v1], 'default_version': v1}
        version = self._microversion('baremetal') or (1, 1)
        if path == '/v1/nodes':
            if ('lessee' in query and version < (1, 65)) or (
                'owner' in query and version < (1, 50)
            ):
                return 406, {'error_message': 'filter not acceptable'}
            for field in query.get('fields', '').split(','):
                if field and field not in NODE_FIELDS:
                    return 400, {
                        'error_message': f'Field {field} is not a valid field.'
                    }
            project = query.get('project')
            if not self._ironic_lists_all():
                if project and project != ADMIN_PROJECT:
                    return 403, {
                        'error_message': 'Access was denied to the following '
                        'resource: baremetal:node:list_all'
                    }
                project = ADMIN_PROJECT
            items = [
                {k: n[k] for k in query['fields'].split(',') if k in n}
                if 'fields' in query
                else n
                for n in self.all('nodes')
                if all(
                    query.get(k) in (None, n.get(k))
                    for k in ('owner', 'lessee')
                )
                and project in (None, n.get('owner'), n.get('lessee'))
            ]
            chunk, link = page(
                items,
                query,
                self.ironic_page,
                'uuid',
                ENDPOINTS['baremetal'] + '/v1/nodes',
            )
            answer = {'nodes': chunk}
            if link:
                answer['next'] = link
            return 200, answer
        m = re.fullmatch(r'/v1/nodes/([^/]+)', path)
        found = m and self.get('nodes', m.group(1))
        if (
            found
            and not self._ironic_lists_all()
            and ADMIN_PROJECT not in (found.get('owner'), found.get('lessee'))
        ):
            found = None  # concealed
            return 404, {'error_message': 'node not found'}
        if method == 'PATCH':
            if (
                self.header('X-Auth-Token') == SYSTEM_TOKEN
                and 'member' not in self.system_roles
            ):
                # baremetal:node:update:lessee: a system member's
                return 403, {'error_message': 'baremetal:node:update:lessee'}
            for change in body:
                field = change['path'].strip('/')
                found[field] = (
                    None if change['op'] == 'remove' else change['value']
                )
            return 200, found
        return 200, found
