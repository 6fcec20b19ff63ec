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

"""Designate: zones (their record sets go with them) and the PTR records of
the project's floating IPs.

Designate scopes every call to the caller's project unless told otherwise:
the admin lists, gets and deletes a project's zones on its behalf with the
``X-Auth-Sudo-Project-ID`` header. A zone shared with other projects is
deleted with its shares. A floating IP's PTR record is unset before the
floating IP goes, or it outlives it in the reverse zone.
"""

from __future__ import annotations

from osc_cascade.api.http import request
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.network import FloatingIP
from osc_cascade.kinds.registry import register

SUDO = 'X-Auth-Sudo-Project-ID'


def on_behalf_of(project_id: str) -> dict[str, str]:
    return {SUDO: project_id}


@register
class Zone(ResourceKind):
    name = 'dns.zone'
    service_type = 'dns'
    error_statuses = frozenset({'ERROR'})

    def list(self, conn, project_id):
        query = (
            {'project_id': project_id}
            if project_id
            else {'all_projects': True}
        )
        # a zone shared with the project is listed too: owned() drops it
        return owned(
            (self.ref(z, status=z.status) for z in conn.dns.zones(**query)),
            project_id,
        )

    def delete(self, conn, ref):
        request(
            conn.dns,
            'DELETE',
            f'/zones/{ref.id}',
            headers={
                **on_behalf_of(ref.project_id),
                'X-Designate-Delete-Shares': 'true',
            },
        )

    def status(self, conn, ref):
        # a 404 here is the executor's "gone"
        return request(
            conn.dns,
            'GET',
            f'/zones/{ref.id}',
            headers=on_behalf_of(ref.project_id),
        ).json()['status']


@register
class FloatingIPRecord(ResourceKind):
    """A floating IP's PTR record; its delete unsets it."""

    name = 'dns.floating_ip_ptr'
    service_type = 'dns'
    synchronous_delete = True

    def list(self, conn, project_id):
        if project_id is None:
            return []  # Designate shows them per project only
        return [
            ResourceRef(
                kind=self.name,
                id=f.id,
                name=f.ptrdname,
                project_id=project_id,
                attrs={'floating_ip_id': f.id.split(':')[-1]},
            )
            for f in conn.dns.floating_ips(project_id=project_id)
            if f.ptrdname
        ]

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(FloatingIP.name, ref.attrs['floating_ip_id']),
        )

    def delete(self, conn, ref):
        request(
            conn.dns,
            'PATCH',
            f'/reverse/floatingips/{ref.id}',
            json={'ptrdname': None},
            headers=on_behalf_of(ref.project_id),
        )
