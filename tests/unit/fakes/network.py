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

"""Neutron's core: networks, subnets, ports, routers, floating IPs, trunks,
security groups and RBAC policies. A delete in the wrong order is refused
the way Neutron refuses it (409 ``SubnetInUse``, ``RouterInUse``, ...), so a
test proves an order by running it."""

from __future__ import annotations

import re

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    Conflict,
    matches,
    page,
    paged_filters,
    versions,
)

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


def neutron_error(kind: str, message: str, status: int = 409) -> Conflict:
    return Conflict(
        status,
        {'NeutronError': {'type': kind, 'message': message, 'detail': ''}},
    )


class Network:
    def _network(self, method, path, query, body):
        if path in ('', '/'):
            return 200, versions('v2.0', self.endpoints['network'] + '/v2.0/')
        m = re.fullmatch(r'/v2\.0/quotas/([^/]+)/details', path)
        if m and method == 'GET':
            return self._quota_details(m.group(1))
        m = re.fullmatch(r'/v2\.0/([a-z-]+)(?:/([^/]+))?(?:/([a-z_]+))?', path)
        if not m or m.group(1) not in NEUTRON:
            return 404, {
                'NeutronError': {
                    'type': 'HTTPNotFound',
                    'message': 'no route ' + path,
                }
            }
        coll, id_, action = m.groups()
        if method == 'GET' and id_ is None and coll.startswith('security-'):
            self._ensure_default_security_group(query)
        if method == 'GET' and coll == 'ports' and id_ and not action:
            if not self._sees_port(self.get('ports', id_)):
                return 404, {
                    'NeutronError': {'type': 'PortNotFound', 'message': id_}
                }
        return self._neutron_collection(
            NEUTRON[coll], method, id_, query, action, body
        )

    def _token_project(self):
        """The project of the request's token, and whether it is an
        admin's (the base fake's tokens are the admin's)."""
        caller = getattr(self, '_caller', lambda: None)()
        if caller is None:
            return ADMIN_PROJECT, True
        return caller.get('project_id'), 'admin' in caller.get('roles', ())

    def _sees_port(self, port):
        """Neutron's ``get_port`` policy: an admin, a reader of the port's
        project or of its network's project sees it; to others it is not
        found."""
        token_project, admin = self._token_project()
        if admin or port is None:
            return True
        network = self.get('networks', port.get('network_id')) or {}
        return token_project in (
            port.get('project_id'),
            network.get('project_id'),
        )

    def _ensure_default_security_group(self, query):
        """Neutron's ``get_security_groups`` and ``get_security_group_rules``
        first make the ``default`` group of the project the filter names
        (its first ``project_id``, else ``tenant_id``), else of the token's
        project, where it has none: ``_ensure_default_security_group``,
        which the policy ``create_default_security_group`` lets an admin
        do for any project, a reader of the project for its own."""
        token_project, admin = self._token_project()
        named = self._request.query.get(
            'project_id'
        ) or self._request.query.get('tenant_id')
        project = named[0] if named else token_project
        if not project or not (admin or project == token_project):
            return
        if any(
            g['name'] == 'default' and g['project_id'] == project
            for g in self.all('security_groups')
        ):
            return
        self.add(
            'security_groups',
            name='default',
            project_id=project,
            tenant_id=project,
            security_group_rules=[],
        )

    def _quota_details(self, project):
        """``GET /quotas/{project}/details``: what the project uses of
        each resource, counted in the database (no default group made);
        the project's own token or an admin's."""
        token_project, admin = self._token_project()
        if not admin and project != token_project:
            return 403, {'NeutronError': {'type': 'HTTPForbidden'}}
        used = {
            singular: sum(
                o.get('project_id') == project for o in self.all(key)
            )
            for singular, key in (
                ('network', 'networks'),
                ('subnet', 'subnets'),
                ('port', 'ports'),
                ('router', 'routers'),
                ('floatingip', 'floatingips'),
                ('security_group', 'security_groups'),
                ('security_group_rule', 'security_group_rules'),
            )
        }
        return 200, {
            'quota': {
                k: {'limit': -1, 'used': n, 'reserved': 0}
                for k, n in used.items()
            }
        }

    #: Neutron's ``pagination_max_limit`` (None: -1, no limit of its own)
    neutron_max_limit: int | None = None

    def _neutron_page(self, key, items, query):
        """A list as Neutron's pagination helper answers it: whole unless
        the client asks a ``limit`` or the server has a
        ``pagination_max_limit``; else a page after ``marker`` (sorted by
        ID) with the next one in ``<key>_links``."""
        if not query.get('limit') and self.neutron_max_limit is None:
            return 200, {key: items}
        size = self.neutron_max_limit or int(query['limit'])
        path = key.replace('_', '-')
        chunk, link = page(
            items, query, size, url=f'{self.endpoints["network"]}/v2.0/{path}'
        )
        if link:  # the request's filters kept, as Neutron's links keep them
            link += paged_filters(getattr(self._request, 'query', query))
        links = [{'rel': 'next', 'href': link}] if link else []
        return 200, {key: chunk, f'{key}_links': links}

    def _neutron_collection(
        self, key, method, id_, query, action=None, body=None
    ):
        """A collection's list, or a GET, DELETE or (of a router) PUT of
        one of its objects."""
        if id_ is None:
            filters = set(query) - {'fields', 'limit', 'marker'}
            # a filter given several times is any of its values, as
            # Neutron's (``?network_id=a&network_id=b``)
            several = {
                k: v
                for k, v in getattr(self._request, 'query', {}).items()
                if k in filters and len(v) > 1
            }
            items = [
                o
                for o in self.all(key)
                if matches(o, query, filters - set(several))
                and all(str(o.get(k)) in v for k, v in several.items())
            ]
            return self._neutron_page(key, items, query)
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
        if method == 'PUT' and key == 'routers':
            if action == 'remove_router_interface':
                return self._remove_interface(obj, body)
            return self._update_router(obj, body['router'])
        if method == 'DELETE':
            self._neutron_delete(key, obj)
            self._remove(key, id_)
            return 204, None
        return 405, None

    def _neutron_delete(self, key, obj):
        """What Neutron checks, and deletes along, when ``obj`` goes."""
        getattr(self, f'_neutron_delete_{key}', lambda o: None)(obj)

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
