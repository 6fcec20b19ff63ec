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

"""A small stateful OpenStack behind requests-mock, for unit tests.

It answers the REST calls the cascade makes with payloads shaped like the
API references, keeps resources in memory, and refuses wrong-order deletes
the way the real services do (409 ``SubnetInUse``, 400 ``Invalid volume``,
...), so a test proves an order by running it, not by reading it. What only
a real service can decide is proved on the minicloud (tests/functional).
Every mutating request is logged in ``changes`` as ``(METHOD, path)``.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from urllib import parse
import uuid

from keystoneauth1 import fixture as ks_fixture
import openstack.connection
import requests_mock

AUTH_URL = 'http://keystone.test/v3'
ENDPOINTS = {
    'identity': 'http://keystone.test/v3',
    'compute': 'http://nova.test/v2.1',
    'network': 'http://neutron.test',
    'block-storage': 'http://cinder.test/v3',
    'image': 'http://glance.test',
}
ADMIN_PROJECT = 'a0000000000000000000000000000000'
ADMIN_USER = 'u0000000000000000000000000000000'

# Neutron collections: URL name -> JSON key
NEUTRON = {
    'floatingips': 'floatingips',
    'routers': 'routers',
    'ports': 'ports',
    'trunks': 'trunks',
    'subnets': 'subnets',
    'networks': 'networks',
    'security-groups': 'security_groups',
    'security-group-rules': 'security_group_rules',
    'rbac-policies': 'rbac_policies',
}
_ids = itertools.count(1)


def new_id(prefix: str = '') -> str:
    return (prefix + uuid.UUID(int=next(_ids)).hex)[-32:]


class Conflict(Exception):
    def __init__(self, status: int, body):
        self.status = status
        self.body = body


def neutron_error(kind: str, message: str, status: int = 409) -> Conflict:
    return Conflict(
        status,
        {'NeutronError': {'type': kind, 'message': message, 'detail': ''}},
    )


class FakeCloud:
    """Use as ``with FakeCloud() as cloud: conn = cloud.connection()``.

    Another service is added by a subclass: an entry in ``endpoints`` and a
    method ``_<service_type>(method, path, query, body)`` that returns
    ``(status, payload)`` (see ``_network``).
    """

    endpoints = ENDPOINTS

    def __init__(self, services=None, *, delete_polls: int = 1):
        self.services = tuple(services or self.endpoints)
        #: GETs a resource with an asynchronous delete answers before 404
        self.delete_polls = delete_polls
        self.db: dict[str, dict[str, dict]] = {}
        self.changes: list[tuple[str, str]] = []
        self.requests: list[tuple[str, str]] = []
        self._deleting: dict[tuple[str, str], int] = {}
        #: (method, regex on path) -> list of status codes to answer first
        self.faults: list[tuple[str, str, int]] = []
        self.forbidden: set[str] = set()
        self.mocker = requests_mock.Mocker()
        self.add(
            'projects',
            id=ADMIN_PROJECT,
            name='admin',
            domain_id='default',
            enabled=True,
            parent_id='default',
            is_domain=False,
            options={},
        )

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self):
        self.mocker.__enter__()
        self.mocker.register_uri(
            requests_mock.ANY,
            requests_mock.ANY,
            status_code=599,
            text='unexpected request',
        )
        for service in self.services:
            base = self.endpoints[service]
            self.mocker.register_uri(
                requests_mock.ANY,
                re.compile(re.escape(base) + r'(/.*)?$'),
                content=self._dispatch(service, base),
            )
        token = self.token()
        self.mocker.post(
            AUTH_URL + '/auth/tokens',
            json=token,
            headers={'X-Subject-Token': 'fake-token'},
        )
        return self

    def __exit__(self, *exc):
        return self.mocker.__exit__(*exc)

    def token(self):
        tok = ks_fixture.V3Token(
            project_id=ADMIN_PROJECT,
            project_name='admin',
            user_id=ADMIN_USER,
            user_name='admin',
            project_domain_id='default',
            user_domain_id='default',
        )
        tok.add_role(name='admin')
        for service in self.services:
            svc = tok.add_service(service)
            svc.add_endpoint(
                interface='public',
                url=self.endpoints[service],
                region='RegionOne',
            )
        return tok

    def connection(self) -> openstack.connection.Connection:
        return openstack.connection.Connection(
            auth_url=AUTH_URL,
            username='admin',
            password='secret',
            project_name='admin',
            user_domain_id='default',
            project_domain_id='default',
            region_name='RegionOne',
            identity_api_version='3',
        )

    @staticmethod
    def cli_auth_args():
        return [
            '--os-auth-url',
            AUTH_URL,
            '--os-username',
            'admin',
            '--os-password',
            'secret',
            '--os-project-name',
            'admin',
            '--os-user-domain-id',
            'default',
            '--os-project-domain-id',
            'default',
            '--os-region-name',
            'RegionOne',
            '--os-identity-api-version',
            '3',
        ]

    # -- state -------------------------------------------------------------

    def add(self, collection: str, **obj) -> dict:
        obj.setdefault('id', new_id())
        self.db.setdefault(collection, {})[obj['id']] = obj
        return obj

    def all(self, collection: str) -> list[dict]:
        return list(self.db.get(collection, {}).values())

    def get(self, collection: str, id_: str) -> dict | None:
        return self.db.get(collection, {}).get(id_)

    def exists(self, collection: str, id_: str) -> bool:
        return id_ in self.db.get(collection, {})

    def owned_by(self, project_id: str) -> list[tuple[str, str]]:
        out = []
        for coll, items in self.db.items():
            for obj in items.values():
                if _owner(obj) == project_id and coll != 'projects':
                    out.append((coll, obj['id']))
        return sorted(out)

    def deleted_order(self) -> list[str]:
        """Paths of DELETE requests, in order."""
        return [p.split('?')[0] for m, p in self.changes if m == 'DELETE']

    def index_of_delete(self, collection_path: str, id_: str) -> int:
        for i, path in enumerate(self.deleted_order()):
            if path.endswith(f'{collection_path}/{id_}'):
                return i
        raise AssertionError(f'{collection_path}/{id_} was not deleted')

    def _remove(self, collection: str, id_: str) -> None:
        self.db.get(collection, {}).pop(id_, None)

    # -- dispatch ----------------------------------------------------------

    def _dispatch(self, service, base):
        handler = getattr(self, '_' + service.replace('-', '_'))

        def respond(request, context):
            path = request.path_url.split('?')[0]
            base_path = parse.urlparse(base).path
            path = (
                path[len(base_path) :] if path.startswith(base_path) else path
            )
            query = {
                k: v[-1]
                for k, v in parse.parse_qs(
                    parse.urlparse(request.url).query
                ).items()
            }
            self.requests.append((request.method, request.path_url))
            if request.method in ('POST', 'PUT', 'PATCH', 'DELETE'):
                self.changes.append((request.method, request.path_url))
            for i, (method, pattern, status) in enumerate(self.faults):
                if method == request.method and re.search(
                    pattern, request.path_url
                ):
                    del self.faults[i]
                    context.status_code = status
                    return json.dumps(
                        {
                            'error': {
                                'message': 'injected fault',
                                'code': status,
                            }
                        }
                    ).encode()
            for pattern in self.forbidden:
                if re.search(pattern, request.path_url):
                    context.status_code = 403
                    return json.dumps(
                        {
                            'error': {
                                'message': 'Policy does not allow this',
                                'code': 403,
                            }
                        }
                    ).encode()
            body = request.json() if request.body else None
            try:
                status, payload = handler(request.method, path, query, body)
            except Conflict as exc:
                status, payload = exc.status, exc.body
            context.status_code = status
            if payload is None:
                return b''
            context.headers['Content-Type'] = 'application/json'
            return json.dumps(payload).encode()

        return respond

    def _async_get(self, collection, id_, status_while_deleting):
        """GET of a resource whose delete is asynchronous."""
        obj = self.get(collection, id_)
        if obj is None:
            return None
        key = (collection, id_)
        if key in self._deleting:
            if self._deleting[key] <= 0:
                self._finish_delete(collection, id_)
                return None
            self._deleting[key] -= 1
            obj['status'] = status_while_deleting
        return obj

    def _async_list(self, collection, status_while_deleting):
        """A list counts as one poll of each resource being deleted."""
        listed = (
            self._async_get(collection, obj['id'], status_while_deleting)
            for obj in list(self.all(collection))
        )
        return [obj for obj in listed if obj is not None]

    def _start_delete(self, collection, id_):
        self._deleting[(collection, id_)] = self.delete_polls

    def _finish_delete(self, collection, id_):
        self._deleting.pop((collection, id_), None)
        if collection == 'servers':
            self._server_gone(id_)
        self._remove(collection, id_)

    # -- identity ----------------------------------------------------------

    def _identity(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'version': {
                    'id': 'v3.14',
                    'status': 'stable',
                    'links': [{'rel': 'self', 'href': AUTH_URL + '/'}],
                }
            }
        m = re.fullmatch(r'/projects/([^/]+)', path)
        if m:
            project = self.get('projects', m.group(1))
            if project is None:
                return 404, {
                    'error': {
                        'code': 404,
                        'message': 'Could not find project.',
                    }
                }
            if method == 'GET':
                return 200, {'project': project}
            if method == 'PATCH':
                project.update(body['project'])
                return 200, {'project': project}
            if method == 'DELETE':
                if any(
                    p.get('parent_id') == project['id']
                    for p in self.all('projects')
                ):
                    return 403, {
                        'error': {
                            'code': 403,
                            'message': 'not a leaf in the hierarchy',
                        }
                    }
                self._remove('projects', project['id'])
                return 204, None
        if path == '/projects':
            items = [
                p
                for p in self.all('projects')
                if _matches(p, query, {'name', 'domain_id', 'parent_id'})
            ]
            return 200, {'projects': items, 'links': {}}
        if path == '/users':
            return 200, {'users': self.all('users'), 'links': {}}
        if path == '/domains':
            items = [
                d for d in self.all('domains') if _matches(d, query, {'name'})
            ]
            return 200, {'domains': items, 'links': {}}
        m = re.fullmatch(r'/domains/([^/]+)', path)
        if m:
            domain = self.get('domains', m.group(1))
            if domain is None:
                return 404, {'error': {'code': 404, 'message': 'no domain'}}
            return 200, {'domain': domain}
        if path == '/role_assignments':
            scope = query.get('scope.project.id')
            items = [
                a
                for a in self.all('role_assignments')
                if not scope or a['scope']['project']['id'] == scope
            ]
            return 200, {'role_assignments': items, 'links': {}}
        m = re.fullmatch(
            r'/users/([^/]+)/application_credentials(?:/(.+))?', path
        )
        if m:
            user, cred_id = m.groups()
            if method == 'DELETE':
                if not self.exists('application_credentials', cred_id):
                    return 404, {'error': {'code': 404, 'message': 'none'}}
                self._remove('application_credentials', cred_id)
                return 204, None
            items = [
                c
                for c in self.all('application_credentials')
                if c['user_id'] == user
            ]
            return 200, {'application_credentials': items, 'links': {}}
        return 404, {'error': {'code': 404, 'message': 'no route ' + path}}

    # -- compute -----------------------------------------------------------

    def _compute(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'version': {
                    'id': 'v2.1',
                    'status': 'CURRENT',
                    'version': '2.96',
                    'min_version': '2.1',
                    'links': [
                        {'rel': 'self', 'href': ENDPOINTS['compute'] + '/'}
                    ],
                }
            }
        if path == '/servers/detail':
            items = [
                _server_view(s)
                for s in self._async_list('servers', 'ACTIVE')
                if _matches(
                    s,
                    query,
                    {'project_id'},
                    aliases={'project_id': 'tenant_id'},
                )
            ]
            return 200, {'servers': items}
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
                return 200, {'server': _server_view(server)}
            if method == 'DELETE' or (action and 'forceDelete' in body):
                server['task_state'] = 'deleting'
                self._start_delete('servers', server_id)
                return 204 if method == 'DELETE' else 202, None
        if path == '/os-server-groups':
            return 200, {'server_groups': self.all('server_groups')}
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

    # -- block storage -----------------------------------------------------

    def _block_storage(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': [
                    {
                        'id': 'v3.0',
                        'status': 'CURRENT',
                        'version': '3.70',
                        'min_version': '3.0',
                        'links': [
                            {
                                'rel': 'self',
                                'href': ENDPOINTS['block-storage'] + '/',
                            }
                        ],
                    }
                ]
            }
        for coll, owner_key in (
            ('volumes', 'os-vol-tenant-attr:tenant_id'),
            ('snapshots', 'os-extended-snapshot-attributes:project_id'),
            ('backups', 'os-backup-project-attr:project_id'),
        ):
            if path == f'/{coll}/detail':
                items = [
                    o
                    for o in self._async_list(coll, 'deleting')
                    if not query.get('project_id')
                    or o[owner_key] == query['project_id']
                ]
                return 200, {coll: items}
            m = re.fullmatch(rf'/{coll}/([^/]+)(/action)?', path)
            if not m:
                continue
            obj = (
                self._async_get(coll, m.group(1), 'deleting')
                if (method == 'GET')
                else self.get(coll, m.group(1))
            )
            if obj is None:
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            singular = coll[:-1]
            if method == 'GET':
                return 200, {singular: obj}
            if m.group(2):
                return self._volume_action(obj, body)
            if method == 'DELETE':
                getattr(self, f'_check_delete_{singular}')(obj)
                obj['status'] = 'deleting'
                self._start_delete(coll, obj['id'])
                return 202, None
        return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}

    def _check_delete_volume(self, volume):
        snapshots = [
            s for s in self.all('snapshots') if s['volume_id'] == volume['id']
        ]
        if volume['status'] not in ('available', 'error') or snapshots:
            raise Conflict(
                400,
                {
                    'badRequest': {
                        'code': 400,
                        'message': 'Invalid volume: Volume status must be available or error '
                        'or error_restoring or error_extending or error_managing '
                        'and must not be migrating, attached, belong to a group, '
                        'have snapshots, awaiting a transfer, or be disassociated '
                        'from snapshots after volume transfer.',
                    }
                },
            )

    def _check_delete_snapshot(self, snapshot):
        pass  # allowed with dependent volumes, as the file driver does

    def _check_delete_backup(self, backup):
        # As admin, Cinder accepts deleting a full backup that still has
        # incrementals (it looks for them in the caller's project only).
        pass

    def _volume_action(self, volume, body):
        if 'os-force_detach' in body:
            attachment = body['os-force_detach'].get('attachment_id')
            volume['attachments'] = [
                a
                for a in volume['attachments']
                if a['attachment_id'] != attachment
            ]
            if not volume['attachments']:
                volume['status'] = 'available'
            return 202, None
        return 400, {'badRequest': {'code': 400, 'message': 'bad action'}}

    # -- image -------------------------------------------------------------

    def _image(self, method, path, query, body):
        if path in ('', '/'):
            return 300, {
                'versions': [
                    {
                        'id': 'v2.16',
                        'status': 'CURRENT',
                        'links': [
                            {
                                'rel': 'self',
                                'href': ENDPOINTS['image'] + '/v2/',
                            }
                        ],
                    }
                ]
            }
        if path == '/v2/images':
            items = [
                i for i in self.all('images') if _matches(i, query, {'owner'})
            ]
            return 200, {'images': items}
        m = re.fullmatch(r'/v2/images/([^/]+)(/members)?', path)
        if m:
            image = self.get('images', m.group(1))
            if image is None:
                return 404, {'message': 'not found'}
            if m.group(2):
                return 200, {
                    'members': [
                        {
                            'member_id': mid,
                            'image_id': image['id'],
                            'status': 'accepted',
                        }
                        for mid in image.get('members', [])
                    ]
                }
            if method == 'GET':
                return 200, image
            if method == 'PATCH':
                for op in body:
                    image[op['path'].lstrip('/')] = op.get('value')
                return 200, image
            if method == 'DELETE':
                if image.get('protected'):
                    return 403, {'message': 'Image is protected'}
                self._remove('images', image['id'])
                return 204, None
        return 404, {'message': 'no route'}

    # -- network -----------------------------------------------------------

    def _network(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': [
                    {
                        'id': 'v2.0',
                        'status': 'CURRENT',
                        'links': [
                            {
                                'rel': 'self',
                                'href': ENDPOINTS['network'] + '/v2.0/',
                            }
                        ],
                    }
                ]
            }
        m = re.fullmatch(r'/v2\.0/([a-z-]+)(?:/([^/]+))?(?:/([a-z_]+))?', path)
        if not m or m.group(1) not in NEUTRON:
            return 404, {
                'NeutronError': {
                    'type': 'HTTPNotFound',
                    'message': 'no route ' + path,
                }
            }
        coll, id_, action = m.groups()
        key = NEUTRON[coll]
        if id_ is None:
            items = [
                o
                for o in self.all(key)
                if _matches(
                    o, query, set(query) - {'fields', 'limit', 'marker'}
                )
            ]
            return 200, {key: items}
        obj = self.get(key, id_)
        if obj is None:
            return 404, {
                'NeutronError': {
                    'type': 'NotFound',
                    'message': f'{id_} not found',
                }
            }
        if method == 'GET':
            return 200, {key[:-1]: obj}
        if method == 'PUT' and action == 'remove_router_interface':
            return self._remove_interface(obj, body)
        if method == 'PUT':
            return self._update_router(obj, body['router'])
        if method == 'DELETE':
            getattr(self, f'_neutron_delete_{key}', lambda o: None)(obj)
            self._remove(key, id_)
            return 204, None
        return 405, None

    def _ports_where(self, **attrs):
        return [
            p
            for p in self.all('ports')
            if all(p.get(k) == v for k, v in attrs.items())
        ]

    def _neutron_delete_networks(self, network):
        blocking = [
            p['id']
            for p in self._ports_where(network_id=network['id'])
            if p['device_owner'] != 'network:dhcp'
        ]
        if blocking:
            raise neutron_error(
                'NetworkInUse',
                f'Unable to complete operation on network '
                f'{network["id"]}. There are one or more ports still in use '
                f'on the network, id for these ports is: '
                f'{",".join(blocking)}.',
            )
        for port in self._ports_where(network_id=network['id']):
            self._remove('ports', port['id'])
        for subnet in self.all('subnets'):
            if subnet['network_id'] == network['id']:
                self._remove('subnets', subnet['id'])

    def _neutron_delete_subnets(self, subnet):
        for port in self.all('ports'):
            if port['device_owner'] == 'network:dhcp':
                continue
            if any(
                ip['subnet_id'] == subnet['id'] for ip in port['fixed_ips']
            ):
                raise neutron_error(
                    'SubnetInUse',
                    f'Unable to complete operation on subnet '
                    f'{subnet["id"]}: One or more ports have an IP '
                    f'allocation from this subnet.',
                )

    def _neutron_delete_ports(self, port):
        if port['device_owner'].startswith('network:router_interface'):
            raise neutron_error(
                'ServicePortInUse',
                f'Port {port["id"]} cannot be deleted '
                f'directly via the port API: has device owner '
                f'{port["device_owner"]}.',
            )
        for trunk in self.all('trunks'):
            if trunk['port_id'] == port['id'] or port['id'] in [
                s['port_id'] for s in trunk['sub_ports']
            ]:
                raise neutron_error(
                    'PortInUseAsTrunkParent',
                    f'Port {port["id"]} is in use by trunk {trunk["id"]}.',
                )
        for fip in self.all('floatingips'):
            if fip.get('port_id') == port['id']:
                fip.update(port_id=None, router_id=None, fixed_ip_address=None)

    def _neutron_delete_routers(self, router):
        ports = self._ports_where(device_id=router['id'])
        interfaces = [
            p['id']
            for p in ports
            if p['device_owner'].startswith('network:router_interface')
        ]
        if interfaces:
            raise neutron_error(
                'RouterInUse',
                f'Router {router["id"]} has '
                f'ports still attached: '
                f'{",".join(interfaces)}',
            )
        self._check_no_fip_needs(router, 'RouterInUse')

    def _neutron_delete_security_groups(self, group):
        if any(
            group['id'] in p.get('security_groups', [])
            for p in self.all('ports')
        ):
            raise neutron_error(
                'SecurityGroupInUse', f'Security Group {group["id"]} in use.'
            )
        # its rules, and other groups' rules naming it, go with it
        for rule in self.all('security_group_rules'):
            if group['id'] in (
                rule['security_group_id'],
                rule.get('remote_group_id'),
            ):
                self._neutron_delete_security_group_rules(rule)
                self._remove('security_group_rules', rule['id'])

    def _neutron_delete_trunks(self, trunk):
        parent = self.get('ports', trunk['port_id'])
        if parent and parent.get('device_id'):
            raise neutron_error(
                'TrunkInUse', f'Trunk {trunk["id"]} is currently in use.'
            )

    def _neutron_delete_security_group_rules(self, rule):
        group = self.get('security_groups', rule['security_group_id'])
        if group:
            group['security_group_rules'] = [
                r
                for r in group['security_group_rules']
                if r['id'] != rule['id']
            ]

    def _check_no_fip_needs(self, router, error):
        fips = [
            f['id']
            for f in self.all('floatingips')
            if f.get('router_id') == router['id']
        ]
        if fips:
            raise neutron_error(
                error,
                f'Router {router["id"]} is required '
                f'by floating IPs {",".join(fips)}',
            )

    def _remove_interface(self, router, body):
        port = self.get('ports', body['port_id'])
        if port is None or port.get('device_id') != router['id']:
            return 404, {
                'NeutronError': {
                    'type': 'RouterInterfaceNotFound',
                    'message': 'no such interface',
                }
            }
        subnets = {ip['subnet_id'] for ip in port['fixed_ips']}
        for fip in self.all('floatingips'):
            fixed = self.get('ports', fip.get('port_id') or '')
            if (
                fip.get('router_id') == router['id']
                and fixed
                and subnets & {ip['subnet_id'] for ip in fixed['fixed_ips']}
            ):
                raise neutron_error(
                    'RouterInterfaceInUseByFloatingIP',
                    f'Router interface for subnet {sorted(subnets)[0]} on '
                    f'router {router["id"]} cannot be deleted, as it is '
                    f'required by one or more floating IPs.',
                )
        self._remove('ports', port['id'])
        return 200, {'id': router['id'], 'port_id': port['id']}

    def _update_router(self, router, changes):
        if changes.get('external_gateway_info') == {}:
            self._check_no_fip_needs(
                router, 'RouterExternalGatewayInUseByFloatingIp'
            )
        router.update(changes)
        return 200, {'router': router}


def _owner(obj: dict) -> str | None:
    for key in (
        'project_id',
        'tenant_id',
        'owner',
        'os-vol-tenant-attr:tenant_id',
        'os-extended-snapshot-attributes:project_id',
        'os-backup-project-attr:project_id',
    ):
        if obj.get(key):
            return obj[key]
    return None


def _matches(obj, query, keys, aliases=None):
    aliases = aliases or {}
    for key in keys:
        if key not in query:
            continue
        value = obj.get(key, obj.get(aliases.get(key, ''), None))
        if str(value) != query[key] and value != query[key]:
            return False
    return True


def _server_view(server):
    view = copy.deepcopy(server)
    view.setdefault('status', 'ACTIVE')
    view['OS-EXT-STS:task_state'] = view.pop('task_state', None)
    view['tenant_id'] = view['project_id']
    view['os-extended-volumes:volumes_attached'] = [
        {'id': v} for v in view.pop('volumes', [])
    ]
    return view


def ignoring_filters(cloud_cls):
    """A FakeCloud subclass whose list calls ignore every query filter, as
    a service with a broken or missing filter would: only the kinds'
    client-side owner check stands between another project's resources
    and the plan."""

    def ignore(handler):
        def wrapped(self, method, path, query, body):
            if method == 'GET':
                query = {}
            return handler(self, method, path, query, body)

        return wrapped

    return type(
        'FilterIgnoring' + cloud_cls.__name__,
        (cloud_cls,),
        {
            name: ignore(getattr(cloud_cls, name))
            for name in ('_compute', '_block_storage', '_network', '_image')
        },
    )
