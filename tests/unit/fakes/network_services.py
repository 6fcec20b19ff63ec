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

"""More of Neutron's extensions: address groups, FWaaS v2, metering labels,
network logs and BGP VPNs. Their lists are cut at ``neutron_page`` items
and link the next page (``<key>_links``, as Neutron does with a
pagination_max_limit), and a delete in the wrong order is refused as
Neutron refuses it: an address group a rule names (AddressGroupInUse), a
firewall group with ports (FirewallGroupInUse), a policy a group uses, a
rule a policy holds (...InUse), a BGP VPN list naming a project (400). A log goes with its security group or
port, a label's rules and a VPN's associations with them.

FWaaS v2 as neutron-fwaas 25.0.0 has it: a list of firewall groups,
policies or rules, and the quota details, first make the ``default`` group
(two policies of two rules each) of the project the filter names, else of
the token's project, where it has none, whoever asks
(``_ensure_default_firewall_group`` writes as an admin); only an admin
deletes a default group (FirewallGroupCannotRemoveDefault, 409), and
Neutron takes its two policies with it, not their rules."""

from __future__ import annotations

import re

from tests.unit.fakes.common import matches, page
from tests.unit.fakes.network import neutron_error

# URL path -> (JSON key, extension)
MORE = {
    'address-groups': ('address_groups', 'address-group'),
    'fwaas/firewall_groups': ('firewall_groups', 'fwaas_v2'),
    'fwaas/firewall_policies': ('firewall_policies', 'fwaas_v2'),
    'fwaas/firewall_rules': ('firewall_rules', 'fwaas_v2'),
    'metering/metering-labels': ('metering_labels', 'metering'),
    'log/logs': ('logs', 'logging'),
    'bgpvpn/bgpvpns': ('bgpvpns', 'bgpvpn'),
}
#: the fields a list may not filter on (Neutron's filter validation: the
#: plugin's API definition marks them no filter): networking-bgpvpn's
#: (25.0.0) project_id and tenant_id
UNFILTERED = {'bgpvpns': {'project_id', 'tenant_id'}}
#: the BGP VPN extension that adds port associations (404 without it)
PORT_ASSOCIATIONS = 'bgpvpn-routes-control'
ASSOCIATIONS = ('network', 'router', 'port')
_ROUTE = re.compile(
    r'/v2\.0/({})(?:/([^/]+))?(?:/(\w+)_associations)?'.format(
        '|'.join(re.escape(p) for p in MORE)
    )
)


