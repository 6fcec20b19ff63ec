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

"""Cinder: volumes, snapshots and backups, whose deletes are asynchronous;
a volume with snapshots or attachments is refused with Cinder's 400, as
is one offered to another project (``awaiting-transfer``).

Volume transfers as cinder.transfer.api and cinder.db.api have them: an
admin lists every project's with ``all_tenants`` (``project_id`` then
filters by the volume's project), the owner is shown from 3.57 on, a
delete (the offer withdrawn) sets the volume back to ``available``, and
an accepted transfer is gone from the list while its volume has changed
project (``accept_volume_transfer``, what project B's POST does)."""

from __future__ import annotations

import re

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    Conflict,
    page,
    paged_filters,
    versions,
)

#: cinder/volume/api.py delete: the statuses a volume is deleted from
VOLUME_DELETABLE = (
    'available',
    'error',
    'error_restoring',
    'error_extending',
    'error_managing',
)


def _bad(message):
    return {'badRequest': {'code': 400, 'message': message}}


class BlockStorage:
    def _block_storage(self, method, path, query, body):
        if path in ('', '/'):
            return 200, versions(
                'v3.0',
                self.endpoints['block-storage'] + '/',
                version='3.70',
                min_version='3.0',
            )
        if path.startswith(('/volume-transfers', '/os-volume-transfer')):
            return self._volume_transfers(method, path, query)
        if path.startswith('/attachments'):
            return self._attachments(method, path, query)
        if path == '/backups' and method == 'POST':
            return self._create_backup(body['backup'])
        for coll, owner_key in (
            ('volumes', 'os-vol-tenant-attr:tenant_id'),
            ('snapshots', 'os-extended-snapshot-attributes:project_id'),
            ('backups', 'os-backup-project-attr:project_id'),
        ):
            if path == f'/{coll}/detail':
                return self._cinder_list(coll, owner_key, query)
            m = re.fullmatch(rf'/{coll}/([^/]+)(/action)?', path)
            if not m:
                continue
            obj = (
                self._async_get(coll, m.group(1), 'deleting')
                if (method == 'GET')
                else self.get(coll, m.group(1))
            )
            if obj is None:
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            singular = coll[:-1]
            if method == 'GET':
                return 200, {singular: obj}
            if m.group(2):
                return self._volume_action(obj, body)
            if method == 'DELETE':
                getattr(self, f'_check_delete_{singular}')(obj)
                obj['status'] = 'deleting'
                self._start_delete(coll, obj['id'])
                return 202, None
        return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}

    #: Cinder's ``osapi_max_limit``: the most items of a page
    cinder_max_limit = 1000

    def _cinder_project(self) -> str:
        """The project of the request's token (the admin's here)."""
        return ADMIN_PROJECT

    def _cinder_list(self, coll, owner_key, query):
        """A list as cinder.volume.api's ``get_all`` answers it: an
        admin's ``all_tenants`` lists every project's (``project_id`` then
        filters), without it the token's project's alone (and a
        ``project_id`` of another project finds nothing); cut at ``limit``
        (at most ``osapi_max_limit``) after ``marker``, the next page
        linked in ``<coll>_links``."""
        every = str(query.get('all_tenants', '')).lower() in ('1', 'true')
        wanted = {query.get('project_id')} - {None, ''}
        if not every:
            wanted.add(self._cinder_project())
        items = [
            o
            for o in self._async_list(coll, 'deleting')
            if all(o[owner_key] == p for p in wanted)
        ]
        chunk, link = page(
            items,
            query,
            self.cinder_max_limit,
            url=f'{self.endpoints["block-storage"]}/{coll}/detail',
        )
        if link:  # the client's filters kept, as Cinder's links keep them
            link += paged_filters(query)
        links = [{'rel': 'next', 'href': link}] if link else []
        return 200, {
            coll: chunk,
            **({f'{coll}_links': links} if links else {}),
        }

    def _create_backup(self, asked):
        """A backup of a volume (Heat's handle_snapshot): refused for one
        in use without ``force``; ``creating`` until its first GET."""
        volume = self.get('volumes', asked['volume_id'])
        if volume is None:
            return 404, {'itemNotFound': {'code': 404, 'message': 'no volume'}}
        if volume['status'] == 'in-use' and not asked.get('force'):
            return 400, {
                'badRequest': {
                    'code': 400,
                    'message': 'Invalid volume: Backing up an in-use volume '
                    'must use the force flag.',
                }
            }
        backup = self.add(
            'backups',
            name=asked.get('name') or '',
            volume_id=volume['id'],
            status=self.backup_status_after_create,
            is_incremental=False,
            **{
                'os-backup-project-attr:project_id': volume[
                    'os-vol-tenant-attr:tenant_id'
                ]
            },
        )
        return 202, {'backup': {'id': backup['id'], 'name': backup['name']}}

    #: whether the caller may reset states (``os-reset_status``)
    admin_actions = True

    @property
    def reset_calls(self):
        """Each ``os-reset_status``: (id, its body)."""
        return self.__dict__.setdefault('_reset_calls', [])

    #: what a new backup becomes (``error``: the backup service failed)
    backup_status_after_create = 'available'

    def _check_delete_volume(self, volume):
        snapshots = [
            s for s in self.all('snapshots') if s['volume_id'] == volume['id']
        ]
        # cinder/volume/api.py delete: the statuses it deletes from
        if volume['status'] not in VOLUME_DELETABLE or snapshots:
            raise Conflict(
                400,
                {
                    'badRequest': {
                        'code': 400,
                        'message': 'Invalid volume: Volume status must be available or error '
                        'or error_restoring or error_extending or error_managing '
                        'and must not be migrating, attached, belong to a group, '
                        'have snapshots, awaiting a transfer, or be disassociated '
                        'from snapshots after volume transfer.',
                    }
                },
            )

    # -- attachment records (cinder/api/v3/attachments.py, 3.27+) ---------
    #
    # Cinder's volume view shows only the attached records
    # (api/v3/views/volumes.py _get_attachments): a volume's
    # ``attachments`` here. The others (``reserved``, ``attaching``,
    # ``detaching``: an attach or detach Nova began and never finished)
    # are in ``attachment_records``, listed by the attachments API alone.

    #: the lowest microversion of the attachments API
    ATTACHMENTS = (3, 27)

    def hidden_attachment(self, volume, server_id, attach_status):
        """A record Nova's attach (or detach) left half-way; the volume in
        the matching state."""
        volume['status'] = attach_status
        return self.add(
            'attachment_records',
            volume_id=volume['id'],
            instance=server_id,
            status=attach_status,
            connection_info={'driver_volume_type': 'iscsi'},
        )

    def attachment_records_of(self, volume):
        shown = [
            {
                'id': a['attachment_id'],
                'volume_id': volume['id'],
                'instance': a.get('server_id'),
                'status': 'attached',
                'connection_info': {'driver_volume_type': 'iscsi'},
            }
            for a in volume.get('attachments') or []
        ]
        return shown + [
            r
            for r in self.all('attachment_records')
            if r['volume_id'] == volume['id']
        ]

    @property
    def attachment_deletes(self):
        """Each ``DELETE /attachments/{id}`` answered 200 or 409."""
        return self.__dict__.setdefault('_attachment_deletes', [])

    def _attachments(self, method, path, query):
        if (self._microversion('volume') or (3, 0)) < self.ATTACHMENTS:
            return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}
        volumes = [
            v
            for v in self.all('volumes')
            if not query.get('volume_id') or v['id'] == query['volume_id']
        ]
        records = [r for v in volumes for r in self.attachment_records_of(v)]
        if path in ('/attachments', '/attachments/detail') and (
            method == 'GET'
        ):
            return 200, {
                'attachments': [
                    {
                        k: r[k]
                        for k in ('id', 'volume_id', 'instance', 'status')
                    }
                    for r in records
                ]
            }
        m = re.fullmatch(r'/attachments/([^/]+)', path)
        found = [r for r in records if m and r['id'] == m.group(1)]
        if not found or method != 'DELETE':
            return 404, {'itemNotFound': {'code': 404, 'message': 'none'}}
        return self._delete_attachment(found[0])

    def _delete_attachment(self, record):
        """cinder/volume/api.py attachment_delete: refused (409) while
        Nova's server still has the volume (attachment_deletion_allowed);
        else the record goes and the volume's status follows what is left
        (cinder/db/api.py volume_detached: none left, available)."""
        volume = self.get('volumes', record['volume_id'])
        server = self.get('servers', record.get('instance') or '')
        if (
            server is not None
            and record.get('connection_info')
            and volume['id'] in server.get('volumes', [])
        ):
            self.attachment_deletes.append((record['id'], 409))
            return 409, {
                'conflictingRequest': {
                    'code': 409,
                    'message': 'Detected user call to delete in-use '
                    'attachment. Call must come from the nova service',
                }
            }
        self.attachment_deletes.append((record['id'], 200))
        self._remove('attachment_records', record['id'])
        volume['attachments'] = [
            a
            for a in volume.get('attachments') or []
            if a['attachment_id'] != record['id']
        ]
        left = sorted(r['status'] for r in self.attachment_records_of(volume))
        volume['status'] = {'attached': 'in-use'}.get(
            left[0] if left else '', left[0] if left else 'available'
        )
        return 200, {'attachments': []}

    def _volume_transfers(self, method, path, query):
        m = re.fullmatch(
            r'/(volume-transfers|os-volume-transfer)(/detail)?'
            r'|/(?:volume-transfers|os-volume-transfer)/([^/]+)',
            path,
        )
        if m is None:
            return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}
        if method == 'GET' and m.group(1):
            items = self.all('volume_transfers')
            if query.get('all_tenants') in ('1', 'True', 'true'):
                project = query.get('project_id')
                items = [
                    t
                    for t in items
                    if not project
                    or (self.get('volumes', t['volume_id']) or {}).get(
                        'os-vol-tenant-attr:tenant_id'
                    )
                    == project
                ]
            history = (self._microversion('volume') or (3, 0)) >= (3, 57)
            return 200, {
                'transfers': [
                    {
                        k: v
                        for k, v in t.items()
                        if history
                        or k
                        not in (
                            'source_project_id',
                            'destination_project_id',
                            'accepted',
                        )
                    }
                    for t in items
                ]
            }
        transfer = self.get('volume_transfers', m.group(3) or '')
        if transfer is None:
            return 404, {'itemNotFound': {'code': 404, 'message': 'none'}}
        if method == 'GET':
            return 200, {'transfer': transfer}
        if method == 'DELETE':
            volume = self.get('volumes', transfer['volume_id'])
            if volume and volume['status'] == 'awaiting-transfer':
                volume['status'] = 'available'
            self._remove('volume_transfers', transfer['id'])
            return 202, None
        return 400, {'badRequest': {'code': 400, 'message': 'bad request'}}

    def offer_volume(self, volume, name='offer'):
        """Project A's ``volume transfer request create``."""
        volume['status'] = 'awaiting-transfer'
        return self.add(
            'volume_transfers',
            name=name,
            volume_id=volume['id'],
            source_project_id=volume['os-vol-tenant-attr:tenant_id'],
            destination_project_id=None,
            accepted=False,
        )

    def accept_volume_transfer(self, transfer_id, project_id):
        """Project B's ``volume transfer accept``: the volume is B's and
        available; the transfer is gone from the lists. False if there is
        no such transfer (it was withdrawn)."""
        transfer = self.get('volume_transfers', transfer_id)
        if transfer is None:
            return False
        volume = self.get('volumes', transfer['volume_id'])
        volume['os-vol-tenant-attr:tenant_id'] = project_id
        volume['status'] = 'available'
        self._remove('volume_transfers', transfer_id)
        return True

    def _check_delete_snapshot(self, snapshot):
        # allowed with dependent volumes, as the file driver does; from
        # available or error alone (cinder/volume/api.py delete_snapshot)
        if snapshot['status'] not in ('available', 'error'):
            raise Conflict(
                400,
                _bad(
                    'Invalid snapshot: Snapshot status must be available or '
                    'error and must not be part of a group.'
                ),
            )

    def _check_delete_backup(self, backup):
        # As admin, Cinder accepts deleting a full backup that still has
        # incrementals (it looks for them in the caller's project only);
        # from available or error alone (cinder/backup/api.py delete)
        if backup['status'] not in ('available', 'error'):
            raise Conflict(
                400,
                _bad(
                    'Invalid backup: Backup status must be available or error'
                ),
            )

    def _volume_action(self, volume, body):
        if 'os-reset_status' in body:
            # cinder/api/contrib/admin_actions.py _reset_status: the
            # admin's; attach_status detached clears every attachment
            self.reset_calls.append((volume['id'], body['os-reset_status']))
            asked = body['os-reset_status']
            if not self.admin_actions:
                return 403, {'forbidden': {'code': 403, 'message': 'policy'}}
            volume['status'] = asked['status']
            if asked.get('attach_status') == 'detached':
                # every record, shown or not, is marked detached (a DB
                # change: the backend's connection stays)
                records = self.attachment_records_of(volume)
                volume['attachments'] = []
                for r in records:
                    self._remove('attachment_records', r['id'])
                if records:  # volume_detached: none left, available
                    volume['status'] = 'available'
            return 202, None
        if 'os-force_detach' in body:
            attachment = body['os-force_detach'].get('attachment_id')
            volume['attachments'] = [
                a
                for a in volume['attachments']
                if a['attachment_id'] != attachment
            ]
            if not volume['attachments']:
                volume['status'] = 'available'
            return 202, None
        return 400, {'badRequest': {'code': 400, 'message': 'bad action'}}
