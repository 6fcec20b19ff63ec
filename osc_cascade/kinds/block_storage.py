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

"""Cinder: volumes, snapshots and backups, and the project's access to
private volume types (removed; the type stays).

A volume attached to another project's server is kept, which keeps the
project (its delete would force-detach the disk from that guest behind
Nova's back); only an attachment to a server that no longer exists at all
is stale, and is force-detached before the delete.

A volume the project offered to another project (a pending transfer: the
volume is ``awaiting-transfer`` and Cinder refuses its delete) has the
offer withdrawn first (``VolumeTransfer``). Volumes and snapshots are read
again before each delete (``reread``): a transfer accepted meanwhile makes
them another project's (cinder.db transfer_accept moves the volume and
its snapshots), and they are kept then, not deleted by ID.
"""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc
from openstack.block_storage.v3 import backup as sdk_backup
from openstack.block_storage.v3 import snapshot as sdk_snapshot
from openstack.block_storage.v3 import volume as sdk_volume

from osc_cascade.api import direct
from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.errors import Kept
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import Step
from osc_cascade.kinds.access import AccessKind
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.cinder_attachments import (
    attachment_records,
    detach_record,
)
from osc_cascade.kinds.compute import Server, server_owners
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


class _CinderKind(ResourceKind):
    service_type = 'block-storage'
    error_statuses = frozenset({'error_deleting'})
    # Cinder refuses a delete for its state with 400 "Invalid ...": a 409
    # is something else (a lock), and needs no look at the state
    stuck_refusals = frozenset({400})

    #: the key of an item's project in a detail list (shown to admins)
    project_key: str
    #: the SDK's resource class, whose microversion a raw list asks
    sdk_resource: Any
    #: the detail list's path and key
    detail_path: str
    detail_key: str

    def owner_of(self, item, project_id):
        """Whose it is: Cinder shows the owner to admins alone; a token
        scoped to the project is shown that project's alone (the proof)."""
        return item.get(self.project_key) or (
            project_id if self.scoped else ''
        )

    def listed(self, conn, project_id):
        """The raw items of the detail list, as the SDK's would be."""
        return self.detail_items(
            conn.block_storage,
            self.detail_path,
            self.detail_key,
            project_id,
            self.sdk_resource,
        )

    def stuck_attrs(self, item):
        """Since when a stuck item is in its state (its ``updated_at``),
        for the stuck line; nothing for the rest."""
        if item.get('status') in self.stuck_statuses:
            return {'updated_at': item.get('updated_at')}
        return {}

    def reset_status(self, conn, step, path, **body):
        """Cinder's ``os-reset_status`` (admin) to ``error``, which its
        delete accepts."""
        if path == 'volumes':
            conn.block_storage.reset_volume_status(
                step.target.id, 'error', body.get('attach_status'), None
            )
            return
        # raw: the SDK's Snapshot and Backup actions send their
        # _max_microversion (3.65, 3.64) unnegotiated: an older Cinder
        # answers 406
        request(
            conn.block_storage,
            'POST',
            f'/{path}/{step.target.id}/action',
            json={'os-reset_status': {'status': 'error', **body}},
        )

    def list_statuses(self, conn, project_id):
        # cinder lists a volume, snapshot or backup until it is deleted
        return self.detail_statuses(
            conn.block_storage, self.detail_path, self.detail_key, project_id
        )

    def is_in_use(self, exc):
        # Cinder answers 400 "Invalid volume/snapshot/backup: ... status
        # must be ..." while a dependency (an attached server, a snapshot)
        # is still going away.
        return super().is_in_use(exc) or (
            isinstance(exc, sdk_exc.BadRequestException)
            and 'Invalid ' in str(exc)
        )