class NetworkServices:
    #: items a page of these lists (Neutron's pagination_max_limit)
    neutron_page = 2
    #: aliases of these extensions the cloud does not load
    without_extensions: frozenset[str] = frozenset()

    def neutron_more(self, collection, project_id, **obj):
        """An object of one of these collections (by URL path)."""
        return self.add(
            MORE[collection][0],
            project_id=project_id,
            tenant_id=project_id,
            name=obj.pop('name', ''),
            **obj,
        )

    def _network(self, method, path, query, body):
        if path == '/v2.0/extensions':
            status, answer = super()._network(method, path, query, body)
            answer['extensions'] = [
                e
                for e in answer['extensions']
                + [
                    {
                        'alias': a,
                        'name': a,
                        'description': '',
                        'links': [],
                        'updated': '2026-01-01T00:00:00Z',
                    }
                    for a in sorted(
                        {ext for _, ext in MORE.values()} | {PORT_ASSOCIATIONS}
                    )
                ]
                if e['alias'] not in self.without_extensions
            ]
            return status, answer
        m = _ROUTE.fullmatch(path)
        if not m or MORE[m.group(1)][1] in self.without_extensions:
            return super()._network(method, path, query, body)
        coll, id_, assoc = m.groups()
        key = MORE[coll][0]
        if id_ is None and key.startswith('firewall_'):
            named = self._request.query.get('project_id')
            self._ensure_default_firewall_group(
                named[0] if named else self._token_project()[0]
            )
        if id_ is None:
            refused = set(query) & UNFILTERED.get(key, set())
            if refused:
                return 400, {
                    'NeutronError': {
                        'type': 'HTTPBadRequest',
                        'message': f'{sorted(refused)} is invalid '
                        f'attribute for filtering',
                        'detail': '',
                    }
                }
            items = [
                o
                for o in self.all(key)
                if matches(o, query, set(query) - {'limit', 'marker'})
            ]
            chunk, link = page(
                items,
                query,
                self.neutron_page,
                url=f'{self.endpoints["network"]}/v2.0/{coll}',
            )
            links = [{'rel': 'next', 'href': link}] if link else []
            return 200, {key: chunk, f'{key}_links': links}
        obj = self.get(key, id_)
        if obj is None:
            return 404, {
                'NeutronError': {'type': 'NotFound', 'message': 'not found'}
            }
        if assoc == 'port' and PORT_ASSOCIATIONS in self.without_extensions:
            # networking-bgpvpn routes no port associations without it
            return 404, {
                'NeutronError': {
                    'type': 'HTTPNotFound',
                    'message': 'The resource could not be found.',
                }
            }
        if assoc:
            found = [
                {'id': f'{id_}-{target}', f'{assoc}_id': target}
                for target in obj.get(f'{assoc}s', [])
            ]
            return 200, {f'{assoc}_associations': found}
        if method == 'GET':
            return 200, {key[:-1]: obj}
        if method == 'PUT' and key == 'firewall_groups':
            obj.update(body['firewall_group'])
            return 200, {'firewall_group': obj}
        if method == 'DELETE':
            self._check_more_unused(key, obj)
            if key == 'firewall_groups' and obj['name'] == 'default':
                return self._delete_default_firewall_group(obj)
            self._remove(key, id_)
            return 204, None
        return 405, None

    def _quota_details(self, project):
        # neutron-fwaas's quota counts its groups with a list naming the
        # project: the list makes its default group
        if 'fwaas_v2' not in self.without_extensions:
            self._ensure_default_firewall_group(project)
        return super()._quota_details(project)

    def _ensure_default_firewall_group(self, project):
        """neutron-fwaas's ``_ensure_default_firewall_group``; what it
        makes is in ``made_on_read`` (the service's, not a caller's)."""
        if not project or any(
            g['name'] == 'default' and g['project_id'] == project
            for g in self.all('firewall_groups')
        ):
            return
        policies, rules_made = {}, []
        for way in ('ingress', 'egress'):
            rules = [
                self.neutron_more(
                    'fwaas/firewall_rules',
                    project,
                    name=f'default {way} ipv{v}',
                )['id']
                for v in (4, 6)
            ]
            rules_made += rules
            policies[way] = self.neutron_more(
                'fwaas/firewall_policies',
                project,
                name=f'default {way}',
                firewall_rules=rules,
            )['id']
        group = self.neutron_more(
            'fwaas/firewall_groups',
            project,
            name='default',
            ports=[],
            ingress_firewall_policy_id=policies['ingress'],
            egress_firewall_policy_id=policies['egress'],
        )
        made = getattr(self, 'made_on_read', set())
        made.add(('firewall_groups', group['id']))
        made.update(('firewall_policies', p) for p in policies.values())
        made.update(('firewall_rules', r) for r in rules_made)
        self.made_on_read = made

    def _delete_default_firewall_group(self, group):
        if not self._token_project()[1]:
            raise neutron_error(
                'FirewallGroupCannotRemoveDefault',
                'Deleting default firewall group not allowed.',
            )
        self._remove('firewall_groups', group['id'])
        for way in ('ingress', 'egress'):
            self._remove(
                'firewall_policies', group[f'{way}_firewall_policy_id']
            )
        return 204, None

    def _check_more_unused(self, key, obj):
        uses = {
            'address_groups': (
                'AddressGroupInUse',
                [
                    r
                    for r in self.all('security_group_rules')
                    if r.get('remote_address_group_id') == obj['id']
                ],
            ),
            'firewall_groups': (
                'FirewallGroupInUse',
                [{'id': p} for p in obj.get('ports') or []],
            ),
            'firewall_policies': (
                'FirewallPolicyInUse',
                [
                    g
                    for g in self.all('firewall_groups')
                    if obj['id']
                    in (
                        g.get('ingress_firewall_policy_id'),
                        g.get('egress_firewall_policy_id'),
                    )
                ],
            ),
            'firewall_rules': (
                'FirewallRuleInUse',
                [
                    p
                    for p in self.all('firewall_policies')
                    if obj['id'] in p.get('firewall_rules', [])
                ],
            ),
        }.get(key)
        if uses and uses[1]:
            raise neutron_error(
                uses[0],
                f'{obj["id"]} is in use by '
                f'{", ".join(u["id"] for u in uses[1])}.',
            )

    def _neutron_delete_security_groups(self, group):
        super()._neutron_delete_security_groups(group)
        self._drop_logs(resource_id=group['id'])

    def _neutron_delete_ports(self, port):
        super()._neutron_delete_ports(port)
        self._drop_logs(target_id=port['id'])

    def _drop_logs(self, **what):
        """Neutron's logging plugin deletes a log with what it logs."""
        for log in self.all('logs'):
            if all(log.get(k) == v for k, v in what.items()):
                self._remove('logs', log['id'])
