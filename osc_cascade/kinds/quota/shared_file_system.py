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

"""Manila's quota sets: the kind, and the drain's API.

Manila routes ``/quota-sets`` from microversion 2.7 on (``os-quota-sets``
before); a call that names none is at 2.0 and answered 404, which read
as "no quota API" and "no rows to reset": the project's rows stayed. So
every call names the microversion of the other Manila calls (2.56: the
replica and share group quotas are in the set)."""

from __future__ import annotations

from osc_cascade.kinds import shared_file_system
from osc_cascade.kinds.quota.base import _QuotaSetApi, _QuotaSets
from osc_cascade.kinds.registry import register


@register
class SharedFileSystemQuota(_QuotaSets):
    name = 'quota.shared_file_system'
    service_type = 'shared-file-system'
    deletes_of = 'shared_file_system'
    path = '/quota-sets'
    microversion = shared_file_system.MICROVERSION

    def api(self, conn):
        return shared_file_system.manila(conn)


class SharedFileSystemQuotaApi(_QuotaSetApi):
    service_type = 'shared-file-system'
    path = '/quota-sets'
    microversion = shared_file_system.MICROVERSION
    untouched = frozenset({'per_share_gigabytes'})
    # quota_destroy_all_by_project: the per-user rows, the usages and the
    # reservations too (not the per-share-type rows)
    reset_takes_more = True

    def api(self, conn):
        return shared_file_system.manila(conn)
