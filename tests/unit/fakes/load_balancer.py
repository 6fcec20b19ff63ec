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

"""Octavia: load balancers with a listener, a pool and the VIP port
Octavia owns, and quotas. A delete is refused with 409 while a load
balancer is PENDING_*, and with 400 while it has listeners unless it
cascades; the worker's cascade deletes the children and the VIP port."""

from __future__ import annotations

import re

from tests.unit.fakes.common import (
    ENDPOINTS,
    Conflict,
    new_id,
    page,
    versions,
)

#: Octavia's default quotas (unlimited)
OCTAVIA_DEFAULT_QUOTAS = dict.fromkeys(
    (
        'load_balancer',
        'listener',
        'pool',
        'member',
        'health_monitor',
        'l7policy',
        'l7rule',
    ),
    -1,
)


def octavia_error(status, message):
    return Conflict(
        status,
        {'faultcode': 'Client', 'faultstring': message, 'debuginfo': None},
    )


class LoadBalancer:
    #: quota rows a page (Octavia's pagination_max_limit)
    quota_page = 2

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
            return 200, versions('v2.0', ENDPOINTS['load-balancer'] + '/v2/')
        path = re.sub(r'^/v2(\.0)?', '', path)
        if path == '/lbaas/loadbalancers':
            # a listing shows how each delete goes on, as a GET does
            listed = [
                self._poll_lb(lb['id'])
                if lb['provisioning_status'] == 'PENDING_DELETE'
                else lb
                for lb in self.all('loadbalancers')
            ]
            return 200, {
                'loadbalancers': [
                    self._lb_view(lb)
                    for lb in listed
                    if lb is not None
                    and query.get('project_id') in (None, lb['project_id'])
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
        if path == '/lbaas/pools':
            # as Octavia shows a pool: its members by id
            return 200, {
                'pools': [
                    {
                        **pool,
                        'members': [{'id': m['id']} for m in pool['members']],
                        'loadbalancers': [{'id': pool['loadbalancer_id']}],
                    }
                    for pool in self.all('lb_pools')
                    if query.get('project_id') in (None, pool['project_id'])
                ]
            }
        m = re.fullmatch(r'/lbaas/pools/([^/]+)/members', path)
        if m:
            pool = self.get('lb_pools', m.group(1))
            return 200, {'members': pool['members'] if pool else []}
        if path == '/lbaas/quotas/defaults':
            return 200, {
                'quota': {
                    'project_id': 'defaults',
                    'tenant_id': 'defaults',
                    **OCTAVIA_DEFAULT_QUOTAS,
                }
            }
        if path == '/lbaas/quotas':
            # a limit the row does not set is listed as the default's, as
            # Octavia does
            rows, link = page(
                [
                    {
                        'project_id': q['project'],
                        'tenant_id': q['project'],
                        **OCTAVIA_DEFAULT_QUOTAS,
                        **{
                            k: v
                            for k, v in q['values'].items()
                            if v is not None
                        },
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'octavia'
                    and query.get('project_id') in (None, q['project'])
                ],
                query,
                self.quota_page,
                'project_id',
                'http://octavia.test/v2/lbaas/quotas',
            )
            # the next link keeps the paging only, as Octavia's does
            links = [{'rel': 'next', 'href': link}] if link else []
            return 200, {'quotas': rows, 'quotas_links': links}
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
