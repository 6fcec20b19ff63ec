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

"""Nova's quota sets: the kind, and the drain's API."""

from __future__ import annotations

from osc_cascade.kinds.quota.base import _QuotaSetApi, _QuotaSets
from osc_cascade.kinds.registry import register


@register
class ComputeQuota(_QuotaSets):
    name = 'quota.compute'
    service_type = 'compute'
    deletes_of = 'compute'
    path = '/os-quota-sets'

    def api(self, conn):
        return conn.compute


# Nova's quota sets stay raw (quota.base): the SDK's QuotaSet asks at
# microversion 2.56 (or --os-compute-api-version's), whose answer has fewer
# keys than the one without a microversion that the drain records, freezes
# and restores (floating_ips, security_groups, networks... are gone from
# 2.36 on): a record written before would not be restored whole.


class ComputeQuotaApi(_QuotaSetApi):
    service_type = 'compute'
    path = '/os-quota-sets'
    # Quotas.destroy_all_by_project: the per-user rows too
    reset_takes_more = True

    def api(self, conn):
        return conn.compute
