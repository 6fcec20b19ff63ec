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
``X-Auth-Sudo-Project-ID`` header, which Designate allows admins alone
(policy ``use_sudo``; so is ``X-Auth-All-Projects``): through a token
scoped to the project (the cascade without admin) every call acts as the
token's project, with neither (``acting_for``). A zone shared with other
projects (Designate's shared zones) holds their record sets too, which its
delete takes along: it is kept, which keeps the project, unless the command's
``delete_shared`` option asks for shared zones to go as well (then, and
only then, the delete says ``X-Designate-Delete-Shares``, and only if the
zone is shared with no project the plan did not name: its shares are read
again first, one GET). A zone shared after the plan, without the option,
is refused by Designate (``ZoneShared``). A floating IP's
PTR record is unset before the floating IP goes, or it outlives it in the
reverse zone.

A zone the project offered to another project (a transfer request still
``ACTIVE``) has the offer withdrawn before it goes. Accepting one gives
the zone to the other project (central ``create_zone_transfer_accept``
sets its ``tenant_id``), so a zone is read again, as admin across
projects, before each delete (``reread``): one given away meanwhile is
kept, and named with its new owner, not counted as gone.

A zone another project shares with the project (Designate 2.1 and later)
holds the project's record sets (their project is the project, the zone
another's): they are deleted one by one (``RecordSet``), as the project;
nothing else in that zone is. Left behind they would outlive the project
and keep the zone's owner from unsharing the zone (central's
``unshare_zone`` refuses while the target has record sets in it).
"""

from __future__ import annotations

import types

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.errors import Kept
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.core import FloatingIP
from osc_cascade.kinds.paging import pages
from osc_cascade.kinds.registry import register

#: Designate acts on another project's zone, record set, transfer or PTR
#: only on its behalf (this header) or across projects (ALL_PROJECTS);
#: openstacksdk's DNS resources send them for list and find alone
#: (dns/v2/_base.py, 4.16 to 4.22): a get, delete or update goes raw
SUDO = 'X-Auth-Sudo-Project-ID'
#: Designate's managed project (its ``managed_resource_tenant_id`` by
#: default): it owns the reverse zones of floating IPs' PTR records, which
#: hold every project's, and their SOA and NS record sets. No Keystone
#: project has this ID, so the orphan search took them for a deleted
#: project's (the minicloud's real Designate): they are Designate's own
MANAGED_PROJECT = '00000000-0000-0000-0000-000000000000'
#: an admin's call about every project's resources
ALL_PROJECTS = {'X-Auth-All-Projects': 'True'}


def on_behalf_of(project_id: str) -> dict[str, str]:
    return {SUDO: project_id}


class _DesignateKind(ResourceKind):
    """A kind whose every call names the project it acts for: through a
    token scoped to the project (``scoped``, the cascade without cloud
    admin), none. Designate's context middleware makes the sudo header and
    the all-projects one policy checks (``use_sudo``, ``all_tenants``:
    admin alone), refused with 403 otherwise; a token acts for its own
    project without either."""

    service_type = 'dns'

    def acting_for(self, project_id: str | None) -> dict[str, str]:
        """The headers of a call about the project's resources (every
        project's when None): on its behalf as admin, none as the token."""
        if self.scoped:
            return {}
        return ALL_PROJECTS if project_id is None else on_behalf_of(project_id)

    @property
    def across(self) -> dict[str, str]:
        """The headers of a read of one resource whatever its project (one
        given to another project stays visible), as admin; a token sees
        its own project's alone."""
        return {} if self.scoped else ALL_PROJECTS


