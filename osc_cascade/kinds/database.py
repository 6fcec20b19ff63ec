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

"""Trove: database instances.

Trove's own instance list shows the caller's project only; an admin lists
any project's through the management API (``/mgmt/instances`` with
``project_id``), twenty a page by default (``marker``, a ``links`` next
entry). A replica goes before its source (Trove refuses the source while
it has replicas: "Detach replicas before deleting replica source", 403).
Instances of a Trove cluster are not listed: they go with their cluster,
which no kind covers yet.
"""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


@register
class Instance(ResourceKind):
    name = 'database.instance'
    service_type = 'database'
    sdk_get = 'database.get_instance'
    heat_types = ('OS::Trove::Instance',)

    def _listed(self, conn, project_id):
        query = {'deleted': 'false'}
        if project_id:
            query['project_id'] = project_id
        return pages(conn.database, '/mgmt/instances', 'instances', query)

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    i,
                    project_key='tenant_id',
                    created_key='created',
                    replica_of=(i.get('replica_of') or {}).get('id'),
                )
                for i in self._listed(conn, project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        source = ref.attrs.get('replica_of')
        if source:
            yield Edge(
                delete_of(self.name, ref.id), delete_of(self.name, source)
            )

    def delete(self, conn, ref):
        conn.database.delete_instance(ref.id, ignore_missing=False)

    def status(self, conn, ref):
        return conn.database.get_instance(ref.id).status

    def list_statuses(self, conn, project_id):
        return {
            i['id']: i.get('status') or ''
            for i in self._listed(conn, project_id)
        }

    def is_in_use(self, exc):
        # the source of replicas that are still going away
        return super().is_in_use(exc) or (
            isinstance(exc, sdk_exc.ForbiddenException)
            and 'replica' in str(exc)
        )
