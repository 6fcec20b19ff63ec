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

"""Aodh: alarms, which keep being evaluated, and their actions called,
after their project is gone.

Aodh answers a bare list, filtered by ``q.field``/``q.op``/``q.value``
(``project_id``, or ``all_projects`` for the orphan search), a page at a
time when asked (``limit``, ``marker``: the last alarm's id, sorted by
it); a short page is the last.
"""

from __future__ import annotations

from osc_cascade.api.http import request
from osc_cascade.kinds.base import ResourceKind, owned
from osc_cascade.kinds.paging import item_ref
from osc_cascade.kinds.registry import register


@register
class Alarm(ResourceKind):
    name = 'alarming.alarm'
    service_type = 'alarming'
    synchronous_delete = True
    heat_types = (
        'OS::Aodh::Alarm',
        'OS::Aodh::CompositeAlarm',
        'OS::Aodh::EventAlarm',
        'OS::Aodh::GnocchiAggregationByMetricsAlarm',
        'OS::Aodh::GnocchiAggregationByResourcesAlarm',
        'OS::Aodh::GnocchiResourcesAlarm',
        'OS::Aodh::PrometheusAlarm',
    )
    #: alarms asked for per page
    page = 500

    def list(self, conn, project_id):
        field, value = (
            ('project_id', project_id)
            if project_id
            else ('all_projects', 'true')
        )
        query = {
            'q.field': field,
            'q.op': 'eq',
            'q.value': value,
            'sort': 'alarm_id:asc',
            'limit': self.page,
        }
        found: list[dict] = []
        while True:
            # raw: openstacksdk has no Aodh (alarming) resources
            chunk = request(
                conn.alarming, 'GET', '/alarms', params=query
            ).json()
            found += chunk
            if len(chunk) < self.page:
                break
            query['marker'] = chunk[-1]['alarm_id']
        return owned(
            # no created_at: an alarm's timestamp moves at every update
            (
                item_ref(self.name, a, id_key='alarm_id', created_key='')
                for a in found
            ),
            project_id,
        )

    def delete(self, conn, ref):
        # raw: openstacksdk has no Aodh (alarming) resources
        request(conn.alarming, 'DELETE', f'/alarms/{ref.id}')
