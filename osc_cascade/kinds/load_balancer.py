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

"""Octavia: load balancers, each deleted with everything it holds.

A load balancer goes by Octavia's cascade delete, which takes its listeners,
pools, members, health monitors and L7 policies and, once the provider has
finished, its VIP port. While the load balancer is in a ``PENDING_*`` state
Octavia answers the delete with 409, which the executor retries as "in use"
until the state settles.

Order around it: the load balancer goes before the subnets and networks of
its VIP and of its members (the provider's ports on them block their
delete until it is gone), before a VIP port the user made (Octavia only
detaches those), and before the security groups it puts on its VIP. A
floating IP on the VIP port need not go first: the VIP port (device owner
``Octavia``) is never deleted directly, Octavia deletes it, and Neutron
disassociates a floating IP from a port it deletes; the floating IP is then
deleted like any other, ordered by its router only.
"""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.core import (
    Network,
    Port,
    SecurityGroup,
    Subnet,
)
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


@register
class LoadBalancer(ResourceKind):
    name = 'load_balancer.load_balancer'
    heat_types = ('OS::Octavia::LoadBalancer',)
    service_type = 'load-balancer'
    error_statuses = frozenset({'ERROR'})
    # octavia/db/repositories.py test_and_set_provisioning_status: a delete
    # only from DELETABLE_STATUSES (ACTIVE, ERROR), else 409; PENDING_* is
    # left by the worker that set it, unless the worker died: stuck then
    slow_statuses = frozenset(
        {'PENDING_CREATE', 'PENDING_UPDATE', 'PENDING_DELETE'}
    )
    deletable_when = (
        'Octavia deletes a load balancer only when it is ACTIVE or ERROR, '
        'and only the worker that set PENDING_* clears it'
    )
    stuck_help = (
        'no API resets it: an operator must set its provisioning_status to '
        "ERROR in Octavia's database (--force-stuck cannot)"
    )

    @staticmethod
    def listed(lbaas, project_id):
        """The raw JSON of the project's load balancers (every project's
        for None): an SDK resource per item cost more than the call."""
        return pages(
            lbaas,
            '/lbaas/loadbalancers',
            'loadbalancers',
            {'project_id': project_id},
        )

    def list(self, conn, project_id):
        lbaas = conn.load_balancer
        lbs = list(self.listed(lbaas, project_id))
        # members only order a cascade: not looked up for orphans; one
        # listing per pool whose body does not show it has none (one
        # listing of the pools shows their members' ids), made at once
        # (kinds.calls)
        pools = [
            (lb['id'], pool['id'])
            for lb in (lbs if project_id else [])
            for pool in lb.get('pools') or []
        ]
        if pools:
            shown = {
                pool['id']: pool.get('members')
                for pool in pages(
                    lbaas, '/lbaas/pools', 'pools', {'project_id': project_id}
                )
            }
            pools = [p for p in pools if shown.get(p[1]) != []]
        member_subnets: dict[str, set[str]] = {}
        for (lb_id, _pool), subnets in zip(
            pools,
            fan_out(
                lambda p: {
                    m.get('subnet_id')
                    for m in pages(
                        lbaas, f'/lbaas/pools/{p[1]}/members', 'members'
                    )
                },
                pools,
                service=self.service_type,
            ),
            strict=True,
        ):
            member_subnets.setdefault(lb_id, set()).update(subnets)
        refs = []
        for lb in lbs:
            subnets = (
                {lb.get('vip_subnet_id')}
                | {v.get('subnet_id') for v in lb.get('additional_vips') or []}
                | member_subnets.get(lb['id'], set())
            )
            refs.append(
                item_ref(
                    self.name,
                    lb,
                    status=lb.get('provisioning_status'),
                    updated_at=lb.get('updated_at')
                    if lb.get('provisioning_status') in self.slow_statuses
                    else None,
                    vip_port_id=lb.get('vip_port_id'),
                    vip_network_id=lb.get('vip_network_id'),
                    subnet_ids=sorted(s for s in subnets if s),
                    security_group_ids=sorted(lb.get('vip_sg_ids') or []),
                )
            )
        return owned(refs, project_id)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            yield Edge(me, delete_of(Subnet.name, subnet_id))
        yield Edge(
            me, delete_of(Network.name, ref.attrs.get('vip_network_id', ''))
        )
        # a VIP port Octavia made has no step; one the user gave has
        yield Edge(me, delete_of(Port.name, ref.attrs.get('vip_port_id', '')))
        for sg_id in ref.attrs.get('security_group_ids', []):
            yield Edge(me, delete_of(SecurityGroup.name, sg_id))

    def delete(self, conn, ref):
        conn.load_balancer.delete_load_balancer(
            ref.id, ignore_missing=False, cascade=True
        )

    def status(self, conn, ref):
        status = conn.load_balancer.get_load_balancer(
            ref.id
        ).provisioning_status
        return GONE if status == 'DELETED' else status

    def list_statuses(self, conn, project_id):
        # one listing for the project's load balancers being deleted
        return {
            lb['id']: lb['provisioning_status']
            for lb in self.listed(conn.load_balancer, project_id)
            if lb['provisioning_status'] != 'DELETED'
        }
