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

"""Subnet pools after their subnets, address scopes after their pools.

Subnets go before the subnet pool they came from, pools before their
address scope. Another project's subnet pool in the project's address
scope (through an RBAC share) keeps it: Neutron refuses its delete
(AddressScopeInUse), and deleting the share would cut that pool off.
"""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.common import _UsedElsewhere, by_item
from osc_cascade.kinds.network.core import Subnet
from osc_cascade.kinds.registry import register


@register
class SubnetPool(_UsedElsewhere):
    """A subnet pool, after its subnets; kept while another project's
    subnet came from it (Neutron refuses its delete then: 400,
    SubnetPoolDeleteError)."""

    name = 'network.subnet_pool'
    extension = 'subnet_allocation'
    sdk_list = 'subnet_pools'
    sdk_delete = 'delete_subnet_pool'
    elsewhere_says = 'subnet {user} of project {project} was allocated from it'

    def users(self, conn, items):
        # every project's subnets from each pool (one list a pool)
        subnets = fan_out(
            lambda p: sorted(
                [s.id, s.project_id]
                for s in conn.network.subnets(subnet_pool_id=p.id)
            ),
            items,
            service=self.service_type,
        )
        return {p.id: found for p, found in zip(items, subnets, strict=True)}

    def attrs_of(self, item, users):
        return {
            'address_scope_id': item.address_scope_id,
            'subnet_ids': sorted(
                s for s, project in users if project == item.project_id
            ),
        }

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            yield Edge(delete_of(Subnet.name, subnet_id), me)
        yield Edge(
            me, delete_of(AddressScope.name, ref.attrs.get('address_scope_id'))
        )


@register
class AddressScope(_UsedElsewhere):
    """An address scope, after the project's pools in it; kept while
    another project's pool is in it."""

    name = 'network.address_scope'
    extension = 'address-scope'
    sdk_list = 'address_scopes'
    sdk_delete = 'delete_address_scope'
    elsewhere_says = 'subnet pool {user} of project {project} is in it'

    def users(self, conn, items):
        scopes = {s.id for s in items}
        return by_item(
            (p.address_scope_id, p.id, p.project_id)
            for p in conn.network.subnet_pools()  # every project's
            if p.address_scope_id in scopes
        )
