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
themselves (children before their parent, each after all it owns).

The users and credentials are read through ``api.keystone``: a list that
Keystone's list_limit truncated is narrowed until it is complete, or
refused, never taken for the whole (the SDK drops the flag that says so).
"""

from __future__ import annotations

import logging
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import keystone
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind, delete_of
from osc_cascade.kinds.registry import register

LOG = logging.getLogger(__name__)


def users_of(conn: Any, project_id: str) -> set[str]:
    """The users with a role on the project, directly or through a
    group: those who can hold what a user owns for it. The query is as
    narrow as Keystone allows (the project, effective roles): truncated,
    it is refused."""
    found = keystone.role_assignments(
        conn, **{'scope.project.id': project_id, 'effective': True}
    )
    return {
        a['user']['id']
        for a in keystone.complete(
            f'listing the users with a role on project {project_id}', found
        )
        if a.get('user')
    }


def all_users(conn: Any) -> dict[str, str]:
    """Every user of the cloud, ID to name. A listing truncated by
    Keystone's list_limit is asked again one domain at a time; a domain
    whose listing is still truncated is refused."""
    found = keystone.users(conn)
    if found.truncated:
        domains = keystone.complete(
            'listing the domains (to list their users one by one)',
            keystone.domains(conn),
        )
        users = [
            user
            for domain in domains
            for user in keystone.complete(
                f'listing the users of domain {domain["id"]}',
                keystone.users(conn, domain_id=domain['id']),
            )
        ]
    else:
        users = found.items
    return {u['id']: u.get('name') or '' for u in users}


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
            else all_users(conn)
        )
        refs = []
        for user_id in sorted(names):
            try:
                found = keystone.application_credentials(conn, user_id)
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
            creds = keystone.complete(
                f'listing the application credentials of user {user_id}',
                found,
            )
            refs.extend(
                ResourceRef(
                    kind=self.name,
                    id=cred['id'],
                    name=cred.get('name') or '',
                    project_id=cred.get('project_id') or '',
                    attrs={'user_id': user_id},
                )
                for cred in creds
                if project_id is None or cred.get('project_id') == project_id
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
