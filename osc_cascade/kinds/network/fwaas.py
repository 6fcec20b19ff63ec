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

neutron-fwaas makes a project's ``default`` group, with two policies
(``default ingress``, ``default egress``) of two rules each, whenever a
list of groups, policies or rules (or the quota details) names the project
or comes from its token (``_ensure_default_firewall_group``, as an admin).
The kinds list every project's objects and keep the project's: a filtered
list would make a new default group at every discovery round and the
cascade would never end. An admin deletes the default group like any
other, after the project's other groups (Neutron takes its two policies
with it, not their rules); a project's own token may not
(FirewallGroupCannotRemoveDefault), and its lists make it again: without
admin, the default group, its policies and their rules stay, like
Neutron's ``default`` security group.
"""

from __future__ import annotations

from osc_cascade.engine import resource
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

#: neutron-fwaas's names of a project's default group and policies, which
#: it refuses to any other group or policy (a rule's names are not
#: reserved: a default rule is one a default policy holds)
DEFAULT_GROUP = 'default'
DEFAULT_POLICIES = ('default ingress', 'default egress')

#: why a cascade without admin leaves the default firewall objects
DEFAULT_FIREWALL_STAYS = (
    "neutron-fwaas lets admins alone delete a project's default firewall "
    "group (and makes it again for any token of the project that lists "
    'firewall objects): it stays, with its policies and their rules, and '
    "an admin's `openstack orphan list` finds it once the project is gone"
)


def kind_and_project(ref):
    """What ``Inventory.grouped`` groups the default group's others by."""
    return ref.kind, ref.project_id


class _FirewallKind(_ExtensionKind):
    """Listed for every project, then the project's kept (module
    docstring): a list naming the project makes its default group."""

    lists_every_project = True

    def is_default(self, ref) -> bool:
        return False

    def primary_step(self, ref):
        if self.scoped and self.is_default(ref):
            return resource.keep(ref, DEFAULT_FIREWALL_STAYS, blocking=False)
        return super().primary_step(ref)


@register
class FirewallGroup(_FirewallKind):
    """A FWaaS v2 firewall group: its ports are detached first (Neutron
    refuses a group with ports), then it goes before its policies; the
    project's default group after its others."""

    name = 'network.firewall_group'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_groups'
    sdk_delete = 'delete_firewall_group'

    def is_default(self, ref) -> bool:
        return ref.name == DEFAULT_GROUP

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
        if self.is_default(ref):
            # the project's, not every group per default group: a domain's
            # cascade has one default group a project
            for other in inventory.grouped(kind_and_project).get(
                (self.name, ref.project_id), []
            ):
                if not self.is_default(other):
                    yield Edge(delete_of(self.name, other.id), me)

    def apply(self, conn, step):
        if step.action != 'detach_firewall_group_ports':
            return super().apply(conn, step)
        conn.network.update_firewall_group(step.target.id, ports=[])


@register
class FirewallPolicy(_FirewallKind, _UsedElsewhere):
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

    def is_default(self, ref) -> bool:
        return ref.name in DEFAULT_POLICIES

    def relations(self, ref, inventory):
        for rule_id in ref.attrs.get('rule_ids', []):
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(FirewallRule.name, rule_id),
            )


@register
class FirewallRule(_FirewallKind, _UsedElsewhere):
    """A firewall rule, after the policies holding it (another project's
    policy keeps a shared one); a default policy's rule is a default
    one."""

    name = 'network.firewall_rule'
    extension = 'fwaas_v2'
    sdk_list = 'firewall_rules'
    sdk_delete = 'delete_firewall_rule'
    elsewhere_says = 'firewall policy {user} of project {project} holds it'

    def users(self, conn, items):
        # the third of a user: whether it is a default policy
        found: dict[str, list[list]] = {}
        for p in conn.network.firewall_policies():  # every project's
            for rule_id in p.firewall_rules or []:
                found.setdefault(rule_id, []).append(
                    [p.id, p.project_id, p.name in DEFAULT_POLICIES]
                )
        return found

    def attrs_of(self, item, users):
        held = any(u[2] and u[1] == item.project_id for u in users)
        return {'in_default_policy': True} if held else {}

    def is_default(self, ref) -> bool:
        return bool(ref.attrs.get('in_default_policy'))
