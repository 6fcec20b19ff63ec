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

"""Port forwardings, before their floating IP and internal port.

Neutron checks no project between a forwarding's floating IP and its
internal port: an admin may forward the project's floating IP to another
project's port (seen on the minicloud). Deleting that forwarding, or the
floating IP, would cut that project's traffic: the forwarding is kept
with its reason, and the floating IP with it (it goes after).
"""

from __future__ import annotations

import dataclasses

from openstack import exceptions as sdk_exc

from osc_cascade.engine import resource
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
        refs = owned(
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
        return self.with_port_owners(conn, refs)

    def with_port_owners(self, conn, refs):
        """Each forwarding with its internal port's project where it is
        not the floating IP's (``port_project``; None: a port this token
        cannot see). One GET a port, made at once: only forwardings'
        ports are asked, none where the projects have none."""
        ports = sorted({r.attrs['internal_port_id'] for r in refs} - {None})

        def owner(port_id):
            try:
                return conn.network.get_port(port_id).project_id
            except sdk_exc.NotFoundException:
                # gone (its forwardings go with it), or not seen by a
                # token without admin: another project's
                return None if self.scoped else ''

        owners = dict(
            zip(
                ports,
                fan_out(owner, ports, service=self.service_type),
                strict=True,
            )
        )
        return [
            dataclasses.replace(
                ref, attrs={**ref.attrs, 'port_project': port_owner}
            )
            if port_owner not in ('', ref.project_id)
            else ref
            for ref in refs
            for port_owner in [owners.get(ref.attrs['internal_port_id'], '')]
        ]

    def primary_step(self, ref):
        if 'port_project' not in ref.attrs:
            return super().primary_step(ref)
        port, other = ref.attrs['internal_port_id'], ref.attrs['port_project']
        if other is None:
            why = f'it forwards to port {port}, which this token cannot see'
        else:
            why = f'it forwards to port {port} of project {other}'
        return resource.keep(
            ref, f"{why}: deleting it would cut that project's traffic"
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
