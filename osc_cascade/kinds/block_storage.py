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

"""Cinder: volumes, snapshots and backups."""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import Step
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.compute import Server
from osc_cascade.kinds.registry import register


class _CinderKind(ResourceKind):
    service_type = 'block-storage'
    error_statuses = frozenset({'error_deleting'})

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
    heat_types = ('OS::Cinder::Volume',)

    def list(self, conn, project_id):
        return owned(
            (
                self.ref(
                    v,
                    status=v.status,
                    snapshot_id=v.snapshot_id,
                    attachments=[
                        {
                            'server_id': a.get('server_id'),
                            'attachment_id': a.get('attachment_id'),
                        }
                        for a in (v.attachments or [])
                    ],
                )
                for v in conn.block_storage.volumes(
                    details=True, all_projects=True, project_id=project_id
                )
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for att in ref.attrs.get('attachments', []):
            if inventory.get(Server.name, att['server_id']):
                # deleting the server detaches (or deletes) the volume
                yield Edge(delete_of(Server.name, att['server_id']), me)
            else:
                # attached to a server that is not the project's, or no
                # longer exists: a stale attachment to force-detach
                yield Edge(Step('detach_volume', ref, dict(att)), me)
        if inventory.get(Snapshot.name, ref.attrs.get('snapshot_id')):
            # a volume created from a snapshot goes before the snapshot:
            # backends such as RBD refuse to delete a snapshot with clones
            yield Edge(me, delete_of(Snapshot.name, ref.attrs['snapshot_id']))

    def delete(self, conn, ref):
        conn.block_storage.delete_volume(ref.id, ignore_missing=False)

    def status(self, conn, ref):
        return conn.block_storage.get_volume(ref.id).status

    def list_statuses(self, conn, project_id):
        # cinder lists a volume, snapshot or backup until it is deleted
        return {
            v.id: v.status
            for v in conn.block_storage.volumes(
                details=True, all_projects=True, project_id=project_id
            )
        }

    def apply(self, conn, step):
        if step.action != 'detach_volume':
            return super().apply(conn, step)
        conn.block_storage.detach_volume(
            step.target.id, step.params.get('attachment_id'), force=True
        )


@register
class Snapshot(_CinderKind):
    name = 'block_storage.snapshot'
    sdk_get = 'block_storage.get_snapshot'

    def list(self, conn, project_id):
        return owned(
            (
                self.ref(s, volume_id=s.volume_id, status=s.status)
                for s in conn.block_storage.snapshots(
                    details=True, all_projects=True, project_id=project_id
                )
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Volume.name, ref.attrs.get('volume_id', '')),
        )

    def delete(self, conn, ref):
        conn.block_storage.delete_snapshot(ref.id, ignore_missing=False)

    def status(self, conn, ref):
        return conn.block_storage.get_snapshot(ref.id).status

    def list_statuses(self, conn, project_id):
        return {
            s.id: s.status
            for s in conn.block_storage.snapshots(
                details=True, all_projects=True, project_id=project_id
            )
        }


@register
class Backup(_CinderKind):
    name = 'block_storage.backup'
    sdk_get = 'block_storage.get_backup'
    error_statuses = frozenset({'error_deleting', 'error'})

    def list(self, conn, project_id):
        return owned(
            (
                self.ref(
                    b,
                    volume_id=b.volume_id,
                    status=b.status,
                    incremental=bool(b.is_incremental) or None,
                    taken_at=b.data_timestamp or b.created_at,
                )
                for b in conn.block_storage.backups(
                    details=True, all_projects=True, project_id=project_id
                )
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
        conn.block_storage.delete_backup(ref.id, ignore_missing=False)

    def status(self, conn, ref):
        return conn.block_storage.get_backup(ref.id).status

    def list_statuses(self, conn, project_id):
        return {
            b.id: b.status
            for b in conn.block_storage.backups(
                details=True, all_projects=True, project_id=project_id
            )
        }
