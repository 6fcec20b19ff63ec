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

"""Cinder's attachment records of a volume (its attachments API, 3.27),
which ``--force-stuck`` reads and deletes for a stuck volume
(``block_storage.Volume.force_stuck``): the volume's own view shows the
attached records alone, not those an attach or detach left half-way.
"""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.engine.errors import Kept


def attachment_records(conn, volume_id):
    """Every attachment record of the volume, an admin's listing
    (cinder/api/v3/attachments.py index, all_tenants; the SDK's
    ``attachments``, at the microversion it negotiates, 3.27 at least).
    The volume's view shows only the attached ones
    (api/v3/views/volumes.py _get_attachments), not those an attach or a
    detach left half-way (reserved, attaching, detaching), which still
    name their server. None from a Cinder without the API (before 3.27),
    which cannot say who a volume is being attached to."""
    try:
        return [
            {'id': a.id, 'instance': a.instance, 'status': a.status}
            for a in conn.block_storage.attachments(
                volume_id=volume_id, all_projects=True
            )
        ]
    except (sdk_exc.NotFoundException, sdk_exc.NotSupported):
        return None


def detach_record(conn, record):
    """Cinder's own detach of a record (DELETE /attachments/{id},
    volume/api.py attachment_delete): the backend ends its connection and
    the record goes, unlike os-reset_status's attach_status, which marks
    the records detached in the database alone. Cinder refuses it (409)
    while Nova's server still has the volume (attachment_deletion_allowed):
    kept then."""
    try:
        conn.block_storage.delete_attachment(record['id'])
    except sdk_exc.ConflictException as exc:
        raise Kept(
            f'not forced: Cinder refuses to delete its attachment '
            f'{record["id"]}: server {record.get("instance")} still has '
            f'the volume in Nova'
        ) from exc
