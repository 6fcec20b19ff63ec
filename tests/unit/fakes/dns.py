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

"""Designate: zones, whose delete is asynchronous, and the PTR records of
floating IPs. A call acts for the project of its
``X-Auth-Sudo-Project-ID`` header (the admin's without it); every call is
logged in ``dns_calls``."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS


class Dns:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: (method, path, sudo project) of the calls, in order
        self.dns_calls: list[tuple[str, str, str | None]] = []

    def zone(self, project_id, name, **extra):
        return self.add(
            'zones',
            name=name,
            project_id=project_id,
            status='ACTIVE',
            action='NONE',
            email='a@b.test',
            ttl=3600,
            serial=1,
            type='PRIMARY',
            shared=False,
            **extra,
        )

    def ptr(self, fip, ptrdname):
        self.add(
            'ptrs',
            id=f'RegionOne:{fip["id"]}',
            ptrdname=ptrdname,
            project_id=fip['project_id'],
            address=fip['floating_ip_address'],
            ttl=3600,
            status='ACTIVE',
            action='NONE',
            description=None,
        )

    def _dns(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': {
                    'values': [
                        {
                            'id': 'v2',
                            'status': 'CURRENT',
                            'links': [
                                {
                                    'rel': 'self',
                                    'href': ENDPOINTS['dns'] + '/v2',
                                }
                            ],
                        }
                    ]
                }
            }
        sudo = self.header('X-Auth-Sudo-Project-ID')
        scope = sudo or ADMIN_PROJECT
        self.dns_calls.append((method, path, sudo))
        all_projects = self.header('X-Auth-All-Projects') == 'True'
        if path == '/v2/zones':
            return 200, {
                'zones': [
                    z
                    for z in self.all('zones')
                    if all_projects or z['project_id'] == scope
                ],
                'links': {},
                'metadata': {},
            }
        m = re.fullmatch(r'/v2/zones/([^/]+)', path)
        if m:
            zone = self._poll_zone(m.group(1))
            if zone is None or zone['project_id'] != scope:
                return 404, {
                    'code': 404,
                    'type': 'zone_not_found',
                    'message': 'Could not find Zone',
                }
            if method == 'GET':
                return 200, zone
            if method == 'DELETE':
                zone.update(
                    action='DELETE',
                    status='PENDING',
                    polls_left=self.delete_polls,
                )
                return 202, zone
        if path == '/v2/reverse/floatingips':
            return 200, {
                'floatingips': [
                    {k: v for k, v in p.items() if k != 'project_id'}
                    for p in self.all('ptrs')
                    if p['project_id'] == scope
                ],
                'links': {},
                'metadata': {},
            }
        m = re.fullmatch(r'/v2/reverse/floatingips/([^/]+)', path)
        if m and method == 'PATCH':
            ptr = self.get('ptrs', m.group(1))
            if ptr is None or ptr['project_id'] != scope:
                return 404, {'code': 404, 'message': 'not found'}
            if body['ptrdname'] is None:
                self._remove('ptrs', ptr['id'])  # unset: the record goes
            else:
                ptr['ptrdname'] = body['ptrdname']
            return 202, ptr
        return 404, {'code': 404, 'message': 'no route'}

    def _poll_zone(self, zone_id):
        zone = self.get('zones', zone_id)
        if zone is not None and zone['action'] == 'DELETE':
            if zone.get('fail_delete'):
                zone['status'] = 'ERROR'
            elif zone['polls_left'] <= 0:
                self._remove('zones', zone_id)
                return None
            zone['polls_left'] -= 1
        return zone
