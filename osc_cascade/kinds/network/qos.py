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
"""QoS policies, after the ports, networks and floating IPs using them;
one that another project uses is kept (Neutron refuses its delete)."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of
from osc_cascade.kinds.network.common import (
    _UsedElsewhere,
    neutron_items,
    neutron_project,
)
from osc_cascade.kinds.network.core import FloatingIP, Network, Port
from osc_cascade.kinds.registry import register

#: what may use a policy: kind, list path, JSON key, how a reason names it
_USERS = (
    (Port.name, '/ports', 'ports', 'port'),
    (Network.name, '/networks', 'networks', 'network'),
    (FloatingIP.name, '/floatingips', 'floatingips', 'floating IP'),
)


@register
class QoSPolicy(_UsedElsewhere):
    """A QoS policy (its rules go with it), after what of the project uses
    it; kept while another project's port, network or floating IP does."""

    name = 'network.qos_policy'
    extension = 'qos'
    sdk_list = 'qos_policies'
    sdk_delete = 'delete_qos_policy'
    elsewhere_says = '{user} of project {project} uses it'

    def refs(self, conn, items, project_id):
        policies = list(items)
        if not policies or project_id is None:
            return [self.ref(p) for p in policies]
        ids = {p.id for p in policies}
        # who uses them: the project's, and those of the projects a policy
        # is shared with (RBAC): Neutron cannot filter on qos_policy_id
        # (400), so their lists are read whole; every project's where one
        # is shared with all. An admin who set another project's port to
        # a policy shared with nobody is not seen: Neutron refuses the
        # delete then, and the run stops there
        users: dict[tuple[str, str], tuple[str, str, str]] = {}
        for scope in self._projects_that_may_use(conn, policies, project_id):
            for kind, path, key, label in _USERS:
                for item in neutron_items(conn, path, key, scope):
                    if item.get('qos_policy_id') in ids:
                        users[kind, item['id']] = (
                            item['qos_policy_id'],
                            label,
                            neutron_project(item),
                        )
        own: dict[str, list[list[str]]] = {}
        elsewhere: dict[str, list[list[str]]] = {}
        for (kind, id_), (policy, label, owner) in sorted(users.items()):
            if owner == project_id:
                own.setdefault(policy, []).append([kind, id_])
            else:
                elsewhere.setdefault(policy, []).append(
                    [f'{label} {id_}', owner]
                )
        return [
            self.ref(
                p,
                used_by=own.get(p.id, []),
                elsewhere=elsewhere.get(p.id, []),
            )
            for p in policies
        ]

    @staticmethod
    def _projects_that_may_use(conn, policies, project_id) -> list:
        """The project, and each project a policy is shared with; [None]
        (every project's) where one is shared with all."""
        if any(p.is_shared for p in policies):
            return [None]
        ids = {p.id for p in policies}
        targets = {
            r['target_tenant']
            for r in neutron_items(
                conn,
                '/rbac-policies',
                'rbac_policies',
                None,
                object_type='qos_policy',
            )
            if r.get('object_id') in ids
        } - {project_id}
        if '*' in targets:
            return [None]
        return [project_id, *sorted(targets)]

    def relations(self, ref, inventory):
        for kind, id_ in ref.attrs.get('used_by', []):
            yield Edge(delete_of(kind, id_), delete_of(self.name, ref.id))
