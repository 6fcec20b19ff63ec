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

"""Manila: shares (their access rules go with them), snapshots, replicas,
share networks and share groups, and the project's access to private share
types (removed; the type stays).

Manila refuses to delete a share that still has snapshots or replicas other
than its active one, a share group with shares in it, and a share network
that shares or share groups still use: those go first. A share made from a
snapshot goes before that snapshot, as volumes do in Cinder. Lists go
through Manila's own admin filters (``all_tenants`` with ``project_id``),
which the SDK does not offer for every kind.
"""

from __future__ import annotations

from typing import Any, ClassVar
import weakref

from openstack import exceptions as sdk_exc
from openstack.shared_file_system.v2 import _proxy as manila_proxy

from osc_cascade.api.http import request
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.access import AccessKind
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.registry import register

#: replicas and share groups left the experimental API in 2.56 and 2.55
MICROVERSION = '2.56'


_ADAPTERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def manila(conn: Any) -> Any:
    """The SDK's Manila adapter, without a default microversion.

    Under OSC, python-manilaclient's plugin asks for the newest microversion
    it knows (2.98 for 6.3) and the SDK then refuses the whole service on a
    cloud that has less; the calls here name the microversion they need.
    """
    adapter = _ADAPTERS.get(conn)
    if adapter is None:
        adapter = conn.config.get_session_client(
            'shared-file-system', version='2', constructor=manila_proxy.Proxy
        )
        adapter._connection = conn
        _ADAPTERS[conn] = adapter
    return adapter


def listing(
    conn: Any, path: str, project_id: str | None, **params: Any
) -> list[dict[str, Any]]:
    query = {'all_tenants': 1, **params}
    if project_id:
        query['project_id'] = project_id
    key = path.strip('/').split('/')[0].replace('-', '_')
    return request(
        manila(conn), 'GET', path, params=query, microversion=MICROVERSION
    ).json()[key]


class _ManilaKind(ResourceKind):
    service_type = 'shared-file-system'
    error_statuses = frozenset({'error_deleting'})
    #: the SDK's name of the resource, for ``delete_<noun>``/``get_<noun>``
    noun: ClassVar[str]

    def make_ref(self, item: dict[str, Any], **attrs: Any) -> ResourceRef:
        return ResourceRef(
            kind=self.name,
            id=item['id'],
            name=item.get('name') or '',
            project_id=item.get('project_id') or '',
            attrs={k: v for k, v in attrs.items() if v},
        )

    def delete(self, conn, ref):
        getattr(manila(conn), f'delete_{self.noun}')(
            ref.id, ignore_missing=False
        )

    def status(self, conn, ref):
        found = getattr(manila(conn), f'get_{self.noun}')(ref.id)
        # found, so not gone, whatever the microversion shows of it
        return found.status or 'unknown'

    def is_in_use(self, exc):
        # "Invalid share: Share still has 1 dependent snapshots", "... has
        # replicas", "status must be available or error": 400s that pass
        # once what is before it in the plan is gone
        return super().is_in_use(exc) or (
            isinstance(exc, sdk_exc.BadRequestException)
            and 'Invalid share' in str(exc)
        )


@register
class Share(_ManilaKind):
    name = 'shared_file_system.share'
    noun = 'share'

    def list(self, conn, project_id):
        return owned(
            (
                self.make_ref(
                    s,
                    status=s.get('status'),
                    share_network_id=s.get('share_network_id'),
                    share_group_id=s.get('share_group_id'),
                    snapshot_id=s.get('snapshot_id'),
                    replicated=bool(s.get('replication_type')),
                )
                for s in listing(conn, '/shares/detail', project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        yield Edge(
            me,
            delete_of(
                ShareNetwork.name, ref.attrs.get('share_network_id', '')
            ),
        )
        yield Edge(
            me, delete_of(ShareGroup.name, ref.attrs.get('share_group_id', ''))
        )
        yield Edge(
            me, delete_of(ShareSnapshot.name, ref.attrs.get('snapshot_id', ''))
        )


@register
class ShareSnapshot(_ManilaKind):
    name = 'shared_file_system.snapshot'
    noun = 'share_snapshot'

    def list(self, conn, project_id):
        return owned(
            (
                self.make_ref(s, share_id=s.get('share_id'))
                for s in listing(conn, '/snapshots/detail', project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Share.name, ref.attrs.get('share_id', '')),
        )


@register
class ShareReplica(_ManilaKind):
    """A replica other than the active one, which is the share itself."""

    name = 'shared_file_system.replica'
    noun = 'share_replica'

    def list(self, conn, project_id):
        shares = [
            share
            for share in Share().list(conn, project_id)
            if share.attrs.get('replicated')
        ]
        # one listing per replicated share, made at once (kinds.calls)
        replicas = fan_out(
            lambda share: list(
                listing(
                    conn, '/share-replicas/detail', None, share_id=share.id
                )
            ),
            shares,
            service=self.service_type,
        )
        return [
            self.make_ref(
                {**r, 'project_id': share.project_id},
                share_id=share.id,
                state=r.get('replica_state'),
            )
            for share, found in zip(shares, replicas, strict=True)
            for r in found
        ]

    def primary_step(self, ref):
        if ref.attrs.get('state') == 'active':
            return None
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Share.name, ref.attrs['share_id']),
        )


@register
class ShareNetwork(_ManilaKind):
    name = 'shared_file_system.share_network'
    noun = 'share_network'
    error_statuses = frozenset({'error'})

    def list(self, conn, project_id):
        return owned(
            (
                self.make_ref(n)
                for n in listing(conn, '/share-networks/detail', project_id)
            ),
            project_id,
        )


@register
class ShareGroup(_ManilaKind):
    name = 'shared_file_system.share_group'
    noun = 'share_group'

    def list(self, conn, project_id):
        return owned(
            (
                self.make_ref(g, share_network_id=g.get('share_network_id'))
                for g in listing(conn, '/share-groups/detail', project_id)
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(
                ShareNetwork.name, ref.attrs.get('share_network_id', '')
            ),
        )


@register
class ShareTypeAccess(AccessKind):
    """The project's access to a private share type (the type is the
    admin's and stays). Manila's type list does not page."""

    name = 'shared_file_system.type_access'
    service_type = 'shared-file-system'

    def private(self, conn):
        found = request(
            manila(conn),
            'GET',
            '/types',
            params={'is_public': 'false'},
            microversion=MICROVERSION,
        ).json()['share_types']
        return (
            (t['id'], t.get('name') or '')
            for t in found
            if not t.get('share_type_access:is_public', True)
        )

    def members(self, conn, of):
        return [
            a['project_id']
            for a in request(
                manila(conn),
                'GET',
                f'/types/{of}/share_type_access',
                microversion=MICROVERSION,
            ).json()['share_type_access']
        ]

    def remove(self, conn, of, project_id):
        request(
            manila(conn),
            'POST',
            f'/types/{of}/action',
            json={'removeProjectAccess': {'project': project_id}},
            microversion=MICROVERSION,
        )
