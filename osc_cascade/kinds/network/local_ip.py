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

"""Local IPs, before their port and network."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.network.common import _ExtensionKind
from osc_cascade.kinds.network.core import Network, Port
from osc_cascade.kinds.registry import register


@register
class LocalIP(_ExtensionKind):
    """A local IP; its port (device owner ``network:local_ip``) goes with
    it, and a direct delete of that port then finds it gone."""

    name = 'network.local_ip'
    extension = 'local_ip'
    sdk_list = 'local_ips'
    sdk_delete = 'delete_local_ip'

    def refs(self, conn, items, project_id):
        return [
            self.ref(i, local_port_id=i.local_port_id, network_id=i.network_id)
            for i in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        yield Edge(me, delete_of(Port.name, ref.attrs.get('local_port_id')))
        yield Edge(me, delete_of(Network.name, ref.attrs.get('network_id')))
