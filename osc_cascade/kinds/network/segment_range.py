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

"""Network segment ranges, after the project's networks."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.network.common import _ExtensionKind
from osc_cascade.kinds.network.core import Network
from osc_cascade.kinds.registry import register


@register
class NetworkSegmentRange(_ExtensionKind):
    """A range of segmentation ids set aside for the project: its networks
    take their segments from it, so they go first."""

    name = 'network.segment_range'
    extension = 'network-segment-range'
    sdk_list = 'network_segment_ranges'
    sdk_delete = 'delete_network_segment_range'

    def relations(self, ref, inventory):
        for net in inventory.where(Network.name):
            if net.project_id == ref.project_id:
                yield Edge(
                    delete_of(Network.name, net.id),
                    delete_of(self.name, ref.id),
                )
