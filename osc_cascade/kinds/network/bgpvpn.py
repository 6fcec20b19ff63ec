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

"""BGP VPNs: a VPN's associations go with it, before what they associate."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.common import _ExtensionKind
from osc_cascade.kinds.network.core import Network, Port, Router
from osc_cascade.kinds.registry import register


@register
class BgpVpn(_ExtensionKind):
    """A BGP VPN; its network, router and port associations go with it
    (they may only name the VPN's own project's), before what they
    associate."""

    name = 'network.bgpvpn'
    extension = 'bgpvpn'
    sdk_list = 'bgpvpns'
    sdk_delete = 'delete_bgpvpn'
    # networking-bgpvpn (25.0.0) marks neither project_id nor tenant_id a
    # filter: a list naming one is refused (400). Every VPN the token sees
    # is listed (an admin's: only an admin makes them; they are few) and
    # owned() keeps the project's
    lists_every_project = True

    #: the extension that adds port associations: without it their URL is
    #: not found (404; the minicloud's Dummy driver has none)
    port_associations = 'bgpvpn-routes-control'

    def refs(self, conn, items, project_id):
        net = conn.network
        # the project's alone: the list named no project
        vpns = [v for v in items if project_id in (None, v.project_id)]
        lists = [
            (Network.name, 'network_id', net.bgpvpn_network_associations),
            (Router.name, 'router_id', net.bgpvpn_router_associations),
        ]
        if self.port_associations in self.neutron_extensions(conn):
            lists.append((Port.name, 'port_id', net.bgpvpn_port_associations))

        def associated(v):
            return sorted(
                [kind, getattr(a, field)]
                for kind, field, found in lists
                for a in found(v.id)
            )

        return [
            self.ref(v, associated=found)
            for v, found in zip(
                vpns,
                fan_out(associated, vpns, service=self.service_type),
                strict=True,
            )
        ]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('associated', []):
            yield Edge(delete_of(self.name, ref.id), delete_of(kind, id_))
