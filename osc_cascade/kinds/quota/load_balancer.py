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

"""Octavia's quotas: the kind, and the drain's API."""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.kinds.paging import pages
from osc_cascade.kinds.quota.base import QuotaApi, _Quota
from osc_cascade.kinds.registry import register


def octavia_defaults(conn: Any) -> dict[str, Any]:
    """Octavia's default quotas. Its list of quota rows shows a limit
    the row does not set as the default (the minicloud's Octavia: a row
    reset by DELETE, which Octavia keeps for its usage counts, lists as
    ``-1`` everywhere), so a limit of the project's own is one that is
    neither null nor the default's."""
    try:
        # raw: the SDK's Octavia Quota has no l7policy nor l7rule
        return request(
            conn.load_balancer, 'GET', '/lbaas/quotas/defaults'
        ).json()['quota']
    except sdk_exc.NotFoundException:
        return {}


@register
class LoadBalancerQuota(_Quota):
    """Octavia keeps a row for every project that used it; a limit of its
    own is one that is not null. Its list pages (``quotas_links``, at
    ``pagination_max_limit``; the link drops the project filter)."""

    name = 'quota.load_balancer'
    service_type = 'load-balancer'
    deletes_of = 'load_balancer'

    def customised(self, conn, project_id):
        params = {'project_id': project_id} if project_id else {}
        rows = pages(conn.load_balancer, '/lbaas/quotas', 'quotas', params)
        defaults = octavia_defaults(conn)
        return [
            (q['project_id'], {})
            for q in rows
            if project_id in (None, q['project_id'])
            and any(
                v is not None and v != defaults.get(k)
                for k, v in q.items()
                if k not in ('project_id', 'tenant_id')
            )
        ]

    def delete(self, conn, ref):
        conn.load_balancer.delete_quota(ref.id, ignore_missing=False)


#: Octavia's quota resources (without the deprecated aliases)
OCTAVIA_QUOTAS = (
    'load_balancer',
    'listener',
    'pool',
    'member',
    'health_monitor',
    'l7policy',
    'l7rule',
)


class LoadBalancerQuotaApi(QuotaApi):
    """Octavia's row of a project: a limit of its own is not null."""

    service_type = 'load-balancer'

    def own(self, conn, project_id):
        rows = pages(
            conn.load_balancer,
            '/lbaas/quotas',
            'quotas',
            {'project_id': project_id},
        )
        defaults = octavia_defaults(conn)
        for row in rows:
            if row.get('project_id') == project_id:
                return {
                    k: row[k]
                    for k in OCTAVIA_QUOTAS
                    if row.get(k) is not None and row[k] != defaults.get(k)
                }
        return {}

    def frozen(self, conn, project_id):
        return dict.fromkeys(OCTAVIA_QUOTAS, 0)

    def set(self, conn, project_id, values):
        # raw: the SDK's Octavia Quota has no l7policy nor l7rule
        request(
            conn.load_balancer,
            'PUT',
            f'/lbaas/quotas/{project_id}',
            json={'quota': values},
        )

    def reset(self, conn, project_id):
        conn.load_balancer.delete_quota(project_id, ignore_missing=True)
