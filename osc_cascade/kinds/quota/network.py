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

"""Neutron's quotas: the kind, and the drain's API."""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.kinds.base import unless_absent
from osc_cascade.kinds.quota.base import QuotaApi, _Quota, _QuotaSetApi
from osc_cascade.kinds.registry import register


@register
class NetworkQuota(_Quota):
    """Neutron lists exactly the projects with quotas of their own."""

    name = 'quota.network'
    service_type = 'network'
    deletes_of = 'network'

    def customised(self, conn, project_id):
        return [
            (q.project_id, {})
            for q in unless_absent(conn.network.quotas)
            if project_id in (None, q.project_id)
        ]

    def delete(self, conn, ref):
        conn.network.delete_quota(ref.id, ignore_missing=False)


class NetworkQuotaApi(QuotaApi):
    service_type = 'network'

    def _values(self, conn, project_id, suffix=''):
        # raw: the drain records Neutron's own keys (floatingip, and those
        # of extensions); the SDK's Quota renames its own (floating_ips)
        # and adds more (check_limit, location)
        return request(
            conn.network, 'GET', f'/quotas/{project_id}{suffix}'
        ).json()['quota']

    current = _QuotaSetApi.current

    def own(self, conn, project_id):
        defaults = self._values(conn, project_id, '/default')
        return {
            k: v
            for k, v in self.current(conn, project_id).items()
            if defaults.get(k) != v
        }

    def frozen(self, conn, project_id):
        return dict.fromkeys(self.current(conn, project_id), 0)

    def set(self, conn, project_id, values):
        path = f'/quotas/{project_id}'
        try:
            request(
                conn.network,
                'PUT',
                path,
                json={'quota': {**values, 'force': True}},
            )
        except sdk_exc.BadRequestException as exc:
            if 'force' not in str(exc.details or exc):
                raise
            # before Yoga: no ``force``, and no usage check either
            request(conn.network, 'PUT', path, json={'quota': values})

    def reset(self, conn, project_id):
        conn.network.delete_quota(project_id, ignore_missing=True)