@register
class Zone(_DesignateKind):
    name = 'dns.zone'
    error_statuses = frozenset({'ERROR'})
    reread = True

    def list(self, conn, project_id):
        zones = [
            z
            for z in conn.dns.zones(headers=self.acting_for(project_id))
            if z.project_id != MANAGED_PROJECT
        ]
        # the shares of each shared zone of the project (one shared with
        # it is another's: owned() drops it), asked at once (kinds.calls)
        shared = [
            z
            for z in zones
            if z.is_shared and project_id in (None, z.project_id)
        ]
        shares = dict(
            zip(
                (z.id for z in shared),
                fan_out(
                    lambda z: self.shared_with(conn, z),
                    shared,
                    service=self.service_type,
                ),
                strict=True,
            )
        )
        # a zone shared with the project is listed too: owned() drops it
        return owned(
            (
                self.ref(z, status=z.status, shared_with=shares.get(z.id, []))
                for z in zones
            ),
            project_id,
        )

    def shared_with(self, conn, zone):
        """The projects the zone is shared with. The zone says whether it
        is shared: the shares are asked only of those that are, one GET a
        shared zone (at N=300 zones: none when no zone is shared)."""
        if not zone.is_shared:
            return []
        return sorted(
            s.target_project_id
            for s in conn.dns.zone_shares(
                zone.id, headers=self.acting_for(zone.project_id)
            )
        )

    def primary_step(self, ref):
        shared_with = ref.attrs.get('shared_with')
        if shared_with and not self.options.get('delete_shared'):
            return resource.keep(
                ref,
                'shared with project(s) ' + ', '.join(shared_with) + ', '
                'whose record sets in it its delete would take along',
                shared=True,
            )
        return super().primary_step(ref)

    def delete(self, conn, ref):
        headers = self.acting_for(ref.project_id)
        if ref.attrs.get('shared_with') and self.options.get('delete_shared'):
            # asked for: Designate refuses a shared zone's delete without
            headers['X-Designate-Delete-Shares'] = 'true'
        # raw: on its owner's behalf or across projects (see SUDO)
        request(conn.dns, 'DELETE', f'/zones/{ref.id}', headers=headers)

    def status(self, conn, ref):
        # a 404 here is the executor's "gone"
        # raw: on its owner's behalf or across projects (see SUDO)
        return request(
            conn.dns,
            'GET',
            f'/zones/{ref.id}',
            headers=self.acting_for(ref.project_id),
        ).json()['status']

    def recheck(self, conn, ref):
        super().recheck(conn, ref)
        planned = ref.attrs.get('shared_with')
        if not (planned and self.options.get('delete_shared')):
            return  # unshared: Designate refuses it if shared since
        # --delete-shared takes along the record sets of the projects the
        # plan named, not of one the zone was shared with since
        now = self.shared_with(
            conn,
            types.SimpleNamespace(
                id=ref.id, project_id=ref.project_id, is_shared=True
            ),
        )
        new = sorted(set(now) - set(planned))
        if new:
            why = (
                'shared since the plan with project(s) '
                + ', '.join(new)
                + ', whose record sets in it its delete would take along'
            )
            self.facts.keep(ref, why)
            raise Kept(why)

    def read(self, conn, ref):
        # across projects: on the project's behalf, a zone given away
        # would answer 404 and pass for gone (through a token scoped to
        # the project, which may not look across, it does: not deleted)
        try:
            # raw: on its owner's behalf or across projects (see SUDO)
            zone = request(
                conn.dns,
                'GET',
                f'/zones/{ref.id}',
                headers=self.across,
            ).json()
        except sdk_exc.NotFoundException:
            return GONE
        return types.SimpleNamespace(
            project_id=zone.get('project_id') or '',
            status=zone.get('status') or '',
        )


@register
class RecordSet(_DesignateKind):
    """The project's record sets in zones of other projects (shared with
    it). Central's ``find_recordsets`` without a zone filters record sets
    by their own project (storage's tenant criteria on the record set's
    ``tenant_id``), whatever zone holds them: one list on the project's
    behalf finds them, and one of its zones tells which are in zones of
    its own (those go with their zone: no step each). The orphan search
    lists every project's (``X-Auth-All-Projects``) and keeps those whose
    project is not their zone's; one in a zone it cannot see is left
    alone. Each delete reads it again first (one GET): one whose zone was
    given to another project since is that project's now, and kept."""

    name = 'dns.recordset'
    error_statuses = frozenset({'ERROR'})
    # a transfer of its zone gives it to the zone's new owner (storage's
    # update_zone sets every record set's tenant_id): read again first
    reread = True

    def list(self, conn, project_id):
        headers = self.acting_for(project_id)
        zone_owner = {
            z['id']: z.get('project_id') or ''
            for z in pages(conn.dns, '/zones', 'zones', headers=headers)
        }
        return owned(
            (
                ResourceRef(
                    kind=self.name,
                    id=r['id'],
                    name=r.get('name') or '',
                    project_id=r.get('project_id') or '',
                    attrs={
                        'zone_id': r['zone_id'],
                        'zone_name': r.get('zone_name') or '',
                        'type': r.get('type') or '',
                    },
                    created_at=r.get('created_at') or '',
                )
                for r in pages(
                    conn.dns, '/recordsets', 'recordsets', headers=headers
                )
                if r.get('project_id')
                and r.get('action') != 'DELETE'
                and elsewhere(r, zone_owner, project_id)
            ),
            project_id,
        )

    def _path(self, ref):
        return f'/zones/{ref.attrs["zone_id"]}/recordsets/{ref.id}'

    def delete(self, conn, ref):
        # raw: on its owner's behalf or across projects (see SUDO)
        request(
            conn.dns,
            'DELETE',
            self._path(ref),
            headers=self.acting_for(ref.project_id),
        )

    def status(self, conn, ref):
        # a 404 here is the executor's "gone"
        # raw: on its owner's behalf or across projects (see SUDO)
        return request(
            conn.dns,
            'GET',
            self._path(ref),
            headers=self.acting_for(ref.project_id),
        ).json()['status']

    def read(self, conn, ref):
        # across projects, as Zone.read: one given away stays visible
        try:
            # raw: on its owner's behalf or across projects (see SUDO)
            found = request(
                conn.dns,
                'GET',
                self._path(ref),
                headers=self.across,
            ).json()
        except sdk_exc.NotFoundException:
            return GONE
        return types.SimpleNamespace(
            project_id=found.get('project_id') or '',
            status=found.get('status') or '',
        )


