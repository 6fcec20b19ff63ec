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

"""What a user owns outside a project: its Nova keypairs (per user, in
every region with Nova), application credentials, credentials (EC2 and
the others) and the trusts it made; and the user itself, after them all.

Their scope is ``USER``: ``user delete --cascade`` and the domain's
cascade list them by user (the ``project_id`` of each is its user's ID,
the owner the planner checks). A trust that a Heat stack or a Magnum
cluster acts with is kept, and keeps its user: Keystone deletes a user's
trusts with the user (``workflows.users`` finds who uses one).
"""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import keystone, keystone_users
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import USER, ResourceKind, delete_of
from osc_cascade.kinds.calls import retried
from osc_cascade.kinds.registry import register


class _UserKind(ResourceKind):
    scope = USER
    synchronous_delete = True

    def _ref(self, user_id: str, id_: str, name: str, **attrs: Any):
        return ResourceRef(
            kind=self.name,
            id=id_,
            name=name or '',
            project_id=user_id,
            attrs={'user_id': user_id, **attrs},
        )

    @staticmethod
    def _listed(what: str, call: Any, conn: Any, user_id: str) -> list:
        """Keystone's whole list of the user's ``what`` (a truncated one
        is refused: ``keystone.complete``)."""
        return keystone.complete(
            f'listing the {what} of user {user_id}',
            retried(call, conn, user_id),
        )


@register
class UserKeypair(_UserKind):
    """A keypair of the user, in one region (Nova keeps keypairs per user
    and per region, and nobody tells it when a user goes). An admin lists
    another user's with ``user_id`` (microversion 2.10)."""

    name = 'user.keypair'
    service_type = 'compute'

    def list(self, conn, project_id):
        if project_id is None:
            return []  # never an orphan search's
        try:
            found = list(retried(conn.compute.keypairs, user_id=project_id))
        except sdk_exc.NotFoundException:
            return []  # Nova does not know the user: none
        return [
            self._ref(project_id, f'{project_id}/{k.name}', k.name)
            for k in found
        ]

    def delete(self, conn, ref):
        conn.compute.delete_keypair(
            ref.name, ignore_missing=False, user_id=ref.attrs['user_id']
        )


@register
class UserApplicationCredential(_UserKind):
    name = 'user.application_credential'
    service_type = 'identity'

    def list(self, conn, project_id):
        if project_id is None:
            return []
        found = self._listed(
            'application credentials',
            keystone.application_credentials,
            conn,
            project_id,
        )
        return [
            self._ref(
                project_id,
                c['id'],
                c.get('name'),
                project=c.get('project_id') or '',
            )
            for c in found
        ]

    def delete(self, conn, ref):
        conn.identity.delete_application_credential(
            ref.attrs['user_id'], ref.id, ignore_missing=False
        )


@register
class UserCredential(_UserKind):
    """A credential of the user: EC2 keys, TOTP secrets, certificates."""

    name = 'user.credential'
    service_type = 'identity'

    def list(self, conn, project_id):
        if project_id is None:
            return []
        found = self._listed(
            'credentials', keystone_users.credentials, conn, project_id
        )
        return [
            self._ref(
                project_id,
                c['id'],
                c.get('type') or '',
                project=c.get('project_id') or '',
            )
            for c in found
            # Keystone filters by user; a Keystone that ignored the
            # filter answers others' too
            if c.get('user_id') == project_id
        ]

    def delete(self, conn, ref):
        keystone_users.delete_credential(conn, ref.id)


@register
class UserTrust(_UserKind):
    """A trust the user made (trustor). One that a Heat stack or a Magnum
    cluster acts with (``used_by``, found by ``workflows.users``) is
    kept, and keeps the user: Keystone deletes the user's trusts with
    it, and the stack or cluster would fail."""

    name = 'user.trust'
    service_type = 'identity'

    def list(self, conn, project_id):
        if project_id is None:
            return []
        found = self._listed(
            'trusts', keystone_users.trusts_of, conn, project_id
        )
        return [
            self._ref(
                project_id,
                t['id'],
                '',
                project=t.get('project_id') or '',
                trustee=t.get('trustee_user_id') or '',
            )
            for t in found
            if t.get('trustor_user_id') == project_id
        ]

    def primary_step(self, ref):
        used_by = ref.attrs.get('used_by')
        if used_by:
            return resource.keep(
                ref,
                f'{used_by} acts with this trust (Keystone deletes it with '
                'the user): the user is not deleted',
            )
        return resource.delete(ref)

    def delete(self, conn, ref):
        try:
            keystone_users.delete_trust(conn, ref.id)
        except sdk_exc.NotFoundException:
            pass  # expired or revoked meanwhile


@register
class User(_UserKind):
    """A user of the cascade, after all it owns. Not discovered: the
    workflow adds the users it was asked to delete."""

    name = 'identity.user'
    service_type = 'identity'

    def list(self, conn, project_id):
        return []

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for other in inventory:
            if other.project_id == ref.id and other.key != ref.key:
                yield Edge(delete_of(other.kind, other.id), me)

    def delete(self, conn, ref):
        keystone_users.delete_user(conn, ref.id)