@register
class Volume(_CinderKind):
    name = 'block_storage.volume'
    sdk_get = 'block_storage.get_volume'
    sdk_resource = sdk_volume.Volume
    reread = True
    offered_statuses = frozenset({'awaiting-transfer'})
    # cinder/volume/api.py delete: expected status; "in-use" ends when the
    # server goes, "deleting" by itself; these stay until an admin acts
    stuck_statuses = frozenset(
        {'error_deleting', 'creating', 'attaching', 'detaching', 'maintenance'}
    )
    deletable_when = (
        'Cinder deletes a volume only when it is available, error, '
        'error_restoring, error_extending or error_managing'
    )
    reset_command = 'openstack volume set --state error'
    force_action = 'reset_volume_state'
    heat_types = ('OS::Cinder::Volume',)
    project_key = 'os-vol-tenant-attr:tenant_id'
    sdk_resource = sdk_volume.Volume
    detail_path, detail_key = '/volumes/detail', 'volumes'

    def list(self, conn, project_id):
        volumes = list(self.listed(conn, project_id))
        # a stuck volume --force-stuck would force: its half-way records
        # too (one GET each), whose servers the plan checks
        half_way = {
            v['id']: self.half_way_records(conn, v)
            for v in volumes
            if self.forcing_listed(v)
        }
        owners = server_owners(
            conn,
            project_id,
            {
                a.get('server_id')
                for v in volumes
                for a in [
                    *(v.get('attachments') or []),
                    *half_way.get(v['id'], []),
                ]
                if a.get('server_id')
            },
            scoped=self.scoped,
        )
        return owned(
            (
                self.volume_ref(
                    v,
                    owners,
                    self.owner_of(v, project_id),
                    half_way.get(v['id'], []),
                )
                for v in volumes
            ),
            project_id,
        )

    def forcing_listed(self, v):
        """Whether ``--force-stuck`` may force this listed volume."""
        return bool(
            self.options.get('force_stuck')
            and not self.scoped
            and v.get('status') in self.stuck_statuses
        )

    def half_way_records(self, conn, v):
        """The volume's attachment records its view does not show (an
        attach or detach left half-way), as its attachments are shown; one
        that names no server where Cinder cannot list them."""
        records = attachment_records(conn, v['id'])
        if records is None:
            return [{'attachment_id': 'unlisted (attachments API, 3.27)'}]
        shown = {a.get('attachment_id') for a in v.get('attachments') or []}
        return [
            {
                'server_id': r.get('instance'),
                'attachment_id': r['id'],
                'half_way': r.get('status') or '',
            }
            for r in records
            if r['id'] not in shown
        ]

    def volume_ref(self, v, owners, owner_id, half_way=()):
        """``v``: a raw item of the detail list; ``owner_id``: the
        volume's project (``owner_of``); ``half_way``: its records the
        view does not show (``half_way_records``)."""
        attachments, used_by, records = [], [], []
        for a in [*(v.get('attachments') or []), *half_way]:
            server_id = a.get('server_id')
            owner = owners.get(server_id, '') if server_id else ''
            if a.get('half_way') and (owner is GONE or owner == owner_id):
                # detached by the forced step (Cinder's attachment delete)
                records.append(_attachment(a))
                if owner is not GONE:
                    attachments.append(_attachment(a))
            elif server_id and owner is GONE:
                # the server no longer exists: a stale attachment
                attachments.append({**_attachment(a), 'gone': True})
            elif owner and owner == owner_id:
                attachments.append(_attachment(a))
            elif server_id:
                used_by.append(
                    f'server {server_id} of project {owner or "(unknown)"}'
                    + (
                        f" (a record '{a['half_way']}')"
                        if a.get('half_way')
                        else ''
                    )
                )
            else:  # not Nova's (no server): keep it, unsure of its user
                used_by.append(
                    f'attachment {a.get("attachment_id")}, which names no '
                    f'server'
                )
        return item_ref(
            self.name,
            v,
            owner=owner_id or '',
            status=v.get('status'),
            snapshot_id=v.get('snapshot_id'),
            attachments=attachments,
            records=records,
            used_by=sorted(used_by),
            **self.stuck_attrs(v),
        )

    def primary_step(self, ref):
        used_by = ref.attrs.get('used_by')
        if used_by:
            more = (
                f' (and {len(used_by) - 1} more)' if len(used_by) > 1 else ''
            )
            return resource.keep(
                ref,
                f'attached to {used_by[0]}{more}: deleting it would '
                f'force-detach it from that guest',
            )
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for att in ref.attrs.get('attachments', []):
            if att.get('gone'):
                # the server no longer exists: a stale attachment
                yield Edge(Step('detach_volume', ref, _attachment(att)), me)
            elif inventory.get(Server.name, att['server_id']):
                # deleting the server detaches (or deletes) the volume
                yield Edge(delete_of(Server.name, att['server_id']), me)
            # else: the project's server, not found by this discovery (a
            # race): the delete waits as "in use" and the project stays
        if inventory.get(Snapshot.name, ref.attrs.get('snapshot_id')):
            # a volume created from a snapshot goes before the snapshot:
            # backends such as RBD refuse to delete a snapshot with clones
            yield Edge(me, delete_of(Snapshot.name, ref.attrs['snapshot_id']))

    def delete(self, conn, ref):
        # as the SDK's delete_volume(id, ignore_missing=False) asks it
        params = {'cascade': False}
        if direct.supports(conn.block_storage, '3.23'):
            params['force'] = False
        proxy, volume = conn.block_storage, sdk_volume.Volume
        direct.delete(
            proxy, volume, ref.id, ignore_missing=False, params=params
        )

    def status(self, conn, ref):
        return self.fetched(conn, ref).status

    def force_params(self, ref, status):
        params = super().force_params(ref, status)
        if ref.attrs.get('records'):
            # shown in the plan: Cinder's detach of each first
            params['detach'] = len(ref.attrs['records'])
        return params

    def force_edges(self, ref):
        yield from super().force_edges(ref)
        status = self.stuck_status(ref)
        if status and self.forcing(ref):
            # the project's servers go first: their deletes detach it, and
            # the forced step then detaches only what they left
            for att in ref.attrs.get('attachments', []):
                if not att.get('gone'):
                    yield Edge(
                        delete_of(Server.name, att['server_id']),
                        Step(
                            self.force_action,
                            ref,
                            self.force_params(ref, status),
                        ),
                    )

    def force_stuck(self, conn, step):
        # read again: attached meanwhile to a server of another project,
        # the volume is kept (detaching it would cut that guest's disk)
        found = self.read(conn, step.target)
        if found is GONE or found.status not in self.stuck_statuses:
            return  # gone, or out by itself: the delete will do
        # its records, the half-way ones too: the volume's own view shows
        # only the attached ones, not an attach Nova began for a server
        records = attachment_records(conn, step.target.id)
        if records is None:
            raise Kept(
                'not forced: Cinder does not list its attachment records '
                '(its attachments API, 3.27): who it is attached to is unknown'
            )
        servers = {r.get('instance') for r in records} | {
            a.get('server_id') for a in found.attachments or [] if a
        }
        if None in servers or '' in servers:
            raise Kept('not forced: it has an attachment that names no server')
        owners = server_owners(
            conn, step.target.project_id, servers, scoped=self.scoped
        )
        others = sorted(
            f'server {sid} of project {owner or "(unknown)"}'
            for sid, owner in owners.items()
            if owner is not GONE and owner != step.target.project_id
        )
        if others:
            raise Kept(f'not forced: attached to {", ".join(others)}')
        # the project's own or gone servers' records: Cinder's own detach
        # (the backend's connection ends, the record goes, the volume's
        # status follows what is left: available when none)
        for record in records:
            detach_record(conn, record)
        if records:
            found = self.read(conn, step.target)
            if found is GONE or found.status not in self.stuck_statuses:
                return
        self.reset_status(conn, step, 'volumes')

    def apply(self, conn, step):
        if step.action != 'detach_volume':
            return super().apply(conn, step)
        conn.block_storage.detach_volume(
            step.target.id, step.params.get('attachment_id'), force=True
        )


