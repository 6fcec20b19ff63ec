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

"""Neutron's extensions: VPNaaS, QoS, subnet pools, address scopes, port
forwardings, network segment ranges and local IPs, and the list of the
extensions loaded. An object still in use is refused with Neutron's
``...InUse`` 409 (and the share of a QoS policy its target uses), and
so is a change of a router a VPN service needs; a list filtered on
``qos_policy_id`` with 400."""

from __future__ import annotations

import re

from tests.unit.fakes.network import neutron_error

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
EXTRA_KEYS = {key for key, _ext in NEUTRON_EXTRA.values()}
#: Neutron's port forwarding plugin loads both of these: the second shows
#: a floating IP's forwardings in its body (``port_forwardings``)
EXPOSED_FORWARDINGS = 'expose-port-forwarding-in-fip'
EXTENSIONS = sorted(
    {ext for _, ext in NEUTRON_EXTRA.values()}
    | {'floating-ip-port-forwarding', EXPOSED_FORWARDINGS}
)
#: the fields of each forwarding a floating IP's body shows (Neutron 29's
#: pf_plugin._extend_floatingip_dict)
EXPOSED_FIELDS = (
    'id',
    'internal_ip_address',
    'protocol',
    'internal_port',
    'external_port',
    'internal_port_id',
)


#: the in-use answers that are no 409 (seen on the minicloud, Neutron 29 and
#: neutron-vpnaas 29): a pool with subnets (db_base_plugin_v2's
#: SubnetPoolDeleteError) and an endpoint group that a connection uses
#: (EndpointGroupInUse) are bad requests, which the run does not retry
REFUSED_AS = {
    'subnetpools': ('SubnetPoolDeleteError', 400),
    'endpoint_groups': ('EndpointGroupInUse', 400),
}


class NetworkExtensions:
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
                return self._neutron_collection(key, method, m.group(1), query)
        return super()._network(method, path, query, body)

    def _neutron_collection(
        self, key, method, id_, query, action=None, body=None
    ):
        if id_ is None and method == 'GET' and 'qos_policy_id' in query:
            # the QoS extension marks its qos_policy_id no filter
            return 400, {
                'NeutronError': {
                    'type': 'HTTPBadRequest',
                    'message': "['qos_policy_id'] is invalid attribute "
                    'for filtering',
                    'detail': '',
                }
            }
        status, answer = super()._neutron_collection(
            key, method, id_, query, action, body
        )
        if (
            key == 'floatingips'
            and method == 'GET'
            and status == 200
            and EXPOSED_FORWARDINGS in EXTENSIONS
        ):
            if id_ is None:
                answer = {key: [self._exposed(f) for f in answer[key]]}
            else:
                answer = {'floatingip': self._exposed(answer['floatingip'])}
        return status, answer

    def _exposed(self, fip):
        """A floating IP as Neutron shows it with its forwardings."""
        return {
            **fip,
            'port_forwardings': [
                {k: p[k] for k in EXPOSED_FIELDS if k in p}
                for p in self.all('port_forwardings')
                if p['floatingip_id'] == fip['id']
            ],
        }

    def _neutron_delete(self, key, obj):
        if key in EXTRA_KEYS:
            self._check_extra_unused(key, obj)
        if key == 'rbac_policies' and obj.get('object_type') == 'qos_policy':
            self._check_share_unused(obj)
        super()._neutron_delete(key, obj)

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
            kind, status = REFUSED_AS.get(key, (f'{key}InUse', 409))
            raise neutron_error(
                kind,
                f'{obj["id"]} is in use by '
                f'{", ".join(u["id"] for u in uses)}.',
                status,
            )
        if key == 'local_ips':
            self._remove('ports', obj['local_port_id'])

    def _check_share_unused(self, share):
        """Neutron refuses to end a share of a QoS policy that the
        target project uses (RbacPolicyInUse)."""
        for coll in ('ports', 'networks', 'floatingips'):
            for o in self.all(coll):
                if o.get('qos_policy_id') == share['object_id'] and (
                    share['target_tenant'] in ('*', o.get('project_id'))
                ):
                    raise neutron_error(
                        'RbacPolicyInUse',
                        f'RBAC policy on object {share["object_id"]} '
                        f'cannot be removed because other objects depend '
                        f'on it.',
                    )

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
