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

"""Every other service a project can own things in, for the fake cloud.

``ServicesCloud`` extends the fake Heat, Magnum and Sahara of fake_heat with
Octavia, Swift, Designate, Barbican (its quotas) and Manila, and the base
services with what the cascade's other kinds list: Nova keypairs and quota
sets, Cinder quota sets, Neutron's extensions (VPNaaS, QoS, subnet pools,
address scopes, port forwardings, segment ranges, local IPs) and quotas,
Glance memberships. Payloads are shaped like the API references, and
deletes are refused the way the services refuse them (Octavia's 409 while a
load balancer is PENDING_*, Swift's 409 for a container with objects,
Neutron's ``...InUse``, Manila's 400 for a share with snapshots), so a test
proves an order by running it.

A Swift container's id here is ``AUTH_<project>/<name>``: deleting a
stack does not delete the ``OS::Swift::Container`` it made, as the
minicloud's Heat did not when an admin deleted the stack (Heat looked for
the container in the admin's account).
"""

from __future__ import annotations

import re
import threading
from urllib import parse

import requests_mock

from osc_cascade.engine.executor import Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.workflows.cascade import CascadeOptions, ProjectCascade
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ENDPOINTS_WITH_HEAT, FakeHeatCloud
from tests.unit.fakes.common import ADMIN_PROJECT, ADMIN_USER, Conflict, new_id
from tests.unit.fakes.network import neutron_error

SWIFT = 'http://swift.test'
ENDPOINTS_ALL = {
    **ENDPOINTS_WITH_HEAT,
    'load-balancer': 'http://octavia.test',
    'object-store': f'{SWIFT}/v1/AUTH_{ADMIN_PROJECT}',
    'dns': 'http://designate.test',
    'key-manager': 'http://barbican.test',
    'shared-file-system': 'http://manila.test/v2',
}

# Neutron collections of the extensions: URL path -> (JSON key, extension)
NEUTRON_EXTRA = {
    'vpn/ipsec-site-connections': ('ipsec_site_connections', 'vpnaas'),
    'vpn/vpnservices': ('vpnservices', 'vpnaas'),
    'vpn/endpoint-groups': ('endpoint_groups', 'vpnaas'),
    'vpn/ikepolicies': ('ikepolicies', 'vpnaas'),
    'vpn/ipsecpolicies': ('ipsecpolicies', 'vpnaas'),
    'qos/policies': ('policies', 'qos'),
    'subnetpools': ('subnetpools', 'subnet_allocation'),
    'address-scopes': ('address_scopes', 'address-scope'),
    'network_segment_ranges': (
        'network_segment_ranges',
        'network-segment-range',
    ),
    'local_ips': ('local_ips', 'local_ip'),
}
EXTENSIONS = sorted(
    {ext for _, ext in NEUTRON_EXTRA.values()}
    | {'floating-ip-port-forwarding'}
)

NOVA_DEFAULT_QUOTAS = {
    'instances': 10,
    'cores': 20,
    'ram': 51200,
    'key_pairs': 100,
    'server_groups': 10,
}
CINDER_DEFAULT_QUOTAS = {
    'volumes': 10,
    'snapshots': 10,
    'gigabytes': 1000,
    'backups': 10,
}
# Manila's URL collections and the fake's (Cinder has snapshots too)
MANILA = {
    'shares': 'shares',
    'snapshots': 'share_snapshots',
    'share-networks': 'share_networks',
    'share-groups': 'share_groups',
    'share-replicas': 'share_replicas',
}
MANILA_DEFAULT_QUOTAS = {
    'shares': 50,
    'snapshots': 50,
    'gigabytes': 1000,
    'share_networks': 10,
}


def octavia_error(status, message):
    return Conflict(
        status,
        {'faultcode': 'Client', 'faultstring': message, 'debuginfo': None},
    )


def manila_error(status, message):
    kind = {400: 'badRequest', 403: 'forbidden', 409: 'conflict'}[status]
    return Conflict(status, {kind: {'code': status, 'message': message}})


def swift_error(status, text):
    return Conflict(status, {'error': text})


class _NotJSON:
    """A request whose body is not JSON (Swift's bulk delete is a list of
    paths), for the base fake that decodes every body."""

    def __init__(self, request):
        self._request = request

    def __getattr__(self, name):
        return getattr(self._request, name)

    def json(self):
        return None


