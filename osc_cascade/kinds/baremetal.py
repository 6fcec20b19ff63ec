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

"""Ironic: bare metal nodes whose ``lessee`` or ``owner`` is the project.

A node is hardware, never deleted. One the project leases is released
(its ``lessee`` unset) once the project's server on it is gone. One the
project owns is its hardware record: it is kept, which keeps the project,
until an admin gives it another owner. Ironic pages nodes (``marker``/
``limit``, a ``next`` link) and shows the fields owner and lessee from
microversion 1.65 on.

A project's nodes are asked for with Ironic's ``project`` filter (owner or
lessee), never with ``owner`` or ``lessee``: a caller who may not list
every project's nodes (``baremetal:node:list_all``, a system reader's in
Ironic's project-scoped policies: an admin whose token is scoped to its own
project is not one) has those filters narrowed, silently, to its own
project's nodes, and a node the project owns would go unseen; ``project``
naming another project is refused (403) instead, and the cascade deletes
nothing.

Ironic's default policies let a ``project`` filter name another project
(``baremetal:node:list_all``) only to a token scoped to the system with
the role reader (admin and member imply it), or to its service role (the
role service in its service project); and they let a lessee be unset
only by a member of the system, the node's owner or its service. A
project-scoped admin is none of these. So Ironic is asked, and the lease
released, with a token of the same user scoped to the system
(``api.scopes.system_scoped``: clouds.yaml's auth, ``system_scope: all``)
wherever Keystone gives one; where it does not (the user has no role on
the system), with the client's own token, which Ironic serves if it is
its service role's or the project's own, and otherwise refuses (403): the
listing's refusal says in one line what the caller lacks, and nothing is
deleted, the project kept.
"""

from __future__ import annotations

from typing import Any, ClassVar

from osc_cascade.api import scopes
from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.compute import Server
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register

#: the filters and fields of owner and lessee
MICROVERSION = '1.65'
#: (not created_at: Ironic's node list refuses it, 400 "not a valid field")
FIELDS = 'uuid,name,owner,lessee,instance_uuid'


def ironic(conn: Any) -> Any:
    """Ironic's proxy with the user's system-scoped token, else with the
    client's (see the module)."""
    return (scopes.system_scoped(conn) or conn).baremetal


class _NodeKind(ResourceKind):
    service_type = 'baremetal'
    synchronous_delete = True
    forbidden_hint = (
        "Ironic lists another project's nodes only to a token scoped to "
        'the system (which Keystone gives the user only with a role on it: '
        '`openstack role add --system all --user <user> member`) or to its '
        'service role'
    )
    #: the node's field that names the project: ``owner`` or ``lessee``
    role: ClassVar[str]

    def nodes(self, conn: Any, project_id: str | None) -> list[dict]:
        query = {'fields': FIELDS}
        if project_id:
            # owner or lessee; refused, not narrowed (see the module)
            query['project'] = project_id
        return [
            n
            for n in pages(
                ironic(conn),
                '/nodes',
                'nodes',
                query,
                microversion=MICROVERSION,
            )
            # project: the owner or the lessee; this kind's is its role
            if n.get(self.role)
            and n[self.role] == (project_id or n[self.role])
        ]

    def list(self, conn, project_id):
        return owned(
            (
                item_ref(
                    self.name,
                    n,
                    id_key='uuid',
                    project_key=self.role,
                    instance_uuid=n.get('instance_uuid'),
                    # not owner=: item_ref's owner is the ref's project
                    node_owner=n.get('owner'),
                )
                for n in self.nodes(conn, project_id)
                if self.wanted(n)
            ),
            project_id,
        )

    def wanted(self, node: dict) -> bool:
        return True


@register
class NodeLease(_NodeKind):
    """The project's lease of a node: its "delete" unsets the lessee."""

    name = 'baremetal.node_lease'
    role = 'lessee'

    def wanted(self, node):
        # a node the project also owns is kept (baremetal.node)
        return node.get('owner') != node['lessee']

    def relations(self, ref, inventory):
        server = ref.attrs.get('instance_uuid')
        if server:
            yield Edge(
                delete_of(Server.name, server), delete_of(self.name, ref.id)
            )

    def delete(self, conn, ref):
        # raw: lessee needs MICROVERSION, and the SDK's patch_node takes
        # --os-baremetal-api-version's first (Resource._get_microversion)
        request(
            ironic(conn),
            'PATCH',
            f'/nodes/{ref.id}',
            json=[{'op': 'remove', 'path': '/lessee'}],
            microversion=MICROVERSION,
        )


@register
class Node(_NodeKind):
    """A node the project owns: kept, with the way to let it go."""

    name = 'baremetal.node'
    role = 'owner'

    def primary_step(self, ref):
        return resource.keep(
            ref,
            'the project owns this bare metal node (its hardware record, '
            'never deleted): give it another owner with `openstack '
            f'baremetal node set --owner <project> {ref.id}` or unset it',
        )
