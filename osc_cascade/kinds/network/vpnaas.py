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

"""VPNaaS: site connections, VPN services, endpoint groups, policies.

IPsec site connections, VPN services, endpoint groups, and IKE and IPsec
policies.

VPN objects go from the site connections inwards (connections, then the
services, endpoint groups and policies they use), and a VPN service before
its router's interfaces, gateway and the router (vpnaas refuses them while
it needs them).
"""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.network.common import _ExtensionKind
from osc_cascade.kinds.network.core import (
    Port,
    Router,
    Subnet,
    clear_gateway_step,
    router_interface_steps,
)
from osc_cascade.kinds.registry import register


def interfaces_on(subnet_id, inventory):
    """The break actions that remove router interfaces on a subnet."""
    for port in inventory.where(Port.name):
        router = inventory.get(Router.name, port.attrs.get('device_id'))
        if router is not None and subnet_id in port.attrs.get(
            'subnet_ids', []
        ):
            for iface, step in router_interface_steps(router, inventory):
                if iface.id == port.id:
                    yield step


@register
class VPNSiteConnection(_ExtensionKind):
    name = 'network.vpn_ipsec_site_connection'
    extension = 'vpnaas'
    sdk_list = 'vpn_ipsec_site_connections'
    sdk_delete = 'delete_vpn_ipsec_site_connection'

    def refs(self, conn, items, project_id):
        return [
            self.ref(
                c,
                uses=sorted(
                    [kind, id_]
                    for kind, id_ in (
                        (VPNService.name, c.vpnservice_id),
                        (VPNIKEPolicy.name, c.ikepolicy_id),
                        (VPNIPsecPolicy.name, c.ipsecpolicy_id),
                        (VPNEndpointGroup.name, c.local_ep_group_id),
                        (VPNEndpointGroup.name, c.peer_ep_group_id),
                    )
                    if id_
                ),
            )
            for c in items
        ]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('uses', []):
            yield Edge(delete_of(self.name, ref.id), delete_of(kind, id_))


@register
class VPNService(_ExtensionKind):
    name = 'network.vpn_service'
    extension = 'vpnaas'
    sdk_list = 'vpn_services'
    sdk_delete = 'delete_vpn_service'

    def refs(self, conn, items, project_id):
        return [
            self.ref(v, router_id=v.router_id, subnet_id=v.subnet_id)
            for v in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        router = inventory.get(Router.name, ref.attrs.get('router_id'))
        if router is not None:
            for _port, step in router_interface_steps(router, inventory):
                yield Edge(me, step)
            if router.attrs.get('gateway_network_id'):
                yield Edge(me, clear_gateway_step(router))
            yield Edge(me, delete_of(Router.name, router.id))
        yield Edge(me, delete_of(Subnet.name, ref.attrs.get('subnet_id')))


@register
class VPNEndpointGroup(_ExtensionKind):
    name = 'network.vpn_endpoint_group'
    extension = 'vpnaas'
    sdk_list = 'vpn_endpoint_groups'
    sdk_delete = 'delete_vpn_endpoint_group'

    def refs(self, conn, items, project_id):
        return [
            self.ref(
                g,
                subnet_ids=sorted(g.endpoints or [])
                if g.type == 'subnet'
                else [],
            )
            for g in items
        ]

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for subnet_id in ref.attrs.get('subnet_ids', []):
            for step in interfaces_on(subnet_id, inventory):
                yield Edge(me, step)
            yield Edge(me, delete_of(Subnet.name, subnet_id))


@register
class VPNIKEPolicy(_ExtensionKind):
    name = 'network.vpn_ike_policy'
    extension = 'vpnaas'
    sdk_list = 'vpn_ike_policies'
    sdk_delete = 'delete_vpn_ike_policy'


@register
class VPNIPsecPolicy(_ExtensionKind):
    name = 'network.vpn_ipsec_policy'
    extension = 'vpnaas'
    sdk_list = 'vpn_ipsec_policies'
    sdk_delete = 'delete_vpn_ipsec_policy'