def elsewhere(recordset, zone_owner, project_id) -> bool:
    """Whether the record set is in a zone of another project than its
    own, which the project sees: shared with it. The project's list names
    all its zones and those shared with it; a record set of the project in
    a zone it does not name is one of Designate's managed records (a
    floating IP's PTR, in the reverse zone of Designate's managed project,
    as the real one lists it): the project cannot delete it (404
    ``zone_not_found``, which would pass for done), and it goes with the
    PTR's unset (``FloatingIPRecord``). The orphan search's names every
    zone: one it does not name is unknown, and left alone, and so is one in
    a zone of Designate's managed project (``MANAGED_PROJECT``)."""
    owner = zone_owner.get(recordset.get('zone_id'))
    if owner is None or owner == MANAGED_PROJECT:
        # Designate's managed records (a PTR, its zone's SOA and NS)
        return False
    return owner != recordset['project_id']


@register
class ZoneTransferRequest(_DesignateKind):
    """A zone the project offered to another project (``zone transfer
    request create``), still ``ACTIVE``: withdrawn (deleted) before the
    zone goes. Designate lists, on a project's behalf, the requests it
    made and those made to it (storage ``_find_zone_transfer_requests``):
    only those it made are its own. A ``COMPLETE`` one is history (the
    zone has moved): left alone."""

    name = 'dns.zone_transfer_request'
    synchronous_delete = True
    path = '/zones/tasks/transfer_requests'

    def list(self, conn, project_id):
        return owned(
            (
                ResourceRef(
                    kind=self.name,
                    id=t.id,
                    name=t.zone_name or '',
                    project_id=t.project_id or '',
                    attrs={'zone_id': t.zone_id},
                    created_at=t.created_at or '',
                )
                for t in conn.dns.zone_transfer_requests(
                    headers=self.acting_for(project_id)
                )
                if t.status == 'ACTIVE'
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Zone.name, ref.attrs.get('zone_id', '')),
        )

    def delete(self, conn, ref):
        # raw: on its owner's behalf or across projects (see SUDO)
        request(
            conn.dns,
            'DELETE',
            f'{self.path}/{ref.id}',
            headers=self.acting_for(ref.project_id),
        )

    def status(self, conn, ref):
        # raw: on its owner's behalf or across projects (see SUDO)
        return request(
            conn.dns,
            'GET',
            f'{self.path}/{ref.id}',
            headers=self.acting_for(ref.project_id),
        ).json()['status']


@register
class FloatingIPRecord(_DesignateKind):
    """A floating IP's PTR record; its delete unsets it."""

    name = 'dns.floating_ip_ptr'
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
            for f in conn.dns.floating_ips(headers=self.acting_for(project_id))
            if f.ptrdname
        ]

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(FloatingIP.name, ref.attrs['floating_ip_id']),
        )

    def across_regions(self, ref):
        # the record is named region:floatingip_id after the floating IP,
        # which may be in another region than Designate's endpoint
        region, _, floating_ip = ref.id.rpartition(':')
        yield Edge(
            resource.delete(ref),
            resource.delete(
                ResourceRef(FloatingIP.name, floating_ip, region=region)
            ),
        )

    def delete(self, conn, ref):
        # raw: on its owner's behalf or across projects (see SUDO)
        request(
            conn.dns,
            'PATCH',
            f'/reverse/floatingips/{ref.id}',
            json={'ptrdname': None},
            headers=self.acting_for(ref.project_id),
        )
