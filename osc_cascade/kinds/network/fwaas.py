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

"""FWaaS v2: firewall groups, policies and rules.

Neutron refuses a firewall group that still has ports
(FirewallGroupInUse), a policy that a group uses and a rule that a policy
holds (...InUse): those go first.
"""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import Step
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.network.common import (
    _ExtensionKind,
    _UsedElsewhere,
    by_item,
)
from osc_cascade.kinds.network.core import (
    Port,
    Router,
    router_interface_steps,
)
from osc_cascade.kinds.registry import register


@register
class FirewallGroup(_ExtensionKind):
    """A FWaaS v2 firewall group: its ports are detached first (Neutron
    refuses a group with ports), then it goes before its policies."""

    name = 'network.firewall_group'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_groups'
    sdk_delete = 'delete_firewall_group'

    def refs(self, conn, items, project_id):
        return [
            self.ref(
                g,
                ports=sorted(g.ports or []),
                policy_ids=sorted(
                    {
                        p
                        for p in (
                            g.ingress_firewall_policy_id,
                            g.egress_firewall_policy_id,
                        )
                        if p
                    }
                ),
            )
            for g in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        if ref.attrs.get('ports'):
            detach = Step('detach_firewall_group_ports', ref)
            yield Edge(detach, me)
            for port_id in ref.attrs['ports']:
                yield Edge(detach, delete_of(Port.name, port_id))
                # a router's port: detached before the interface goes
                port = inventory.get(Port.name, port_id)
                router = port and inventory.get(
                    Router.name, port.attrs.get('device_id')
                )
                for iface, step in (
                    router_interface_steps(router, inventory) if router else ()
                ):
                    if iface.id == port_id:
                        yield Edge(detach, step)
        for policy_id in ref.attrs.get('policy_ids', []):
            yield Edge(me, delete_of(FirewallPolicy.name, policy_id))

    def apply(self, conn, step):
        if step.action != 'detach_firewall_group_ports':
            return super().apply(conn, step)
        conn.network.update_firewall_group(step.target.id, ports=[])


@register
class FirewallPolicy(_UsedElsewhere):
    """A firewall policy, after the groups that use it (another project's
    group keeps a shared one) and before its rules."""

    name = 'network.firewall_policy'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_policies'
    sdk_delete = 'delete_firewall_policy'
    elsewhere_says = 'firewall group {user} of project {project} uses it'

    def users(self, conn, items):
        return by_item(
            (policy, g.id, g.project_id)
            for g in conn.network.firewall_groups()  # every project's
            for policy in {
                g.ingress_firewall_policy_id,
                g.egress_firewall_policy_id,
            }
        )

    def attrs_of(self, item, users):
        return {'rule_ids': sorted(item.firewall_rules or [])}

    def relations(self, ref, inventory):
        for rule_id in ref.attrs.get('rule_ids', []):
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(FirewallRule.name, rule_id),
            )


@register
class FirewallRule(_UsedElsewhere):
    """A firewall rule, after the policies holding it (another project's
    policy keeps a shared one)."""

    name = 'network.firewall_rule'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_rules'
    sdk_delete = 'delete_firewall_rule'
    elsewhere_says = 'firewall policy {user} of project {project} holds it'

    def users(self, conn, items):
        return by_item(
            (rule_id, p.id, p.project_id)
            for p in conn.network.firewall_policies()  # every project's
            for rule_id in p.firewall_rules or []
        )
