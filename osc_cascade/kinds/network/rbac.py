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

"""Neutron's RBAC policies: the shares of a network, a security group, an
address group, a QoS policy, a subnet pool or an address scope with other
projects, each deleted before what it shares."""

from __future__ import annotations

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import delete_of, owned
from osc_cascade.kinds.network.common import _NeutronKind
from osc_cascade.kinds.network.core import Network, SecurityGroup
from osc_cascade.kinds.registry import register


@register
class RBACPolicy(_NeutronKind):
    name = 'network.rbac_policy'
    heat_types = ('OS::Neutron::RBACPolicy',)
    sdk_delete = 'delete_rbac_policy'
    _object_kinds = {
        'network': Network.name,
        'security_group': SecurityGroup.name,
        'address_group': 'network.address_group',
        # their shares too Neutron keeps while the target uses the object
        'qos_policy': 'network.qos_policy',
        'subnetpool': 'network.subnet_pool',
        'address_scope': 'network.address_scope',
    }

    def list(self, conn, project_id):
        return owned(
            (
                self.ref(
                    p,
                    object_type=p.object_type,
                    object_id=p.object_id,
                    target=p.target_project_id,
                )
                for p in conn.network.rbac_policies(project_id=project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        kind = self._object_kinds.get(ref.attrs.get('object_type'))
        if kind:
            # the share is what another project's use of it goes through
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(kind, ref.attrs.get('object_id')),
                serves=True,
            )
