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

"""Magnum's quotas: the kind, and the drain's API."""

from __future__ import annotations

from osc_cascade.api.http import request
from osc_cascade.kinds.paging import pages
from osc_cascade.kinds.quota.base import QuotaApi, _Quota
from osc_cascade.kinds.registry import register


@register
class ContainerInfraQuota(_Quota):
    """Magnum keeps one row per project and resource that was set, listed
    a page at a time (``marker``/``limit``, a ``next`` link that drops
    ``all_tenants``)."""

    name = 'quota.container_infra'
    service_type = 'container-infrastructure-management'
    deletes_of = 'container_infra'

    def customised(self, conn, project_id):
        resources: dict[str, list[str]] = {}
        for q in pages(
            conn.container_infrastructure_management,
            '/quotas',
            'quotas',
            {'all_tenants': True},
        ):
            if project_id in (None, q['project_id']):
                resources.setdefault(q['project_id'], []).append(q['resource'])
        return [
            (pid, {'resources': sorted(names)})
            for pid, names in sorted(resources.items())
        ]

    def delete(self, conn, ref):
        for name in ref.attrs['resources']:
            # raw: openstacksdk has no Magnum quotas
            request(
                conn.container_infrastructure_management,
                'DELETE',
                f'/quotas/{ref.id}/{name}',
            )


class ContainerInfraQuotaApi(QuotaApi):
    """Magnum: one row per project and resource (``Cluster``)."""

    service_type = 'container-infrastructure-management'

    def own(self, conn, project_id):
        return {
            q['resource']: q['hard_limit']
            for q in pages(
                conn.container_infrastructure_management,
                '/quotas',
                'quotas',
                {'all_tenants': True},
            )
            if q['project_id'] == project_id
        }

    def frozen(self, conn, project_id):
        return {'Cluster': 0}

    def set(self, conn, project_id, values):
        api = conn.container_infrastructure_management
        have = self.own(conn, project_id)
        for resource_name, limit in sorted(values.items()):
            if resource_name in have:
                # raw: openstacksdk has no Magnum quotas. Magnum reads the
                # body as a Quota object, not a JSON patch (a list: 500)
                request(
                    api,
                    'PATCH',
                    f'/quotas/{project_id}/{resource_name}',
                    json={
                        'project_id': project_id,
                        'resource': resource_name,
                        'hard_limit': limit,
                    },
                )
            else:
                # raw: openstacksdk has no Magnum quotas
                request(
                    api,
                    'POST',
                    '/quotas',
                    json={
                        'project_id': project_id,
                        'resource': resource_name,
                        'hard_limit': limit,
                    },
                )

    def reset(self, conn, project_id):
        api = conn.container_infrastructure_management
        for resource_name in sorted(self.own(conn, project_id)):
            # raw: openstacksdk has no Magnum quotas
            request(api, 'DELETE', f'/quotas/{project_id}/{resource_name}')
