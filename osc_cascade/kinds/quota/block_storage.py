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

"""Cinder's quota sets: the kind, and the drain's API (frozen at usage)."""

from __future__ import annotations

from osc_cascade.kinds.quota.base import _QuotaSetApi, _QuotaSets
from osc_cascade.kinds.registry import register


@register
class BlockStorageQuota(_QuotaSets):
    name = 'quota.block_storage'
    service_type = 'block-storage'
    deletes_of = 'block_storage'
    path = '/os-quota-sets'

    def api(self, conn):
        return conn.block_storage


class BlockStorageQuotaApi(_QuotaSetApi):
    """Cinder refuses a limit below ``in_use`` + ``reserved`` and knows no
    ``force``: frozen at usage, and lowered to the usage as the project's
    volumes, snapshots and backups are deleted (``frozen`` is the usage
    then)."""

    service_type = 'block-storage'
    path = '/os-quota-sets'
    force = False
    untouched = frozenset({'per_volume_gigabytes'})
    lowered_by = 'block_storage'

    def api(self, conn):
        return conn.block_storage

    def frozen(self, conn, project_id):
        usage = self._values(conn, project_id, usage='true')
        return {
            k: (v.get('in_use') or 0) + (v.get('reserved') or 0)
            for k, v in usage.items()
            if isinstance(v, dict) and k not in self.untouched
        }
