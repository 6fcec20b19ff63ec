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

"""Port forwardings, before their floating IP and internal port."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of, owned
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.common import (
    _ExtensionKind,
    neutron_items,
    neutron_project,
)
from osc_cascade.kinds.network.core import FloatingIP, Port
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


@register
class PortForwarding(_ExtensionKind):
    """A floating IP's port forwarding (owned by the floating IP's
    project, which the API does not repeat on it)."""

    name = 'network.port_forwarding'
    extension = 'floating-ip-port-forwarding'
    #: loaded with it since Stein: a floating IP's body shows its
    #: forwardings (``port_forwardings``)
    exposed = 'expose-port-forwarding-in-fip'

    def list(self, conn, project_id):
        if self.extension not in self.neutron_extensions(conn):
            return []
        fips = list(
            neutron_items(conn, '/floatingips', 'floatingips', project_id)
        )
        shown = [self.shown(conn, fip) for fip in fips]
        # one listing per floating IP whose body does not show them
        # (4,000 requests at N=100,000 without), made at once (kinds.calls)
        asked = iter(
            fan_out(
                lambda fip: list(
                    pages(
                        conn.network,
                        f'/floatingips/{fip["id"]}/port_forwardings',
                        'port_forwardings',
                    )
                ),
                [fip for fip, found in zip(fips, shown) if found is None],
                service=self.service_type,
            )
        )
        return owned(
            (
                item_ref(
                    self.name,
                    pf,
                    owner=neutron_project(fip),
                    floating_ip_id=fip['id'],
                    internal_port_id=pf.get('internal_port_id'),
                )
                for fip, found in zip(fips, shown, strict=True)
                for pf in (next(asked) if found is None else found)
            ),
            project_id,
        )

    def shown(self, conn, fip) -> list | None:
        """The forwardings the floating IP's body shows, or None where it
        may not show them all: without the extension that shows them, or
        an older Neutron's that leaves out their ids."""
        found = fip.get('port_forwardings')
        if self.exposed not in self.neutron_extensions(conn):
            return None
        if not isinstance(found, list) or not all(
            pf.get('id') and pf.get('internal_port_id') for pf in found
        ):
            return None
        return found

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        yield Edge(me, delete_of(FloatingIP.name, ref.attrs['floating_ip_id']))
        yield Edge(me, delete_of(Port.name, ref.attrs.get('internal_port_id')))

    def delete(self, conn, ref):
        conn.network.delete_port_forwarding(
            ref.id, ref.attrs['floating_ip_id'], ignore_missing=False
        )
