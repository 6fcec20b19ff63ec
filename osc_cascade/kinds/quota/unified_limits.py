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

"""Keystone's unified limits: the drain's API alone, no kind.

Keystone deletes a project's limits with the project.
"""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import keystone
from osc_cascade.api.http import request
from osc_cascade.kinds.quota.base import QuotaApi


class UnifiedLimitsApi(QuotaApi):
    """Keystone's unified limits, which Nova and Glance may enforce
    instead of a quota set of their own: a project limit of 0 for every
    registered limit, one per service, region and resource
    (``<service_id>:<region_id>:<resource_name>``). A Keystone without
    the API (404) or without registered limits has nothing to freeze;
    Keystone deletes a project's limits with the project. Keystone is one
    for every region: one freeze covers the limits of every region, made
    once whatever number of regions list an endpoint of it."""

    service_type = 'identity'
    one_for_all_regions = True

    def _list(self, conn, path, key, **params):
        what = f"Keystone's {key.replace('_', ' ')}"
        return keystone.complete(
            what, keystone.paged(conn, path, key, **params)
        )

    def _limits(self, conn, project_id):
        return {
            _limit_key(limit): limit
            for limit in self._list(
                conn, '/limits', 'limits', project_id=project_id
            )
            if limit.get('project_id') == project_id
        }

    def own(self, conn, project_id):
        return {
            key: limit['resource_limit']
            for key, limit in self._limits(conn, project_id).items()
        }

    def frozen(self, conn, project_id):
        try:
            registered = self._list(
                conn, '/registered_limits', 'registered_limits'
            )
        except sdk_exc.NotFoundException:
            return {}  # a Keystone without unified limits
        return {_limit_key(limit): 0 for limit in registered}

    def set(self, conn, project_id, values):
        """Each value by PATCH of the project's limit, or POST of a new
        one. Keystone's PATCH skips a ``resource_limit`` of 0 and answers
        200 unchanged (``update_limit``: ``if limit.get('resource_limit')``,
        keystone/limit/backends/sql.py, 30.0.0), and refuses a second limit
        for the same registered limit (409): a limit to be 0 is deleted and
        made anew (the value before is in the drain record already)."""
        have = self._limits(conn, project_id)
        new = []
        for key, value in sorted(values.items()):
            if key in have and value:
                conn.identity.update_limit(
                    have[key]['id'], resource_limit=value
                )
                continue
            if key in have:
                self._delete(conn, have[key])
            service_id, region_id, resource_name = key.split(':', 2)
            new.append(
                {
                    'service_id': service_id,
                    'project_id': project_id,
                    'resource_name': resource_name,
                    'resource_limit': value,
                    **({'region_id': region_id} if region_id else {}),
                }
            )
        if new:
            # raw: Keystone creates them in one call, all or none; the
            # SDK's create_limit posts one limit a call
            request(conn.identity, 'POST', '/limits', json={'limits': new})

    def reset(self, conn, project_id):
        for limit in self._limits(conn, project_id).values():
            self._delete(conn, limit)

    @staticmethod
    def _delete(conn, limit):
        # one gone meanwhile is no error
        conn.identity.delete_limit(limit['id'], ignore_missing=True)


def _limit_key(limit: dict[str, Any]) -> str:
    return ':'.join(
        (
            limit.get('service_id') or '',
            limit.get('region_id') or '',
            limit.get('resource_name') or '',
        )
    )
