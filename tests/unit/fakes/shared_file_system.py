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

"""Manila: shares, share snapshots, networks, groups and replicas, whose
deletes are asynchronous, and quota sets (quota.py). A share with
snapshots is refused with Manila's 403 (InvalidShare), one with replicas
with 409, the routes of replicas, share groups and quota sets are not
there below 2.11, 2.31 and 2.7 (404), a share network or group with
shares with 409, a share on offer (``awaiting_transfer``) with 403 too.

Share transfers (2.77) as manila.transfer.api and db have them: an admin
lists every project's with ``all_tenants`` (filters are the transfer's
columns: ``source_project_id``), a delete sets the share back to
``available``, an accepted one is gone from the list while its share (and
its snapshots) changed project (``accept_share_transfer``)."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ENDPOINTS, Conflict, versions

# Manila's URL collections and the fake's (Cinder has snapshots too)
MANILA = {
    'shares': 'shares',
    'snapshots': 'share_snapshots',
    'share-networks': 'share_networks',
    'share-groups': 'share_groups',
    'share-replicas': 'share_replicas',
}
MANILA_DEFAULT_QUOTAS = {
    'shares': 50,
    'snapshots': 50,
    'gigabytes': 1000,
    'share_networks': 10,
}


def manila_error(status, message):
    kind = {400: 'badRequest', 403: 'forbidden', 409: 'conflict'}[status]
    return Conflict(status, {kind: {'code': status, 'message': message}})


class SharedFileSystem:
    def share(self, project_id, name='share', **extra):
        extra.setdefault('status', 'available')
        for key in (
            'share_network_id',
            'share_group_id',
            'snapshot_id',
            'replication_type',
        ):
            extra.setdefault(key, None)
        return self.add(
            'shares',
            name=name,
            project_id=project_id,
            share_proto='NFS',
            size=1,
            **extra,
        )

    def manila(self, collection, project_id, **obj):
        obj.setdefault('status', 'available')
        return self.add(
            collection,
            project_id=project_id,
            name=obj.pop('name', collection[:-1]),
            **obj,
        )

    @property
    def share_resets(self):
        """Each ``reset_status`` of a share: (id, its body)."""
        return self.__dict__.setdefault('_share_resets', [])

    def offer_share(self, share):
        share['status'] = 'awaiting_transfer'
        return self.add(
            'share_transfers',
            name='offer',
            resource_type='share',
            resource_id=share['id'],
            source_project_id=share['project_id'],
            destination_project_id=None,
            accepted=False,
        )

    def accept_share_transfer(self, transfer_id, project_id):
        """The other project's ``share transfer accept`` (snapshots too);
        False if the transfer was withdrawn."""
        transfer = self.get('share_transfers', transfer_id)
        if transfer is None:
            return False
        share = self.get('shares', transfer['resource_id'])
        share.update(project_id=project_id, status='available')
        for snap in self.all('share_snapshots'):
            if snap.get('share_id') == share['id']:
                snap['project_id'] = project_id
        self._remove('share_transfers', transfer_id)
        return True

    def _share_transfers(self, method, path, query):
        if (self._microversion('shared-file-system') or (2, 0)) < (2, 77):
            return 404, {'itemNotFound': {'code': 404, 'message': 'none'}}
        if path == '/share-transfers/detail':
            if query.get('all_tenants') != '1':
                return 200, {'transfers': []}  # the caller's project only
            return 200, {
                'transfers': [
                    t
                    for t in self.all('share_transfers')
                    if query.get('source_project_id')
                    in (None, t['source_project_id'])
                ]
            }
        transfer = self.get('share_transfers', path.rsplit('/', 1)[-1])
        if transfer is None:
            return 404, {'itemNotFound': {'code': 404, 'message': 'none'}}
        if method == 'DELETE':
            share = self.get('shares', transfer['resource_id'])
            if share and share['status'] == 'awaiting_transfer':
                share['status'] = 'available'
            self._remove('share_transfers', transfer['id'])
            return 200, None
        return 200, {'transfer': transfer}

    def _shared_file_system(self, method, path, query, body):
        if path in ('', '/'):
            return 300, versions(
                'v2.0',
                ENDPOINTS['shared-file-system'] + '/',
                version='2.84',
                min_version='2.0',
            )
        if path.startswith('/share-transfers'):
            return self._share_transfers(method, path, query)
        # replicas, share groups and quota sets have no route at all below
        # their first microversions (an SDK call that names none: 404;
        # quota sets are os-quota-sets below 2.7, seen on the minicloud)
        version = self._microversion('shared-file-system') or (2, 0)
        for prefix, first in (
            ('/share-replicas', (2, 11)),
            ('/share-groups', (2, 31)),
            ('/quota-sets', (2, 7)),
        ):
            if path.startswith(prefix) and version < first:
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'no route'}
                }
        m = re.fullmatch(r'/quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('manila', m, method, MANILA_DEFAULT_QUOTAS)
        m = re.fullmatch(r'/([a-z-]+)/detail', path)
        if m and m.group(1) in MANILA:
            key, coll = m.group(1).replace('-', '_'), MANILA[m.group(1)]
            if query.get('all_tenants') != '1' and 'share_id' not in query:
                return 200, {key: []}  # the caller's project only
            return 200, {
                key: [
                    o
                    for o in self.all(coll)
                    if query.get('project_id') in (None, o.get('project_id'))
                    and query.get('share_id') in (None, o.get('share_id'))
                    and query.get('share_network_id')
                    in (None, o.get('share_network_id'))
                ]
            }
        m = re.fullmatch(r'/shares/([^/]+)/action', path)
        if m and method == 'POST' and 'reset_status' in body:
            share = self.get('shares', m.group(1))
            if share is None:
                return 404, {'itemNotFound': {'code': 404, 'message': 'no'}}
            self.share_resets.append((share['id'], body['reset_status']))
            share['status'] = body['reset_status']['status']
            return 202, None
        m = re.fullmatch(r'/([a-z-]+)/([^/]+)', path)
        if m and m.group(1) in MANILA:
            coll = MANILA[m.group(1)]
            obj = self._async_get(coll, m.group(2), 'deleting')
            if obj is None:
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            if method == 'GET':
                return 200, {m.group(1).replace('-', '_')[:-1]: obj}
            if method == 'DELETE':
                # manila/api/v1/shares.py delete (found on the minicloud)
                if (
                    coll == 'shares'
                    and obj.get('share_group_id')
                    and (query.get('share_group_id') != obj['share_group_id'])
                ):
                    raise manila_error(
                        400,
                        "Must provide 'share_group_id' as a request parameter "
                        'when deleting a share in a share group.',
                    )
                self._check_manila_delete(coll, obj)
                if coll == 'share_networks':
                    self._remove(coll, obj['id'])
                    return 202, None
                if obj.get('fail_delete'):
                    # a share group's failed delete leaves it in 'error'
                    # (manila/share/manager.py delete_share_group)
                    obj['status'] = (
                        'error' if coll == 'share_groups' else 'error_deleting'
                    )
                else:
                    obj['status'] = 'deleting'
                    self._start_delete(coll, obj['id'])
                return 202, None
        return 404, {'itemNotFound': {'code': 404, 'message': 'no route'}}

    def _check_manila_delete(self, coll, obj):
        def used_by(other, key):
            return [
                o['id'] for o in self.all(other) if o.get(key) == obj['id']
            ]

        if coll == 'shares':
            # manila/share/api.py delete: InvalidShare, which
            # manila/api/v2/shares.py answers 403 (seen on the minicloud)
            if obj['status'] not in ('available', 'error', 'inactive'):
                raise manila_error(
                    403,
                    'Invalid share: Share status must be one of '
                    "('available', 'error', 'inactive').",
                )
            if used_by('share_snapshots', 'share_id'):
                raise manila_error(
                    403,
                    'Invalid share: Share still has 1 dependent snapshots.',
                )
            if [
                r
                for r in used_by('share_replicas', 'share_id')
                if self.get('share_replicas', r)['replica_state'] != 'active'
            ]:
                # manila/share/api.py delete (found on the minicloud)
                raise manila_error(
                    409,
                    f'Share {obj["id"]} has replicas. Remove the replicas '
                    'before deleting the share.',
                )
        if coll == 'share_snapshots' and used_by('shares', 'snapshot_id'):
            raise manila_error(
                400, 'Invalid snapshot: it has dependent shares.'
            )
        if coll == 'share_groups' and used_by('shares', 'share_group_id'):
            raise manila_error(409, 'Share group has shares.')
        if coll == 'share_networks' and (
            used_by('shares', 'share_network_id')
            or used_by('share_groups', 'share_network_id')
        ):
            raise manila_error(
                409,
                'Can not delete share network: it has shares or share groups.',
            )
