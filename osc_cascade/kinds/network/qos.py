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

"""QoS policies, after the ports, networks and floating IPs using them."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.network.common import _ExtensionKind, neutron_items
from osc_cascade.kinds.network.core import FloatingIP, Network, Port
from osc_cascade.kinds.registry import register


@register
class QoSPolicy(_ExtensionKind):
    name = 'network.qos_policy'
    extension = 'qos'
    sdk_list = 'qos_policies'
    sdk_delete = 'delete_qos_policy'

    def refs(self, conn, items, project_id):
        policies = list(items)
        if not policies or project_id is None:
            return [self.ref(p) for p in policies]
        # who uses them: the project's ports, networks and floating IPs
        # (another project's use makes the delete fail, as it must)
        users: dict[str, list[list[str]]] = {}
        for kind, path, key in (
            (Port.name, '/ports', 'ports'),
            (Network.name, '/networks', 'networks'),
            (FloatingIP.name, '/floatingips', 'floatingips'),
        ):
            for item in neutron_items(conn, path, key, project_id):
                if item.get('qos_policy_id'):
                    users.setdefault(item['qos_policy_id'], []).append(
                        [kind, item['id']]
                    )
        return [
            self.ref(p, used_by=sorted(users.get(p.id, []))) for p in policies
        ]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('used_by', []):
            yield Edge(delete_of(kind, id_), delete_of(self.name, ref.id))