def _attachment(att):
    """What the detach step needs."""
    return {
        'server_id': att.get('server_id'),
        'attachment_id': att.get('attachment_id'),
    }


@register
class Snapshot(_CinderKind):
    name = 'block_storage.snapshot'
    sdk_get = 'block_storage.get_snapshot'
    sdk_resource = sdk_snapshot.Snapshot
    reread = True
    project_key = 'os-extended-snapshot-attributes:project_id'
    # cinder/volume/api.py delete_snapshot: available or error
    stuck_statuses = frozenset({'error_deleting', 'creating'})
    deletable_when = (
        'Cinder deletes a snapshot only when it is available or error'
    )
    reset_command = 'openstack volume snapshot set --state error'
    force_action = 'reset_snapshot_state'
    sdk_resource = sdk_snapshot.Snapshot
    detail_path, detail_key = '/snapshots/detail', 'snapshots'

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    s,
                    owner=self.owner_of(s, project_id),
                    volume_id=s.get('volume_id'),
                    status=s.get('status'),
                    **self.stuck_attrs(s),
                )
                for s in self.listed(conn, project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Volume.name, ref.attrs.get('volume_id', '')),
        )

    def delete(self, conn, ref):
        direct.delete(
            conn.block_storage,
            sdk_snapshot.Snapshot,
            ref.id,
            ignore_missing=False,
        )

    def force_stuck(self, conn, step):
        self.reset_status(conn, step, 'snapshots')

    def status(self, conn, ref):
        return self.fetched(conn, ref).status