class ServicesCloud(FakeHeatCloud):
    endpoints = ENDPOINTS_ALL

    def __init__(
        self, services=None, *, reseller=True, bulk_delete=100, **kwargs
    ):
        super().__init__(services, **kwargs)
        #: whether the caller has Swift's reseller admin role
        self.reseller = reseller
        #: Swift's max_deletes_per_request, or None for no bulk middleware
        self.bulk_delete = bulk_delete
        self._request = threading.local()
        #: the accounts of the bulk deletes, and (method, path, sudo
        #: project) of Designate's calls, in order
        self.bulk_requests: list[str] = []
        self.dns_calls: list[tuple[str, str, str | None]] = []

    def __enter__(self):
        super().__enter__()
        # every account, not only the caller's (the catalog's)
        self.mocker.register_uri(
            requests_mock.ANY,
            re.compile(re.escape(SWIFT) + r'/.*$'),
            content=self._dispatch('object-store', SWIFT),
        )
        return self

    def _dispatch(self, service, base):
        respond = super()._dispatch(service, base)

        def with_headers(request, context):
            self._request.headers = request.headers
            self._request.body = request.body
            self._request.query = parse.parse_qs(
                parse.urlparse(request.url).query, keep_blank_values=True
            )
            self._request.reply_headers = {}
            if request.headers.get('Content-Type') == 'text/plain':
                request = _NotJSON(request)
            content = respond(request, context)
            context.headers.update(self._request.reply_headers)
            return content

        return with_headers

    def header(self, name):
        """A header of the request being answered."""
        return self._request.headers.get(name)

    def flag(self, name):
        """Whether the request's query has ``name``, even with no value
        (``?bulk-delete``), which the base fake's parsing drops."""
        return name in self._request.query

    # -- compute: keypairs and quota sets ---------------------------------

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
        m = re.fullmatch(r'/os-quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('nova', m, method, NOVA_DEFAULT_QUOTAS)
        return super()._compute(method, path, query, body)

    def set_quota(self, service, project_id, **values):
        self.add(
            'quota_sets',
            id=f'{service}/{project_id}',
            service=service,
            project=project_id,
            values=values,
        )

    def has_quota(self, service, project_id):
        return self.exists('quota_sets', f'{service}/{project_id}')

    def _quota_set(self, service, m, method, defaults):
        project_id, default = m.groups()
        key = f'{service}/{project_id}'
        if method == 'DELETE':
            self._remove('quota_sets', key)
            return 202 if service == 'manila' else 204, None
        own = (
            {}
            if default
            else (self.get('quota_sets', key) or {}).get('values', {})
        )
        return 200, {'quota_set': {**defaults, **own, 'id': project_id}}

    # -- block storage: quota sets ----------------------------------------

    def _block_storage(self, method, path, query, body):
        m = re.fullmatch(r'/os-quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('cinder', m, method, CINDER_DEFAULT_QUOTAS)
        return super()._block_storage(method, path, query, body)

    # -- image: memberships --------------------------------------------------

    def _image(self, method, path, query, body):
        m = re.fullmatch(r'/v2/images/([^/]+)/members/([^/]+)', path)
        if m and method == 'DELETE':
            image = self.get('images', m.group(1))
            if image is None or m.group(2) not in image.get('members', []):
                return 404, {'message': 'no such member'}
            image['members'].remove(m.group(2))
            return 204, None
        return super()._image(method, path, query, body)

    # -- network: extensions, quotas, port forwardings ---------------------

    def neutron(self, collection, project_id, **obj):
        key = NEUTRON_EXTRA[collection][0]
        return self.add(
            key,
            project_id=project_id,
            tenant_id=project_id,
            name=obj.pop('name', ''),
            **obj,
        )

    def _network(self, method, path, query, body):
        if path == '/v2.0/extensions':
            return 200, {
                'extensions': [
                    {
                        'alias': a,
                        'name': a,
                        'description': '',
                        'links': [],
                        'updated': '2026-01-01T00:00:00Z',
                    }
                    for a in EXTENSIONS
                ]
            }
        if path == '/v2.0/quotas':
            return 200, {
                'quotas': [
                    {
                        'project_id': q['project'],
                        'tenant_id': q['project'],
                        **q['values'],
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'neutron'
                ]
            }
        m = re.fullmatch(r'/v2\.0/quotas/([^/]+)', path)
        if m and method == 'DELETE':
            self._remove('quota_sets', f'neutron/{m.group(1)}')
            return 204, None
        m = re.fullmatch(
            r'/v2\.0/floatingips/([^/]+)/port_forwardings'
            r'(?:/([^/]+))?',
            path,
        )
        if m:
            return self._port_forwardings(method, *m.groups())
        for coll, (key, _ext) in NEUTRON_EXTRA.items():
            m = re.fullmatch(rf'/v2\.0/{re.escape(coll)}(?:/([^/]+))?', path)
            if m:
                return self._neutron_extra(key, method, m.group(1), query)
        return super()._network(method, path, query, body)

    def _neutron_extra(self, key, method, id_, query):
        if id_ is None:
            return 200, {
                key: [
                    o
                    for o in self.all(key)
                    if all(
                        str(o.get(k)) == v
                        for k, v in query.items()
                        if k not in ('fields', 'limit', 'marker')
                    )
                ]
            }
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
        if method == 'DELETE':
            self._check_extra_unused(key, obj)
            self._remove(key, id_)
            return 204, None
        return 405, None

    def _check_extra_unused(self, key, obj):
        """The ...InUse answers of the extensions' plugins."""
        uses = {
            'policies': [
                o
                for coll in ('ports', 'networks', 'floatingips')
                for o in self.all(coll)
                if o.get('qos_policy_id') == obj['id']
            ],
            'subnetpools': [
                s
                for s in self.all('subnets')
                if s.get('subnetpool_id') == obj['id']
            ],
            'address_scopes': [
                p
                for p in self.all('subnetpools')
                if p.get('address_scope_id') == obj['id']
            ],
            'vpnservices': [
                c
                for c in self.all('ipsec_site_connections')
                if c['vpnservice_id'] == obj['id']
            ],
            'ikepolicies': [
                c
                for c in self.all('ipsec_site_connections')
                if c['ikepolicy_id'] == obj['id']
            ],
            'ipsecpolicies': [
                c
                for c in self.all('ipsec_site_connections')
                if c['ipsecpolicy_id'] == obj['id']
            ],
            'endpoint_groups': [
                c
                for c in self.all('ipsec_site_connections')
                if obj['id']
                in (c.get('local_ep_group_id'), c.get('peer_ep_group_id'))
            ],
            'network_segment_ranges': [
                n
                for n in self.all('networks')
                if n.get('segment_range_id') == obj['id']
            ],
        }.get(key)
        if uses:
            raise neutron_error(
                f'{key}InUse',
                f'{obj["id"]} is in use by '
                f'{", ".join(u["id"] for u in uses)}.',
            )
        if key == 'local_ips':
            self._remove('ports', obj['local_port_id'])

    def _port_forwardings(self, method, fip_id, pf_id):
        fip = self.get('floatingips', fip_id)
        if fip is None:
            return 404, {
                'NeutronError': {
                    'type': 'FloatingIPNotFound',
                    'message': 'no floating IP',
                }
            }
        mine = [
            p
            for p in self.all('port_forwardings')
            if p['floatingip_id'] == fip_id
        ]
        if pf_id is None:
            return 200, {'port_forwardings': mine}
        if not self.exists('port_forwardings', pf_id) or method != 'DELETE':
            return 404, {
                'NeutronError': {
                    'type': 'NotFound',
                    'message': 'no forwarding',
                }
            }
        self._remove('port_forwardings', pf_id)
        return 204, None

    def _neutron_delete_floatingips(self, fip):
        # the forwardings of a floating IP go with it
        for pf in self.all('port_forwardings'):
            if pf['floatingip_id'] == fip['id']:
                self._remove('port_forwardings', pf['id'])

    def _neutron_delete_routers(self, router):
        self._check_no_vpn(router)
        super()._neutron_delete_routers(router)

    def _remove_interface(self, router, body):
        self._check_no_vpn(router)
        port = self.get('ports', body['port_id']) or {'fixed_ips': []}
        for group in self.all('endpoint_groups'):
            if {ip['subnet_id'] for ip in port['fixed_ips']} & set(
                group['endpoints']
            ):
                raise neutron_error(
                    'SubnetInUseByEndpointGroup',
                    f'Subnet is used by endpoint group {group["id"]}.',
                )
        return super()._remove_interface(router, body)

    def _update_router(self, router, changes):
        if changes.get('external_gateway_info') == {}:
            self._check_no_vpn(router)
        return super()._update_router(router, changes)

    def _check_no_vpn(self, router):
        for service in self.all('vpnservices'):
            if service['router_id'] == router['id']:
                raise neutron_error(
                    'RouterInUseByVPNService',
                    f'Router {router["id"]} is used by '
                    f'VPNService {service["id"]}',
                )

    # -- load-balancer (Octavia) -----------------------------------------

    def load_balancer(
        self,
        project_id,
        subnet,
        *,
        members=(),
        vip_fip=None,
        pending=0,
        status='ACTIVE',
    ):
        """A load balancer on ``subnet`` with a listener and a pool whose
        members are on ``members``' subnets, and its VIP port, owned by
        Octavia; ``pending`` is how many requests it stays PENDING_UPDATE.
        """
        lb_id = new_id('lb')
        vip = self.add(
            'ports',
            name=f'octavia-lb-{lb_id}',
            network_id=subnet['network_id'],
            project_id=project_id,
            tenant_id=project_id,
            device_owner='Octavia',
            device_id=f'lb-{lb_id}',
            security_groups=[],
            fixed_ips=[{'subnet_id': subnet['id'], 'ip_address': '10.0.0.50'}],
        )
        if vip_fip is not None:
            vip_fip.update(port_id=vip['id'], fixed_ip_address='10.0.0.50')
        pool = self.add(
            'lb_pools',
            project_id=project_id,
            name='pool',
            loadbalancer_id=lb_id,
            members=[
                {
                    'id': new_id('m'),
                    'subnet_id': s['id'],
                    'address': '10.0.0.60',
                    'protocol_port': 80,
                    'project_id': project_id,
                }
                for s in members
            ],
        )
        self.add(
            'lb_listeners',
            project_id=project_id,
            name='listener',
            loadbalancer_id=lb_id,
            protocol='HTTP',
            protocol_port=80,
        )
        return self.add(
            'loadbalancers',
            id=lb_id,
            name='lb',
            project_id=project_id,
            vip_subnet_id=subnet['id'],
            vip_network_id=subnet['network_id'],
            vip_port_id=vip['id'],
            vip_address='10.0.0.50',
            provisioning_status='PENDING_UPDATE' if pending else status,
            operating_status='ONLINE',
            pending_left=pending,
            pools=[{'id': pool['id']}],
            additional_vips=[],
            vip_sg_ids=None,
            listeners=[
                {'id': listener['id']}
                for listener in self.all('lb_listeners')
                if listener['loadbalancer_id'] == lb_id
            ],
            provider='amphora',
            admin_state_up=True,
        )

    def _load_balancer(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': [
                    {
                        'id': 'v2.0',
                        'status': 'CURRENT',
                        'links': [
                            {
                                'rel': 'self',
                                'href': ENDPOINTS_ALL['load-balancer']
                                + '/v2/',
                            }
                        ],
                    }
                ]
            }
        path = re.sub(r'^/v2(\.0)?', '', path)
        if path == '/lbaas/loadbalancers':
            return 200, {
                'loadbalancers': [
                    self._lb_view(lb)
                    for lb in self.all('loadbalancers')
                    if query.get('project_id') in (None, lb['project_id'])
                ]
            }
        m = re.fullmatch(r'/lbaas/loadbalancers/([^/]+)', path)
        if m:
            lb = self._poll_lb(m.group(1))
            if lb is None:
                return 404, {
                    'faultcode': 'Client',
                    'faultstring': f'Load Balancer {m.group(1)} not found.',
                    'debuginfo': None,
                }
            if method == 'GET':
                return 200, {'loadbalancer': self._lb_view(lb)}
            if method == 'DELETE':
                return self._delete_lb(lb, query)
        m = re.fullmatch(r'/lbaas/pools/([^/]+)/members', path)
        if m:
            pool = self.get('lb_pools', m.group(1))
            return 200, {'members': pool['members'] if pool else []}
        if path == '/lbaas/quotas':
            return 200, {
                'quotas': [
                    {
                        'project_id': q['project'],
                        'tenant_id': q['project'],
                        'load_balancer': None,
                        'listener': None,
                        'pool': None,
                        'member': None,
                        'health_monitor': None,
                        'l7policy': None,
                        'l7rule': None,
                        **q['values'],
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'octavia'
                    and query.get('project_id') in (None, q['project'])
                ]
            }
        m = re.fullmatch(r'/lbaas/quotas/([^/]+)', path)
        if m and method == 'DELETE':
            quota = self.get('quota_sets', f'octavia/{m.group(1)}')
            if quota is not None:
                # the row stays, its limits go back to the defaults
                quota['values'] = {}
            return 202, None
        return 404, {'faultcode': 'Client', 'faultstring': 'no route'}

    def _lb_view(self, lb):
        return {k: v for k, v in lb.items() if k != 'pending_left'}

    def _poll_lb(self, lb_id):
        """A GET or DELETE: the PENDING_* state settles after a while."""
        lb = self.get('loadbalancers', lb_id)
        if lb is None:
            return None
        if lb['provisioning_status'] == 'PENDING_UPDATE':
            lb['pending_left'] -= 1
            if lb['pending_left'] < 0:
                lb['provisioning_status'] = 'ACTIVE'
        elif lb['provisioning_status'] == 'PENDING_DELETE':
            lb['pending_left'] -= 1
            if lb.get('fail_delete'):
                lb['provisioning_status'] = 'ERROR'
            elif lb['pending_left'] < 0:
                self._destroy_lb(lb)
                return None
        return lb

    def _delete_lb(self, lb, query):
        if lb['provisioning_status'].startswith('PENDING_'):
            raise octavia_error(
                409,
                f'Invalid state '
                f'{lb["provisioning_status"]} of loadbalancer '
                f'resource {lb["id"]}',
            )
        if lb['listeners'] and query.get('cascade') != 'True':
            raise octavia_error(
                400,
                f'Validation failure: Cannot delete '
                f'Load Balancer {lb["id"]} - it has children',
            )
        lb['provisioning_status'] = 'PENDING_DELETE'
        lb['pending_left'] = self.delete_polls
        return 204, None

    def _destroy_lb(self, lb):
        """The worker's cascade: children, then the VIP port Octavia made
        (Neutron disassociates a floating IP from a port it deletes)."""
        for coll in ('lb_listeners', 'lb_pools'):
            for child in self.all(coll):
                if child['loadbalancer_id'] == lb['id']:
                    self._remove(coll, child['id'])
        vip = self.get('ports', lb['vip_port_id'])
        if vip is not None and vip['device_owner'] == 'Octavia':
            self._neutron_delete_ports(vip)
            self._remove('ports', vip['id'])
        self._remove('loadbalancers', lb['id'])

    # -- object-store (Swift) ----------------------------------------------

    def container(
        self,
        project_id,
        name,
        *,
        objects=0,
        versions=None,
        history=None,
        versioned=False,
    ):
        headers = {}
        if versions:
            headers['X-Versions-Location'] = versions
        if history:
            headers['X-History-Location'] = history
        if versioned:
            headers['X-Versions-Enabled'] = 'True'
        return self.add(
            'containers',
            id=f'AUTH_{project_id}/{name}',
            project_id=project_id,
            name=name,
            headers=headers,
            objects={f'obj-{i:04d}': 1 for i in range(objects)},
            versions={},
        )

    def put_object(self, container, name, versions=0):
        """An object with ``versions`` old versions: kept in the versions
        container (legacy) or in the container's own version list."""
        legacy = container['headers'].get('X-Versions-Location') or container[
            'headers'
        ].get('X-History-Location')
        for v in range(versions):
            if legacy:
                target = self.get(
                    'containers', f'{container["id"].split("/")[0]}/{legacy}'
                )
                target['objects'][f'{len(name):03x}{name}/{v}'] = 1
            else:
                container['versions'].setdefault(name, []).append(f'v{v}')
        container['objects'][name] = 1

    def _object_store(self, method, path, query, body):
        if path == '/info':
            info = {'swift': {'version': '2.38.3'}}
            if self.bulk_delete:
                info['bulk_delete'] = {
                    'max_deletes_per_request': self.bulk_delete,
                    'max_failed_deletes': 1000,
                }
            return 200, info
        m = re.fullmatch(r'/v1/(AUTH_[^/]+)/?([^/]*)/?(.*)', path)
        if not m:
            return 404, None
        account, container, obj = (parse.unquote(p) for p in m.groups())
        if account != f'AUTH_{ADMIN_PROJECT}' and not self.reseller:
            return 403, None
        if not container:
            return self._swift_account(account, method, query)
        found = self.get('containers', f'{account}/{container}')
        if found is None:
            return 404, None
        if obj:
            return self._swift_object(found, obj, method, query)
        return self._swift_container(found, method, query)

    def _swift_account(self, account, method, query):
        if self.flag('bulk-delete') and method in ('DELETE', 'POST'):
            return self._swift_bulk(account)
        names = sorted(
            c['name']
            for c in self.all('containers')
            if c['id'].startswith(account + '/')
        )
        marker = query.get('marker', '')
        return 200, [
            {'name': n, 'count': 0, 'bytes': 0} for n in names if n > marker
        ][: int(query.get('limit', 10000))]

    def _swift_bulk(self, account):
        self.bulk_requests.append(account)
        lines = [
            parse.unquote(x)
            for x in self._request.body.decode().split('\n')
            if x
        ]
        if len(lines) > self.bulk_delete:
            return 413, None
        deleted = not_found = 0
        errors = []
        for line in lines:
            container, _, obj = line.lstrip('/').partition('/')
            found = self.get('containers', f'{account}/{container}')
            if found is None or obj not in found['objects']:
                not_found += 1
                continue
            try:
                self._swift_delete_object(found, obj)
                deleted += 1
            except Conflict as exc:
                errors.append([line, f'{exc.status} Error'])
        return 200, {
            'Number Deleted': deleted,
            'Number Not Found': not_found,
            'Errors': errors,
            'Response Status': '400 Bad Request' if errors else '200 OK',
            'Response Body': '',
        }

    def _swift_container(self, found, method, query):
        headers = found['headers']
        if method == 'HEAD':
            self._request.reply_headers = {
                'X-Container-Object-Count': str(len(found['objects'])),
                **headers,
            }
            return 204, None
        if method == 'POST':
            sent = self._request.headers
            for header, remove in (
                ('X-Versions-Location', 'X-Remove-Versions-Location'),
                ('X-History-Location', 'X-Remove-History-Location'),
            ):
                if sent.get(remove):
                    headers.pop(header, None)
            if sent.get('X-Versions-Enabled', '').lower() == 'false':
                headers.pop('X-Versions-Enabled', None)
            return 204, None
        if method == 'GET' and self.flag('versions'):
            entries = sorted(
                [
                    {'name': o, 'version_id': v, 'is_latest': False}
                    for o, vs in found['versions'].items()
                    for v in vs
                ]
                + [
                    {'name': o, 'version_id': 'latest', 'is_latest': True}
                    for o in found['objects']
                ],
                key=lambda e: (e['name'], e['version_id']),
            )
            after = (query.get('marker', ''), query.get('version_marker', ''))
            return 200, [
                e for e in entries if (e['name'], e['version_id']) > after
            ][:2]
        if method == 'GET':
            marker = query.get('marker', '')
            return 200, [
                {
                    'name': o,
                    'bytes': 1,
                    'hash': 'x',
                    'content_type': 'application/octet-stream',
                    'last_modified': '2026-11-01T00:00:00',
                }
                for o in sorted(found['objects'])
                if o > marker
            ][: int(query.get('limit', 10000))]
        if method == 'DELETE':
            if found['objects']:
                raise swift_error(
                    409,
                    'There was a conflict when trying to '
                    'complete your request.',
                )
            if found['versions'] and any(found['versions'].values()):
                raise swift_error(
                    409, 'Delete all versions before deleting container.'
                )
            self._remove('containers', found['id'])
            return 204, None
        return 405, None

    def _swift_object(self, found, obj, method, query):
        if method == 'HEAD':
            return (200 if obj in found['objects'] else 404), None
        if method != 'DELETE':
            return 405, None
        version = query.get('version-id')
        if version and version != 'latest':
            versions = found['versions'].get(obj, [])
            if version not in versions:
                return 404, None
            versions.remove(version)
            return 204, None
        if obj not in found['objects']:
            return 404, None
        self._swift_delete_object(found, obj)
        return 204, None

    def _swift_delete_object(self, found, obj):
        """versioned_writes: in stack mode the newest old version comes
        back; in history mode the object is copied to the history. An
        object named in the container's ``undeletable`` answers 409."""
        if obj in found.get('undeletable', ()):
            raise swift_error(409, 'Conflict')
        account = found['id'].split('/')[0]
        headers = found['headers']
        stack = headers.get('X-Versions-Location')
        history = headers.get('X-History-Location')
        if history:
            target = self.get('containers', f'{account}/{history}')
            target['objects'][f'{len(obj):03x}{obj}/deleted'] = 1
        del found['objects'][obj]
        if stack:
            target = self.get('containers', f'{account}/{stack}')
            old = sorted(
                o
                for o in target['objects']
                if o.startswith(f'{len(obj):03x}{obj}/')
            )
            if old:
                del target['objects'][old[-1]]
                found['objects'][obj] = 1

    # -- dns (Designate) -----------------------------------------------------

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
                                    'href': ENDPOINTS_ALL['dns'] + '/v2',
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

    # -- key-manager (Barbican): quotas only --------------------------------

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
                                    'href': ENDPOINTS_ALL['key-manager']
                                    + '/v1/',
                                }
                            ],
                        }
                    ]
                }
            }
        if path == '/v1/project-quotas':
            return 200, {
                'project_quotas': [
                    {'project_id': q['project'], 'project_quotas': q['values']}
                    for q in self.all('quota_sets')
                    if q['service'] == 'barbican'
                ],
                'total': 0,
            }
        m = re.fullmatch(r'/v1/project-quotas/([^/]+)', path)
        if m and method == 'DELETE':
            self._remove('quota_sets', f'barbican/{m.group(1)}')
            return 204, None
        return 404, {'code': 404, 'title': 'Not Found'}

    # -- shared-file-system (Manila) ----------------------------------------

    def share(self, project_id, name='share', **extra):
        extra.setdefault('status', 'available')
        for key in (
            'share_network_id',
            'share_group_id',
            'snapshot_id',
            'replication_type',
        ):
            extra.setdefault(key, None)
        return self.add(
            'shares',
            name=name,
            project_id=project_id,
            share_proto='NFS',
            size=1,
            **extra,
        )

    def manila(self, collection, project_id, **obj):
        obj.setdefault('status', 'available')
        return self.add(
            collection,
            project_id=project_id,
            name=obj.pop('name', collection[:-1]),
            **obj,
        )

    def _shared_file_system(self, method, path, query, body):
        if path in ('', '/'):
            return 300, {
                'versions': [
                    {
                        'id': 'v2.0',
                        'status': 'CURRENT',
                        'version': '2.84',
                        'min_version': '2.0',
                        'links': [
                            {
                                'rel': 'self',
                                'href': ENDPOINTS_ALL['shared-file-system']
                                + '/',
                            }
                        ],
                    }
                ]
            }
        m = re.fullmatch(r'/quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('manila', m, method, MANILA_DEFAULT_QUOTAS)
        m = re.fullmatch(r'/([a-z-]+)/detail', path)
        if m and m.group(1) in MANILA:
            key, coll = m.group(1).replace('-', '_'), MANILA[m.group(1)]
            if query.get('all_tenants') != '1' and 'share_id' not in query:
                return 200, {key: []}  # the caller's project only
            return 200, {
                key: [
                    o
                    for o in self.all(coll)
                    if query.get('project_id') in (None, o.get('project_id'))
                    and query.get('share_id') in (None, o.get('share_id'))
                ]
            }
        m = re.fullmatch(r'/([a-z-]+)/([^/]+)', path)
        if m and m.group(1) in MANILA:
            coll = MANILA[m.group(1)]
            obj = self._async_get(coll, m.group(2), 'deleting')
            if obj is None:
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            if method == 'GET':
                return 200, {m.group(1).replace('-', '_')[:-1]: obj}
            if method == 'DELETE':
                self._check_manila_delete(coll, obj)
                if coll == 'share_networks':
                    self._remove(coll, obj['id'])
                    return 202, None
                if obj.get('fail_delete'):
                    obj['status'] = 'error_deleting'
                else:
                    obj['status'] = 'deleting'
                    self._start_delete(coll, obj['id'])
                return 202, None
        return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}

    def _check_manila_delete(self, coll, obj):
        def used_by(other, key):
            return [
                o['id'] for o in self.all(other) if o.get(key) == obj['id']
            ]

        if coll == 'shares':
            if used_by('share_snapshots', 'share_id'):
                raise manila_error(
                    400,
                    'Invalid share: Share still has 1 dependent snapshots.',
                )
            if [
                r
                for r in used_by('share_replicas', 'share_id')
                if self.get('share_replicas', r)['replica_state'] != 'active'
            ]:
                raise manila_error(400, 'Invalid share: Share has replicas.')
        if coll == 'share_snapshots' and used_by('shares', 'snapshot_id'):
            raise manila_error(
                400, 'Invalid snapshot: it has dependent shares.'
            )
        if coll == 'share_groups' and used_by('shares', 'share_group_id'):
            raise manila_error(409, 'Share group has shares.')
        if coll == 'share_networks' and (
            used_by('shares', 'share_network_id')
            or used_by('share_groups', 'share_network_id')
        ):
            raise manila_error(
                409,
                'Can not delete share network: it has shares or share groups.',
            )

    # -- container-infra (Magnum): details, templates, quotas ---------------

    def cluster_template(self, project_id, name='k8s', public=False):
        uuid = new_id('ct')
        return self.add(
            'cluster_templates',
            id=uuid,
            uuid=uuid,
            name=name,
            project_id=project_id,
            public=public,
            coe='kubernetes',
        )

    def _container_infra(self, method, path, query, body):
        if path == '/clusters/detail':
            return 200, {
                'clusters': [
                    {k: v for k, v in c.items() if k != 'id'}
                    for c in map(self._poll_cluster, self.all('clusters'))
                    if c is not None
                ]
            }
        if path == '/clustertemplates/detail':
            return 200, {
                'clustertemplates': [
                    {k: v for k, v in t.items() if k != 'id'}
                    for t in self.all('cluster_templates')
                ]
            }
        m = re.fullmatch(r'/clustertemplates/([^/]+)', path)
        if m and method == 'DELETE':
            if not self.exists('cluster_templates', m.group(1)):
                return 404, {'errors': [{'status': 404, 'title': 'none'}]}
            if any(
                c['cluster_template_id'] == m.group(1)
                for c in self.all('clusters')
            ):
                return 400, {
                    'errors': [
                        {
                            'status': 400,
                            'code': 'client',
                            'title': (
                                f'ClusterTemplate {m.group(1)} is referenced by '
                                f'one or multiple clusters.'
                            ),
                        }
                    ]
                }
            self._remove('cluster_templates', m.group(1))
            return 204, None
        if path == '/quotas':
            return 200, {
                'quotas': [
                    {
                        'project_id': q['project'],
                        'resource': name,
                        'hard_limit': limit,
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'magnum'
                    for name, limit in q['values'].items()
                ]
            }
        m = re.fullmatch(r'/quotas/([^/]+)/([^/]+)', path)
        if m and method == 'DELETE':
            quota = self.get('quota_sets', f'magnum/{m.group(1)}')
            if quota is None or m.group(2) not in quota['values']:
                return 404, {'errors': [{'status': 404, 'title': 'none'}]}
            del quota['values'][m.group(2)]
            if not quota['values']:
                self._remove('quota_sets', quota['id'])
            return 204, None
        return super()._container_infra(method, path, query, body)


# -- what tests build and run -------------------------------------------------


def zero_delays():
    """Retries and polls that never advance the fake clock."""
    return RetryPolicy(base_delay=0, max_delay=0, poll_min=0, poll_max=0)


def cascade_for(cloud, project_id, **options):
    """The cascade of one project, planned: (cascade, targets, plan)."""
    conn = cloud.connection()
    pc = ProjectCascade(
        conn, CascadeOptions(**options), clock=FakeClock(), retry=zero_delays()
    )
    targets = pc.resolve([project_id])
    return pc, targets, pc.plan(targets)


def run_kind(cloud, kind, refs):
    """Plan and run the deletes of ``refs`` of ``kind`` alone."""
    kinds = {kind.name: kind}
    plan = build_plan(
        Inventory(refs),
        kinds,
        [{'id': p, 'name': ''} for p in {r.project_id for r in refs}],
    )
    return Executor(
        cloud.connection(), kinds, clock=FakeClock(), retry=zero_delays()
    ).run(plan)


def all_services_project(cloud, name, external):
    """A project that owns something of every kind the cascade knows, on
    top of the topology of scenarios.full_project. Returns the ids."""
    p = scenarios.full_project(cloud, name, external)
    pid = p['project']['id']
    user = 'user-' + name
    ids = {
        'project': pid,
        'user': user,
        **{k: v['id'] for k, v in p.items() if isinstance(v, dict)},
    }
    cloud.keypair(user, 'laptop')
    # what full_project lacks of the base services' kinds
    ids['server_group'] = cloud.add(
        'server_groups', name='group', project_id=pid, members=[]
    )['id']
    trunk_port = scenarios.port(
        cloud, pid, p['network'], p['subnet'], 'trunk-parent'
    )
    ids['trunk'] = cloud.add(
        'trunks',
        name='trunk',
        project_id=pid,
        tenant_id=pid,
        port_id=trunk_port['id'],
        sub_ports=[],
    )['id']
    ids['rbac'] = cloud.add(
        'rbac_policies',
        project_id=pid,
        tenant_id=pid,
        object_type='network',
        object_id=p['network']['id'],
        action='access_as_shared',
        target_tenant=ADMIN_PROJECT,
    )['id']

    # Heat: a stack that made a network and a container, a nested stack
    stack = cloud.stack('app', pid)
    stack_net = cloud.add(
        'networks',
        name='stack-net',
        project_id=pid,
        tenant_id=pid,
        shared=False,
    )
    cloud.resource(stack, 'net', 'OS::Neutron::Net', stack_net['id'])
    cloud.container(pid, 'stack-cont')
    cloud.resource(stack, 'cont', 'OS::Swift::Container', 'stack-cont')
    nested = cloud.nested(stack, 'group')
    ids.update(
        stack=stack['id'], nested_stack=nested['id'], stack_net=stack_net['id']
    )

    # Octavia: on the project's subnet, a floating IP on its VIP
    fip = scenarios.floating_ip(cloud, pid, external, p['router'])
    lb = cloud.load_balancer(
        pid, p['subnet'], members=[p['subnet']], vip_fip=fip
    )
    ids.update(lb=lb['id'], vip_port=lb['vip_port_id'], vip_fip=fip['id'])

    # Swift: plenty of objects, legacy versions, object versioning
    data = cloud.container(pid, 'data', objects=250)
    cloud.container(pid, 'docs-versions')
    docs = cloud.container(pid, 'docs', versions='docs-versions')
    cloud.put_object(docs, 'readme', versions=2)
    notes = cloud.container(pid, 'notes', versioned=True)
    cloud.put_object(notes, 'todo', versions=3)
    ids.update(data=data['id'], docs=docs['id'], notes=notes['id'])

    # Designate: a zone, and the PTR of a floating IP
    ids['zone'] = cloud.zone(pid, f'{name.lower()}.example.')['id']
    ptr_fip = scenarios.floating_ip(cloud, pid, external)
    cloud.ptr(ptr_fip, f'www.{name.lower()}.example.')
    ids['ptr_fip'] = ptr_fip['id']

    # Manila: network, group, a share with a snapshot and a share made from
    # it, a replicated share
    share_net = cloud.manila('share_networks', pid)
    group = cloud.manila('share_groups', pid, share_network_id=share_net['id'])
    share = cloud.share(
        pid,
        'files',
        share_network_id=share_net['id'],
        share_group_id=group['id'],
    )
    snap = cloud.manila('share_snapshots', pid, share_id=share['id'])
    clone = cloud.share(
        pid, 'clone', snapshot_id=snap['id'], share_network_id=share_net['id']
    )
    replicated = cloud.share(
        pid,
        'replicated',
        replication_type='dr',
        share_network_id=share_net['id'],
    )
    cloud.manila(
        'share_replicas',
        None,
        share_id=replicated['id'],
        replica_state='active',
        id=replicated['id'],
    )
    replica = cloud.manila(
        'share_replicas',
        None,
        share_id=replicated['id'],
        replica_state='in_sync',
    )
    ids.update(
        share_network=share_net['id'],
        share_group=group['id'],
        share=share['id'],
        share_snapshot=snap['id'],
        clone=clone['id'],
        replica=replica['id'],
    )

    # Magnum: a template and a cluster with its own stack
    template = cloud.cluster_template(pid)
    cluster_stack = cloud.stack('k8s-stack', pid)
    cluster = cloud.magnum_cluster('k8s', pid, cluster_stack)
    cluster['cluster_template_id'] = template['id']
    ids.update(
        template=template['id'],
        cluster=cluster['id'],
        cluster_stack=cluster_stack['id'],
    )

    # Neutron's extensions
    net, subnet = p['network'], p['subnet']
    qos = cloud.neutron('qos/policies', pid, name='gold')
    qos_port = scenarios.port(
        cloud, pid, net, subnet, 'qos-port', qos_policy_id=qos['id']
    )
    scope = cloud.neutron('address-scopes', pid, ip_version=4)
    pool = cloud.neutron(
        'subnetpools',
        pid,
        address_scope_id=scope['id'],
        prefixes=['10.8.0.0/16'],
    )
    pool_net, pool_subnet = scenarios.network(
        cloud, pid, 'pool-net', '10.8.1.0/24'
    )
    pool_subnet['subnetpool_id'] = pool['id']
    ike = cloud.neutron('vpn/ikepolicies', pid)
    ipsec = cloud.neutron('vpn/ipsecpolicies', pid)
    vpn = cloud.neutron(
        'vpn/vpnservices', pid, router_id=p['router']['id'], subnet_id=None
    )
    local_group = cloud.neutron(
        'vpn/endpoint-groups', pid, type='subnet', endpoints=[subnet['id']]
    )
    peer_group = cloud.neutron(
        'vpn/endpoint-groups', pid, type='cidr', endpoints=['192.168.0.0/24']
    )
    site = cloud.neutron(
        'vpn/ipsec-site-connections',
        pid,
        vpnservice_id=vpn['id'],
        ikepolicy_id=ike['id'],
        ipsecpolicy_id=ipsec['id'],
        local_ep_group_id=local_group['id'],
        peer_ep_group_id=peer_group['id'],
    )
    pf_fip = scenarios.floating_ip(cloud, pid, external, p['router'])
    pf_port = scenarios.port(cloud, pid, net, subnet, 'pf-port')
    pf = cloud.add(
        'port_forwardings',
        floatingip_id=pf_fip['id'],
        internal_port_id=pf_port['id'],
        internal_port=22,
        external_port=2222,
        protocol='tcp',
        internal_ip_address='10.0.0.10',
    )
    seg = cloud.neutron(
        'network_segment_ranges',
        pid,
        network_type='vxlan',
        minimum=100,
        maximum=200,
        shared=False,
    )
    net['segment_range_id'] = seg['id']
    local_port = scenarios.port(
        cloud, pid, net, subnet, '', device_owner='network:local_ip'
    )
    local_ip = cloud.neutron(
        'local_ips', pid, local_port_id=local_port['id'], network_id=net['id']
    )
    ids.update(
        qos=qos['id'],
        qos_port=qos_port['id'],
        scope=scope['id'],
        pool=pool['id'],
        pool_subnet=pool_subnet['id'],
        pool_net=pool_net['id'],
        ike=ike['id'],
        ipsec=ipsec['id'],
        vpn=vpn['id'],
        local_group=local_group['id'],
        peer_group=peer_group['id'],
        site=site['id'],
        pf_fip=pf_fip['id'],
        pf=pf['id'],
        pf_port=pf_port['id'],
        segment_range=seg['id'],
        local_ip=local_ip['id'],
    )

    # quotas of its own in every service that has them
    for service in (
        'nova',
        'cinder',
        'neutron',
        'octavia',
        'manila',
        'barbican',
        'magnum',
    ):
        cloud.set_quota(
            service,
            pid,
            **{
                'nova': {'instances': 50},
                'cinder': {'volumes': 50},
                'neutron': {'network': 50},
                'octavia': {'load_balancer': 5},
                'manila': {'shares': 5},
                'barbican': {'secrets': 5},
                'magnum': {'Cluster': 3},
            }[service],
        )
    return ids


def share_image_with(cloud, owner_id, member_id, name='golden'):
    """An image of ``owner_id`` shared with ``member_id``."""
    return scenarios.image(
        cloud, owner_id, name, visibility='shared', members=[member_id]
    )
