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
logged in ``dns_calls``. As Designate's context middleware has it, that
header and ``X-Auth-All-Projects`` are admin's alone (policies ``use_sudo``
and ``all_tenants``): through a token without admin (``fakes.scoped``)
either is refused (403), and a call acts for the token's project.

A zone may be shared with other projects (``zone_share``), which then hold
record sets in it (``recordset``) and list it with their own zones
(storage's ``find_zones``, ``include_shared``): as Designate does, the zone says
``shared``, its delete is refused (400 ``zone_shared``) unless it says
``X-Designate-Delete-Shares: true``, and then it takes the shares and every
record set in it along.

A zone may be on offer to another project (``offer_zone``: a transfer
request, ``ACTIVE``): as central and storage have it, a project is listed
the requests it made and those made to it, the admin every one with
``X-Auth-All-Projects``; accepting one (``accept_zone_transfer``) gives
the zone, and every record set in it, to the other project and leaves
the request ``COMPLETE``. An
admin's GET of a zone across projects sees any project's zone.

Record sets are listed across zones (``GET /v2/recordsets``) as central's
``find_recordsets`` does without a zone: by their own project (storage's
tenant criteria on the record set's ``tenant_id``), whatever zone they
are in, every project's with ``X-Auth-All-Projects``. One is deleted
(``DELETE /v2/zones/{zone}/recordsets/{id}``, at once here) by the admin
(whatever project it acts for), the zone's project or its own (policy
``delete_recordset``)."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS, Conflict

#: the project of Designate's managed records (``managed_resource_tenant_id``,
#: its default): the reverse zones of floating IPs' PTR records are its
MANAGED = '00000000-0000-0000-0000-000000000000'


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

    def zone_share(self, zone, target_project_id):
        zone['shared'] = True
        return self.add(
            'zone_shares',
            zone_id=zone['id'],
            project_id=zone['project_id'],
            target_project_id=target_project_id,
        )

    def recordset(self, zone, project_id, name):
        """A record set of ``project_id`` (the zone's or one it is shared
        with) in the zone."""
        return self.add(
            'recordsets',
            zone_id=zone['id'],
            project_id=project_id,
            name=name,
            type='A',
            records=['192.0.2.1'],
        )

    def offer_zone(self, zone, target_project_id=None):
        return self.add(
            'zone_transfer_requests',
            zone_id=zone['id'],
            zone_name=zone['name'],
            project_id=zone['project_id'],
            target_project_id=target_project_id,
            status='ACTIVE',
            key='SECRETKEY',
            description=None,
        )

    def accept_zone_transfer(self, request_id, project_id):
        """The other project's ``zone transfer accept request``; False if
        the request is gone (withdrawn) or done."""
        req = self.get('zone_transfer_requests', request_id)
        if req is None or req['status'] != 'ACTIVE':
            return False
        self.get('zones', req['zone_id'])['project_id'] = project_id
        # storage's update_zone gives every record set of the zone along
        for rs in self.all('recordsets'):
            if rs['zone_id'] == req['zone_id']:
                rs['project_id'] = project_id
        req['status'] = 'COMPLETE'
        return True

    def _transfer_requests(self, method, path, scope, all_projects):
        visible = [
            t
            for t in self.all('zone_transfer_requests')
            if all_projects
            or scope in (t['project_id'], t['target_project_id'])
        ]
        if path == '/v2/zones/tasks/transfer_requests' and method == 'GET':
            return 200, {'transfer_requests': visible, 'links': {}}
        wanted = path.rsplit('/', 1)[-1]
        [found] = [t for t in visible if t['id'] == wanted] or [None]
        if found is None:
            return 404, {
                'code': 404,
                'type': 'zone_transfer_request_not_found',
            }
        if method == 'DELETE':
            self._remove('zone_transfer_requests', found['id'])
            return 204, None
        return 200, found

    def ptr(self, fip, ptrdname):
        # as the real one: the PTR is a record set too, the floating IP's
        # project's, in the reverse zone of Designate's managed project
        reverse = '.'.join(reversed(fip['floating_ip_address'].split('.')))
        zone = next(
            (z for z in self.all('zones') if z['project_id'] == MANAGED),
            None,
        ) or self.zone(MANAGED, '113.0.203.in-addr.arpa.')
        self.add(
            'recordsets',
            id=f'ptr-{fip["id"]}',
            zone_id=zone['id'],
            zone_name=zone['name'],
            project_id=fip['project_id'],
            name=f'{reverse}.in-addr.arpa.',
            type='PTR',
            records=[ptrdname],
        )
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
        self.dns_calls.append((method, path, sudo))
        all_projects = self.header('X-Auth-All-Projects') == 'True'
        caller = getattr(self, '_caller', lambda: None)()
        if caller is not None and 'admin' not in caller['roles']:
            # a token without admin: the context's sudo and all_tenants
            # are policy checks (use_sudo, all_tenants: admin alone)
            if sudo or all_projects:
                return 403, {
                    'code': 403,
                    'type': 'forbidden',
                    'message': 'Forbidden',
                }
            scope = caller['project_id']
        else:
            scope = sudo or ADMIN_PROJECT
        if path.startswith('/v2/zones/tasks/transfer_requests'):
            return self._transfer_requests(method, path, scope, all_projects)
        if path == '/v2/zones':
            # storage's find_zones: the project's and those shared with it
            shared_with = {
                s['zone_id']
                for s in self.all('zone_shares')
                if s['target_project_id'] == scope
            }
            return 200, {
                'zones': [
                    z
                    for z in self.all('zones')
                    if all_projects
                    or z['project_id'] == scope
                    or z['id'] in shared_with
                ],
                'links': {},
                'metadata': {},
            }
        if path == '/v2/recordsets' and method == 'GET':
            return 200, {
                'recordsets': [
                    r
                    for r in self.all('recordsets')
                    if all_projects or r['project_id'] == scope
                ],
                'links': {},
                'metadata': {},
            }
        m = re.fullmatch(r'/v2/zones/([^/]+)/recordsets/([^/]+)', path)
        if m:
            return self._recordset(method, *m.groups(), scope, all_projects)
        m = re.fullmatch(r'/v2/zones/([^/]+)/shares', path)
        if m and method == 'GET':
            # storage's _find_shared_zones: by zone, the shares the project
            # made or was given (every one across projects); no zone check
            return 200, {
                'shared_zones': [
                    s
                    for s in self.all('zone_shares')
                    if s['zone_id'] == m.group(1)
                    and (
                        all_projects
                        or scope in (s['project_id'], s['target_project_id'])
                    )
                ],
                'links': {},
            }
        m = re.fullmatch(r'/v2/zones/([^/]+)', path)
        if m:
            zone = self._poll_zone(m.group(1))
            if zone is None or (
                zone['project_id'] != scope
                and not (all_projects and method == 'GET')
            ):
                return 404, {
                    'code': 404,
                    'type': 'zone_not_found',
                    'message': 'Could not find Zone',
                }
            if method == 'GET':
                return 200, zone
            if method == 'DELETE':
                self._delete_shares(zone)
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
                self._remove('recordsets', 'ptr-' + ptr['id'].split(':')[-1])
            else:
                ptr['ptrdname'] = body['ptrdname']
            return 202, ptr
        return 404, {'code': 404, 'message': 'no route'}

    def _recordset(self, method, zone_id, rs_id, scope, all_projects):
        zone = self.get('zones', zone_id)
        rs = self.get('recordsets', rs_id)
        if zone is None or rs is None or rs['zone_id'] != zone_id:
            return 404, {'code': 404, 'type': 'recordset_not_found'}
        if zone['project_id'] == MANAGED and not all_projects:
            # the managed reverse zone: no project sees it (the real one)
            return 404, {'code': 404, 'type': 'zone_not_found'}
        # policy delete_recordset: the admin (whose role stays under sudo),
        # a member of the zone's project or of the record set's own
        admin = getattr(self, '_caller', lambda: None)() is None
        may = admin or scope in (zone['project_id'], rs['project_id'])
        if method == 'GET' and (may or all_projects):
            return 200, rs
        if method == 'DELETE' and may:
            self._remove('recordsets', rs_id)
            return 202, dict(rs, action='DELETE', status='PENDING')
        return 403, {'code': 403, 'type': 'forbidden'}

    def _delete_shares(self, zone):
        """What Designate checks, and deletes along, when a shared zone
        goes: refused without the header, else its shares and every
        project's record sets in it."""
        if not zone.get('shared'):
            return
        if (self.header('X-Designate-Delete-Shares') or '').lower() != 'true':
            raise Conflict(
                400,
                {
                    'code': 400,
                    'type': 'zone_shared',
                    'message': 'This zone is shared with other projects, '
                    'please remove these shares before deletion or use the '
                    'delete-shares modifier to override this warning.',
                },
            )
        for share in self.all('zone_shares'):
            if share['zone_id'] == zone['id']:
                self._remove('zone_shares', share['id'])
        for rs in self.all('recordsets'):
            if rs['zone_id'] == zone['id']:
                self._remove('recordsets', rs['id'])

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
