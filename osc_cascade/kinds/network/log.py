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

"""Network logs: a log goes with what it logs, and before it."""

from __future__ import annotations

from osc_cascade.api.http import request
from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of, owned
from osc_cascade.kinds.network.common import _ExtensionKind
from osc_cascade.kinds.network.core import Port, SecurityGroup
from osc_cascade.kinds.network.fwaas import FirewallGroup
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


@register
class NetworkLog(_ExtensionKind):
    """A network log object (no SDK resource: raw calls, page by page).
    It goes before the security group, firewall group or port it logs
    (Neutron would drop it with them: deleting it first is the same, and
    leaves nothing half-logged)."""

    name = 'network.log'
    extension = 'logging'
    _logs_kinds = {
        'security_group': SecurityGroup.name,
        'firewall_group': FirewallGroup.name,
    }

    def list(self, conn, project_id):
        if self.extension not in self.neutron_extensions(conn):
            return []
        query = {'project_id': project_id} if project_id else {}
        return owned(
            (
                item_ref(
                    self.name,
                    log,
                    resource_type=log.get('resource_type'),
                    resource_id=log.get('resource_id'),
                    target_id=log.get('target_id'),
                )
                for log in pages(conn.network, '/log/logs', 'logs', query)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        kind = self._logs_kinds.get(ref.attrs.get('resource_type'))
        if kind and ref.attrs.get('resource_id'):
            yield Edge(me, delete_of(kind, ref.attrs['resource_id']))
        if ref.attrs.get('target_id'):
            yield Edge(me, delete_of(Port.name, ref.attrs['target_id']))

    def delete(self, conn, ref):
        # raw: openstacksdk (4.16 to 4.22) has no network logs
        request(conn.network, 'DELETE', f'/log/logs/{ref.id}')
