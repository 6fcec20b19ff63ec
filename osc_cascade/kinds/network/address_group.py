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

"""Address groups, after the security groups whose rules name them.

Neutron refuses an address group that a security group rule names
(AddressGroupInUse, whoever's the rule): those groups go first.
"""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.common import (
    _UsedElsewhere,
    may_have_security_groups,
)
from osc_cascade.kinds.network.core import SecurityGroup
from osc_cascade.kinds.registry import register


@register
class AddressGroup(_UsedElsewhere):
    name = 'network.address_group'
    extension = 'address-group'
    sdk_list = 'address_groups'
    sdk_delete = 'delete_address_group'
    elsewhere_says = (
        'a rule of security group {user} of project {project} names it'
    )

    def users(self, conn, items):
        # the rules naming each group, every project's (one filtered list
        # per group: address groups are few). A project's own token sees
        # its own rules alone, and a list of rules would make its default
        # group where it has none (see may_have_security_groups)
        if self.scoped and not may_have_security_groups(
            conn, items[0].project_id
        ):
            return {}
        naming = fan_out(
            lambda g: [
                [r.security_group_id, r.project_id]
                for r in conn.network.security_group_rules(
                    remote_address_group_id=g.id
                )
            ],
            items,
            service=self.service_type,
        )
        return {g.id: rules for g, rules in zip(items, naming, strict=True)}

    def attrs_of(self, item, users):
        return {'named_by': sorted(users)}

    def relations(self, ref, inventory):
        for group_id, _project in ref.attrs.get('named_by', []):
            yield Edge(
                delete_of(SecurityGroup.name, group_id),
                delete_of(self.name, ref.id),
            )
