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

A share the project offered to another project (a share transfer, from
2.77 on: the share is ``awaiting_transfer``, which Manila refuses to
delete) has the offer withdrawn first (``ShareTransfer``). Shares and
their snapshots are read again before each delete (``reread``): an
accepted transfer gives them to the other project (db ``transfer_accept``
moves the share, and its snapshots when asked), and they are kept then.
"""

from __future__ import annotations

import types
from typing import Any, ClassVar
import weakref

from openstack import exceptions as sdk_exc
from openstack.shared_file_system.v2 import _proxy as manila_proxy

from osc_cascade.api.http import request
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.access import AccessKind
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.network.common import keep_if_used
from osc_cascade.kinds.registry import register

#: replicas and share groups left the experimental API in 2.56 and 2.55
MICROVERSION = '2.56'
#: share transfers came with 2.77
TRANSFER_MICROVERSION = '2.77'


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
    # raw: at the microversion it needs (see manila())
    return request(
        manila(conn), 'GET', path, params=query, microversion=MICROVERSION
    ).json()[key]


class _ManilaKind(ResourceKind):
    service_type = 'shared-file-system'
    error_statuses = frozenset({'error_deleting'})

    def make_ref(self, item: dict[str, Any], **attrs: Any) -> ResourceRef:
        return ResourceRef(
            kind=self.name,
            id=item['id'],
            name=item.get('name') or '',
            project_id=item.get('project_id') or '',
            attrs={k: v for k, v in attrs.items() if v},
        )

    # raw, at MICROVERSION: the SDK's delete_share_replica and
    # get_share_replica name none, and below 2.11 Manila has no route for
    # replicas (404, which was taken for "gone": the share's delete was
    # then refused, 409 "has replicas"; found on the minicloud)
    def delete(self, conn, ref):
        # raw: at the microversion it needs (see manila())
        request(
            manila(conn),
            'DELETE',
            f'/{self.collection[0]}/{ref.id}',
            microversion=MICROVERSION,
        )

    def status(self, conn, ref):
        path, key = self.collection
        # raw: at the microversion it needs (see manila()); a 404 is the
        # executor's "gone"
        found = request(
            manila(conn), 'GET', f'/{path}/{ref.id}', microversion=MICROVERSION
        ).json()[key]
        return found.get('status') or 'unknown'

    #: the URL collection and the answer's key of one (``read``, ``delete``)
    collection: ClassVar[tuple[str, str]] = ('', '')

    def read(self, conn, ref):
        # raw, at a microversion that shows the project (a snapshot's
        # from 2.17 on)
        path, key = self.collection
        try:
            # raw: at the microversion it needs (see manila())
            found = request(
                manila(conn),
                'GET',
                f'/{path}/{ref.id}',
                microversion=MICROVERSION,
            ).json()[key]
        except sdk_exc.NotFoundException:
            return GONE
        return types.SimpleNamespace(
            project_id=found.get('project_id') or '',
            status=found.get('status') or '',
            updated_at=found.get('updated_at') or '',
        )

    def is_in_use(self, exc):
        # "Invalid share: Share still has 1 dependent snapshots", "status
        # must be available or error": refusals that pass once what is
        # before it in the plan is gone. Manila's share delete answers its
        # InvalidShare 403 (seen on the minicloud); 400 kept for the
        # answers of the other calls that say "Invalid share"
        return super().is_in_use(exc) or (
            isinstance(
                exc,
                (sdk_exc.BadRequestException, sdk_exc.ForbiddenException),
            )
            and 'Invalid share' in str(exc)
        )


@register
class Share(_ManilaKind):
    name = 'shared_file_system.share'
    reread = True
    collection = ('shares', 'share')
    offered_statuses = frozenset({'awaiting_transfer'})
    # manila/share/api.py delete: only from available, error or inactive;
    # these failed states stay until an admin resets them
    stuck_statuses = frozenset(
        {
            'error_deleting',
            'manage_error',
            'unmanage_error',
            'extending_error',
            'shrinking_error',
            'shrinking_possible_data_loss_error',
            'reverting_error',
        }
    )
    # InvalidShare: 403 (manila/api/v2/shares.py delete)
    stuck_refusals = frozenset({400, 403})
    deletable_when = (
        'Manila deletes a share only when it is available, error or inactive'
    )
    reset_command = 'openstack share set --status error'
    force_action = 'reset_share_state'

    def delete(self, conn, ref):
        # Manila deletes a share of a share group only when the request
        # names the group (400 otherwise; found on the minicloud)
        group = ref.attrs.get('share_group_id')
        # raw: at the microversion it needs (see manila())
        request(
            manila(conn),
            'DELETE',
            f'/shares/{ref.id}',
            params={'share_group_id': group} if group else None,
            microversion=MICROVERSION,
        )

    def force_stuck(self, conn, step):
        # the admin's reset_status (manila/api/v2/shares.py, 2.7 on)
        # raw: at the microversion it needs (see manila())
        request(
            manila(conn),
            'POST',
            f'/shares/{step.target.id}/action',
            json={'reset_status': {'status': 'error'}},
            microversion=MICROVERSION,
        )

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
                    updated_at=s.get('updated_at')
                    if s.get('status') in self.stuck_statuses
                    else None,
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
    reread = True
    collection = ('snapshots', 'snapshot')

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
    collection = ('share-replicas', 'share_replica')

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
    collection = ('share-networks', 'share_network')
    error_statuses = frozenset({'error'})

    def list(self, conn, project_id):
        networks = list(listing(conn, '/share-networks/detail', project_id))
        # one listing of shares and one of groups per network, made at
        # once (kinds.calls): what another project has on it keeps it
        users = fan_out(
            lambda n: self.users(conn, n),
            networks,
            service=self.service_type,
        )
        return owned(
            (
                self.make_ref(n, used_by=used)
                for n, used in zip(networks, users, strict=True)
            ),
            project_id,
        )

    def users(self, conn: Any, network: dict[str, Any]) -> list[list[str]]:
        """The shares and share groups of other projects on the network:
        an admin may make one on any project's (Manila looks a share
        network up for an admin in every project), and Manila refuses the
        network's delete while any is on it (409, "it has 1 share(s)";
        seen on the minicloud). A caller who may not list every project's
        sees its own alone, and then the delete's refusal keeps the
        project."""
        if self.scoped:
            return []
        return sorted(
            [what, item['project_id']]
            for what, path in (
                ('share', '/shares/detail'),
                ('share group', '/share-groups/detail'),
            )
            for item in listing(
                conn, path, None, share_network_id=network['id']
            )
            if item.get('project_id') != network.get('project_id')
        )

    def primary_step(self, ref):
        kept = keep_if_used(
            ref,
            ref.attrs.get('used_by'),
            'a {user} of project {project} is on it{more}: Manila refuses '
            "its delete while it is, and that project's share is not this "
            "cascade's to delete",
        )
        return kept or super().primary_step(ref)


@register
class ShareGroup(_ManilaKind):
    name = 'shared_file_system.share_group'
    # a failed delete leaves a group in 'error' (manila/share/manager.py
    # delete_share_group; seen on the minicloud), not 'error_deleting'
    error_statuses = frozenset({'error_deleting', 'error'})
    collection = ('share-groups', 'share_group')

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
class ShareTransfer(ResourceKind):
    """A share the project offered to another project (``share transfer
    create``), not yet accepted: withdrawn (its delete, which sets the
    share back to ``available``) before the share and its snapshots go.
    An admin lists every project's with ``all_tenants``; the
    ``source_project_id`` filter is a column of the transfer, and checked
    again here. A Manila older than 2.77 has none (404: nothing)."""

    name = 'shared_file_system.share_transfer'
    service_type = 'shared-file-system'
    synchronous_delete = True

    def list(self, conn, project_id):
        query: dict[str, Any] = {'all_tenants': 1}
        if project_id:
            query['source_project_id'] = project_id
        try:
            # raw: at the microversion it needs (see manila())
            found = request(
                manila(conn),
                'GET',
                '/share-transfers/detail',
                params=query,
                microversion=TRANSFER_MICROVERSION,
            ).json()['transfers']
        except sdk_exc.HttpException as exc:
            if exc.status_code not in (404, 406):
                raise
            return []  # no share transfers before 2.77
        return owned(
            (
                ResourceRef(
                    kind=self.name,
                    id=t['id'],
                    name=t.get('name') or '',
                    project_id=t.get('source_project_id') or '',
                    attrs={'share_id': t.get('resource_id')},
                    created_at=t.get('created_at') or '',
                )
                for t in found
                if t.get('resource_type', 'share') == 'share'
                and not t.get('accepted')
            ),
            project_id,
        )

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        share_id = ref.attrs.get('share_id', '')
        yield Edge(me, delete_of(Share.name, share_id))
        for snap in inventory.where(ShareSnapshot.name, share_id=share_id):
            yield Edge(me, delete_of(ShareSnapshot.name, snap.id))

    def delete(self, conn, ref):
        # raw: at the microversion it needs (see manila())
        request(
            manila(conn),
            'DELETE',
            f'/share-transfers/{ref.id}',
            microversion=TRANSFER_MICROVERSION,
        )

    def status(self, conn, ref):
        # raw: at the microversion it needs (see manila())
        request(
            manila(conn),
            'GET',
            f'/share-transfers/{ref.id}',
            microversion=TRANSFER_MICROVERSION,
        )
        return 'offered'  # a 404 is the executor's "gone"


@register
class ShareTypeAccess(AccessKind):
    """The project's access to a private share type (the type is the
    admin's and stays). Manila's type list does not page."""

    name = 'shared_file_system.type_access'
    service_type = 'shared-file-system'

    def private(self, conn):
        # raw: at the microversion it needs (see manila())
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
            # raw: at the microversion it needs (see manila())
            for a in request(
                manila(conn),
                'GET',
                f'/types/{of}/share_type_access',
                microversion=MICROVERSION,
            ).json()['share_type_access']
        ]

    def remove(self, conn, of, project_id):
        # raw: at the microversion it needs (see manila())
        request(
            manila(conn),
            'POST',
            f'/types/{of}/action',
            json={'removeProjectAccess': {'project': project_id}},
            microversion=MICROVERSION,
        )