@register
class Backup(_CinderKind):
    name = 'block_storage.backup'
    sdk_get = 'block_storage.get_backup'
    sdk_resource = sdk_backup.Backup
    error_statuses = frozenset({'error_deleting', 'error'})
    # cinder/backup/api.py delete: available or error
    stuck_statuses = frozenset({'error_deleting', 'creating'})
    deletable_when = (
        'Cinder deletes a backup only when it is available or error'
    )
    reset_command = 'openstack volume backup set --state error'
    force_action = 'reset_backup_state'

    project_key = 'os-backup-project-attr:project_id'
    sdk_resource = sdk_backup.Backup
    detail_path, detail_key = '/backups/detail', 'backups'

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    b,
                    owner=self.owner_of(b, project_id),
                    volume_id=b.get('volume_id'),
                    status=b.get('status'),
                    incremental=bool(b.get('is_incremental')) or None,
                    taken_at=b.get('data_timestamp') or b.get('created_at'),
                    **self.stuck_attrs(b),
                )
                for b in self.listed(conn, project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        # Incrementals before the backups they build on: as admin, Cinder
        # accepts deleting a full backup that still has incrementals and
        # leaves them orphaned, so the order is ours to enforce. The API
        # does not say which backup is an incremental's parent; Cinder
        # takes the volume's latest backup, so deleting a volume's backups
        # newest first is always safe.
        chain = sorted(
            inventory.where(self.name, volume_id=ref.attrs.get('volume_id')),
            key=lambda b: (b.attrs.get('taken_at') or '', b.id),
        )
        if not any(b.attrs.get('incremental') for b in chain):
            return
        position = chain.index(ref)
        if position > 0:
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(self.name, chain[position - 1].id),
            )

    def delete(self, conn, ref):
        direct.delete(
            conn.block_storage,
            sdk_backup.Backup,
            ref.id,
            ignore_missing=False,
        )

    def force_stuck(self, conn, step):
        self.reset_status(conn, step, 'backups')

    def status(self, conn, ref):
        return self.fetched(conn, ref).status


#: the microversion that shows a transfer's project (source_project_id)
TRANSFER_MICROVERSION = '3.57'


@register
class VolumeTransfer(ResourceKind):
    """A volume the project offered to another project (``volume transfer
    request create``), not yet accepted: the offer is withdrawn (its
    delete, which sets the volume back to ``available``) before the volume
    and its snapshots go. Cinder lists an admin every project's transfers
    with ``all_tenants``, ``project_id`` filtering by the volume's project
    (cinder.db ``_process_transfer_filters``); an accepted one is no
    longer listed. Its project is shown from 3.57 on; one whose project is
    not shown is left alone, and its volume, still ``awaiting-transfer``,
    is kept."""

    name = 'block_storage.volume_transfer'
    service_type = 'block-storage'
    synchronous_delete = True

    def list(self, conn, project_id):
        query = (
            {}
            if self.scoped
            else {'all_tenants': True, 'project_id': project_id}
        )
        return owned(
            (
                item_ref(
                    self.name,
                    t,
                    owner=t.get('source_project_id')
                    or (project_id if self.scoped else ''),
                    volume_id=t.get('volume_id'),
                )
                for t in pages(
                    conn.block_storage,
                    '/volume-transfers/detail',
                    'transfers',
                    query,
                    microversion=TRANSFER_MICROVERSION,
                )
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        volume_id = ref.attrs.get('volume_id', '')
        yield Edge(me, delete_of(Volume.name, volume_id))
        # the offer carries the volume's snapshots too
        for snap in inventory.where(Snapshot.name, volume_id=volume_id):
            yield Edge(me, delete_of(Snapshot.name, snap.id))

    def delete(self, conn, ref):
        # raw: at TRANSFER_MICROVERSION, as listed; the SDK's Transfer
        # stops at 3.55 and takes --os-volume-api-version's first
        request(
            conn.block_storage,
            'DELETE',
            f'/volume-transfers/{ref.id}',
            microversion=TRANSFER_MICROVERSION,
        )

    def status(self, conn, ref):
        # its delete is synchronous: asked only of a plan file's step; raw
        # as its delete
        request(
            conn.block_storage,
            'GET',
            f'/volume-transfers/{ref.id}',
            microversion=TRANSFER_MICROVERSION,
        )
        return 'offered'  # a 404 is the executor's "gone"


@register
class VolumeTypeAccess(AccessKind):
    """The project's access to a private volume type (the type is the
    admin's and stays)."""

    name = 'block_storage.type_access'
    service_type = 'block-storage'

    def listing(self, conn):
        # Cinder shows an admin the public types alone unless asked for
        # the private ones; the SDK follows its next links
        return conn.block_storage.types(is_public=False)

    def members(self, conn, of):
        found = conn.block_storage.get_type_access(of)
        return [a['project_id'] for a in found]

    def remove(self, conn, of, project_id):
        conn.block_storage.remove_type_access(of, project_id)
