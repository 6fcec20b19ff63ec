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

"""Nova: servers, whose delete goes on for ``delete_polls`` GETs and then
takes their ports and volume attachments with it, server groups, and
keypairs: the users' (Keypairs, what the cascade's kind lists) or the
caller's by name (CallerKeypairs, what Heat's tests look up)."""

from __future__ import annotations

import copy
import re

from tests.unit.fakes.common import ADMIN_USER, ENDPOINTS, matches, page


class Compute:
    def __init__(
        self,
        services=None,
        *,
        nova_max_version='2.96',
        nova_max_limit=1000,
        reclaim_instance_interval=0,
        **kwargs,
    ):
        super().__init__(services, **kwargs)
        self.nova_max_version = nova_max_version
        #: as nova.conf's [api] max_limit: the longest page nova answers
        self.nova_max_limit = nova_max_limit
        #: as nova.conf's: when set, a DELETE only soft-deletes a server
        self.reclaim_instance_interval = reclaim_instance_interval
        #: each ``os-resetState``: (server id, its body)
        self.server_resets = []

    def _compute(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'version': {
                    'id': 'v2.1',
                    'status': 'CURRENT',
                    'version': self.nova_max_version,
                    'min_version': '2.1',
                    'links': [
                        {'rel': 'self', 'href': ENDPOINTS['compute'] + '/'}
                    ],
                }
            }
        if path == '/servers/detail':
            items = [
                server_view(s)
                for s in self._async_list('servers', 'ACTIVE')
                if matches(
                    s,
                    query,
                    {'project_id'},
                    aliases={'project_id': 'tenant_id'},
                )
            ]
            # as nova: a page of at most max_limit, and a link to the next
            items, following = page(
                items,
                query,
                self.nova_max_limit,
                url=ENDPOINTS['compute'] + '/servers/detail',
            )
            links = [{'rel': 'next', 'href': following}] if following else []
            return 200, {
                'servers': items,
                **({'servers_links': links} if links else {}),
            }
        m = re.fullmatch(r'/servers/([^/]+)(/action)?', path)
        if m:
            server_id, action = m.groups()
            server = (
                self._async_get('servers', server_id, 'ACTIVE')
                if (method == 'GET')
                else self.get('servers', server_id)
            )
            if server is None:
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            if method == 'GET':
                return 200, {'server': server_view(server)}
            if method == 'DELETE' and self.reclaim_instance_interval:
                server['status'] = 'SOFT_DELETED'
                return 204, None
            if action and 'os-resetState' in body:
                # nova/api/openstack/compute/admin_actions.py _reset_state
                self.server_resets.append((server_id, body['os-resetState']))
                server['status'] = body['os-resetState']['state'].upper()
                server['task_state'] = None
                return 202, None
            if action and 'forceDelete' in body:
                if server.get('status') != 'SOFT_DELETED':
                    return 409, {
                        'conflictingRequest': {
                            'code': 409,
                            'message': "Cannot 'forceDelete' instance "
                            'while it is in vm_state active',
                        }
                    }
            if method == 'DELETE' or (action and 'forceDelete' in body):
                server['task_state'] = 'deleting'
                self._start_delete('servers', server_id)
                return 204 if method == 'DELETE' else 202, None
        if path == '/os-server-groups':
            offset = int(query.get('offset', 0))
            limit = min(int(query.get('limit', 1000)), self.nova_max_limit)
            groups = self.all('server_groups')[offset : offset + limit]
            if (self._microversion('compute') or (2, 1)) < (2, 13):
                # as nova: the owner is shown from 2.13 on
                groups = [
                    {k: v for k, v in g.items() if k != 'project_id'}
                    for g in groups
                ]
            return 200, {'server_groups': groups}
        m = re.fullmatch(r'/os-server-groups/([^/]+)', path)
        if m and method == 'DELETE':
            if not self.exists('server_groups', m.group(1)):
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            self._remove('server_groups', m.group(1))
            return 204, None
        return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}

    def _server_gone(self, server_id):
        """What nova does when a server is deleted: delete the ports it
        created, unbind the others, detach (or delete) the volumes."""
        for port in self.all('ports'):
            if port.get('device_id') == server_id:
                if port.get('created_by_nova'):
                    self._remove('ports', port['id'])
                else:
                    port['device_id'] = ''
                    port['device_owner'] = ''
        for volume in self.all('volumes'):
            attached = [
                a
                for a in volume.get('attachments', [])
                if a['server_id'] == server_id
            ]
            if not attached:
                continue
            volume['attachments'] = [
                a for a in volume['attachments'] if a['server_id'] != server_id
            ]
            if volume.get('delete_on_termination'):
                self._remove('volumes', volume['id'])
            elif not volume['attachments']:
                volume['status'] = 'available'

    def _finish_delete(self, collection, id_):
        if collection == 'servers':
            self._server_gone(id_)
        super()._finish_delete(collection, id_)


class CallerKeypairs:
    """The caller's keypairs, which Heat deletes by name: a keypair's id
    is its name."""

    def _compute(self, method, path, query, body):
        m = re.fullmatch(r'/os-keypairs/([^/]+)', path)
        if m is None:
            return super()._compute(method, path, query, body)
        keypair = self.get('keypairs', m.group(1))
        if keypair is None:
            return 404, {
                'itemNotFound': {'code': 404, 'message': 'Keypair not found'}
            }
        return 200, {'keypair': keypair}


class Keypairs:
    """The keypairs of the project's users (a keypair belongs to a user,
    not to a project): a keypair's id is ``<user>/<name>``."""

    def keypair(self, user_id, name):
        return self.add(
            'keypairs',
            id=f'{user_id}/{name}',
            name=name,
            user_id=user_id,
            type='ssh',
            fingerprint='aa:bb',
            public_key='ssh-ed25519 AAAA',
        )

    def _compute(self, method, path, query, body):
        if path == '/os-keypairs':
            return 200, {
                'keypairs': [
                    {'keypair': {k: v for k, v in kp.items() if k != 'id'}}
                    for kp in self.all('keypairs')
                    if kp['user_id'] == query.get('user_id', ADMIN_USER)
                ]
            }
        m = re.fullmatch(r'/os-keypairs/([^/]+)', path)
        if m:
            kp = self.get(
                'keypairs', f'{query.get("user_id", ADMIN_USER)}/{m.group(1)}'
            )
            if kp is None:
                return 404, {
                    'itemNotFound': {
                        'code': 404,
                        'message': 'Keypair not found',
                    }
                }
            return 200, {'keypair': {k: v for k, v in kp.items() if k != 'id'}}
        return super()._compute(method, path, query, body)


def server_view(server):
    view = copy.deepcopy(server)
    view.setdefault('status', 'ACTIVE')
    view['OS-EXT-STS:task_state'] = view.pop('task_state', None)
    view['tenant_id'] = view['project_id']
    view['os-extended-volumes:volumes_attached'] = [
        {'id': v} for v in view.pop('volumes', [])
    ]
    return view
