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

"""Barbican's project quotas: the kind, and the drain's API."""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.kinds.paging import pages
from osc_cascade.kinds.quota.base import QuotaApi, _Quota
from osc_cascade.kinds.registry import register


@register
class KeyManagerQuota(_Quota):
    """Barbican lists the projects with quotas of their own (its secrets
    are beyond the cascade's reach, its quotas are not), ten a page unless
    asked for more (``offset``/``limit``, a ``next`` link)."""

    name = 'quota.key_manager'
    service_type = 'key-manager'
    deletes_of = 'key_manager'

    def customised(self, conn, project_id):
        rows = pages(
            conn.key_manager,
            '/project-quotas',
            'project_quotas',
            {'limit': 100},
        )
        return [
            (q['project_id'], {})
            for q in rows
            if project_id in (None, q['project_id'])
        ]

    def delete(self, conn, ref):
        conn.key_manager.delete_project_quota(ref.id, ignore_missing=False)


#: Barbican's quota resources
BARBICAN_QUOTAS = ('secrets', 'orders', 'containers', 'consumers', 'cas')


class KeyManagerQuotaApi(QuotaApi):
    service_type = 'key-manager'

    def own(self, conn, project_id):
        try:
            quota = conn.key_manager.get_project_quota(project_id)
        except sdk_exc.NotFoundException:
            return {}  # none of its own
        return {k: quota[k] for k in BARBICAN_QUOTAS if quota[k] is not None}

    def frozen(self, conn, project_id):
        return dict.fromkeys(BARBICAN_QUOTAS, 0)

    def set(self, conn, project_id, values):
        conn.key_manager.update_project_quota(project_id, **values)

    def reset(self, conn, project_id):
        conn.key_manager.delete_project_quota(project_id, ignore_missing=True)
