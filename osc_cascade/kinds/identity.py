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

"""Keystone: application credentials bound to the project, and the projects
themselves (children before their parent, each after all it owns)."""

from __future__ import annotations

import logging
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import ResourceKind, delete_of
from osc_cascade.kinds.registry import register

LOG = logging.getLogger(__name__)


def users_of(conn: Any, project_id: str) -> set[str]:
    """The users with a role on the project, directly or through a
    group: those who can hold what a user owns for it."""
    return {
        a.user['id']
        for a in conn.identity.role_assignments(
            scope_project_id=project_id, effective=True
        )
        if a.user
    }


@register
class ApplicationCredential(ResourceKind):
    name = 'identity.application_credential'
    service_type = 'identity'
    synchronous_delete = True

    def list(self, conn, project_id):
        # Application credentials belong to users; Keystone leaves those
        # bound to a deleted project behind. The users who can hold one are
        # those with a role on the project; once the project is gone, only
        # asking every user finds them.
        names = (
            {u: '' for u in users_of(conn, project_id)}
            if project_id is not None
            else {u.id: u.name for u in conn.identity.users()}
        )
        refs = []
        for user_id in sorted(names):
            try:
                creds = list(
                    conn.identity.application_credentials(user=user_id)
                )
            except sdk_exc.NotFoundException:
                continue  # deleted while we looked
            except sdk_exc.ForbiddenException:
                # Keystone's policy may keep a user's credentials private
                # even from admins (service users): say so, go on
                LOG.warning(
                    'application credentials of user %s (%s) could '
                    'not be listed (HTTP 403)',
                    names[user_id],
                    user_id,
                )
                continue
            refs.extend(
                self.ref(cred, user_id=user_id)
                for cred in creds
                if project_id is None or cred.project_id == project_id
            )
        return refs

    def delete(self, conn, ref):
        conn.identity.delete_application_credential(
            ref.attrs['user_id'], ref.id, ignore_missing=False
        )


@register
class Project(ResourceKind):
    """A project of the cascade; its own ``project_id`` is itself.

    Not discovered like the others: the cascade adds the projects it was
    asked to delete (and their subtree, when asked) to the inventory.
    """

    name = 'identity.project'
    service_type = 'identity'
    synchronous_delete = True

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for other in inventory:
            if other.project_id == ref.id and other.key != ref.key:
                yield Edge(delete_of(other.kind, other.id), me)
        parent = inventory.get(self.name, ref.attrs.get('parent_id'))
        if parent is not None:
            yield Edge(me, delete_of(self.name, parent.id))

    def delete(self, conn, ref):
        conn.identity.delete_project(ref.id, ignore_missing=False)
