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
themselves (children before their parent, each after all it owns); the
users whose default project it is, and Heat's stack-domain users of its
stacks, are shown (report-only keeps): users are not the project's.

The users and credentials are read through ``api.keystone``: a list that
Keystone's list_limit truncated is narrowed until it is complete, or
refused, never taken for the whole (the SDK drops the flag that says so).
"""

from __future__ import annotations

import logging
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import keystone
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind, delete_of
from osc_cascade.kinds.calls import fan_out, retried
from osc_cascade.kinds.registry import register

LOG = logging.getLogger(__name__)


def users_of(conn: Any, project_id: str) -> set[str]:
    """The users with a role on the project, directly or through a
    group: those who can hold what a user owns for it. The query is as
    narrow as Keystone allows (the project, effective roles): truncated,
    it is refused."""
    found = retried(
        keystone.role_assignments,
        conn,
        **{'scope.project.id': project_id, 'effective': True},
    )
    return {
        a['user']['id']
        for a in keystone.complete(
            f'listing the users with a role on project {project_id}', found
        )
        if a.get('user')
    }


def every_user(conn: Any, *, partial: bool = False) -> list[dict[str, Any]]:
    """Every user of the cloud, as Keystone lists them. A listing
    truncated by Keystone's list_limit is asked again one domain at a
    time; a domain whose listing is still truncated is refused, or, with
    ``partial`` (for what is only reported), taken as shown with a
    warning."""
    found = retried(keystone.users, conn)
    if not found.truncated:
        return found.items
    domains = keystone.complete(
        'listing the domains (to list their users one by one)',
        retried(keystone.domains, conn),
    )
    return [
        user
        for domain in domains
        for user in _users_of_domain(conn, domain['id'], partial=partial)
    ]


def _users_of_domain(
    conn: Any, domain_id: str, *, partial: bool
) -> list[dict[str, Any]]:
    what = f'listing the users of domain {domain_id}'
    found = retried(keystone.users, conn, domain_id=domain_id)
    if found.truncated and partial:
        LOG.warning(
            "%s was truncated by Keystone's list_limit (%d shown): the "
            'users it leaves out are not reported',
            what,
            len(found.items),
        )
        return found.items
    return keystone.complete(what, found)


def all_users(conn: Any) -> dict[str, str]:
    """Every user of the cloud, ID to name (``every_user``)."""
    return {u['id']: u.get('name') or '' for u in every_user(conn)}


@register
class ApplicationCredential(ResourceKind):
    name = 'identity.application_credential'
    service_type = 'identity'
    synchronous_delete = True
    # and needed less: one acts with its user's roles on the project now,
    # and the drain without admin removes those roles
    needs_admin = (
        "only a credential's user may list it (it acts with that user's "
        'roles on the project, which the drain removes)'
    )

    def list(self, conn, project_id):
        # Application credentials belong to users; Keystone leaves those
        # bound to a deleted project behind. The users who can hold one are
        # those with a role on the project; once the project is gone, only
        # asking every user finds them.
        if project_id is None:
            names = all_users(conn)
        else:
            try:
                names = {u: '' for u in users_of(conn, project_id)}
            except sdk_exc.NotFoundException:
                # the project is gone (the settle after its delete):
                # Keystone no longer knows its roles, every user is asked
                names = all_users(conn)

        def creds_of(user_id):
            """The user's credentials, [] where they cannot be listed."""
            try:
                found = retried(
                    keystone.application_credentials, conn, user_id
                )
            except sdk_exc.NotFoundException:
                return []  # deleted while we looked
            except sdk_exc.ForbiddenException:
                # Keystone's policy may keep a user's credentials private
                # even from admins (service users): say so, go on
                LOG.warning(
                    'application credentials of user %s (%s) could '
                    'not be listed (HTTP 403)',
                    names[user_id],
                    user_id,
                )
                return []
            return keystone.complete(
                f'listing the application credentials of user {user_id}',
                found,
            )

        users = sorted(names)
        # one listing per user, made at once (kinds.calls)
        return [
            ResourceRef(
                kind=self.name,
                id=cred['id'],
                name=cred.get('name') or '',
                project_id=cred.get('project_id') or '',
                attrs={'user_id': user_id},
            )
            for user_id, creds in zip(
                users,
                fan_out(creds_of, users, service=self.service_type),
                strict=True,
            )
            for cred in creds
            if project_id is None or cred.get('project_id') == project_id
        ]

    def delete(self, conn, ref):
        conn.identity.delete_application_credential(
            ref.attrs['user_id'], ref.id, ignore_missing=False
        )


class _ReportedUser(ResourceKind):
    """Users are listed, never deleted: a report-only keep each (it keeps
    nothing alive); the project's cascade goes on without them."""

    service_type = 'identity'
    synchronous_delete = True
    needs_admin = "the users of other domains are not shown (only reported)"

    def _users(self, conn: Any) -> list[dict[str, Any]]:
        """Every user of the cloud, listed once per run and connection
        (a recursive cascade asks for each project)."""
        return self.facts.get(
            'every user', conn, lambda: every_user(conn, partial=True)
        )

    def _ref(
        self, user: dict[str, Any], project_id: str, **attrs: Any
    ) -> ResourceRef:
        return ResourceRef(
            kind=self.name,
            id=user['id'],
            name=user.get('name') or '',
            project_id=project_id,
            attrs={'domain_id': user.get('domain_id') or '', **attrs},
        )

    def delete(self, conn, ref):
        raise NotImplementedError(f'{self.name} is never deleted')


@register
class UserDefaultProject(_ReportedUser):
    """A user whose default project is the project. Keystone keeps a
    deleted project as the user's ``default_project_id``, and a login that
    does not name a project then fails to scope: shown so that someone
    gives the user another one. Keystone's user list has no filter by
    default project, so every user is listed (once per run) and filtered
    here; a listing Keystone truncated even per domain is reported as far
    as it goes, with a warning."""

    name = 'identity.user_default_project'

    def list(self, conn, project_id):
        if project_id is None:
            return []  # a user is nobody's orphan
        return [
            self._ref(user, project_id)
            for user in self._users(conn)
            if user.get('default_project_id') == project_id
        ]

    def primary_step(self, ref):
        return resource.keep(
            ref,
            'a user whose default project is the project: the user is not '
            "the project's and stays; give it another default project "
            f'(`openstack user set --project <project> {ref.id}`)',
            blocking=False,
        )


#: Heat's description of the project it makes for a stack's users
#: (``heat_keystoneclient.create_stack_domain_project``)
STACK_USER_PROJECT = 'Heat stack user project'


@register
class StackDomainUser(_ReportedUser):
    """Heat's stack-domain users of the project's stacks.

    For each stack, Heat makes a project in its stack-user domain
    (``stack_user_domain_id`` in heat.conf), named ``<project id>-<stack
    id>`` cut at 64 characters and described "Heat stack user project",
    and creates the users of the stack's resources (wait conditions,
    software deployments, ``OS::Heat::StackUser``) in that domain with
    that project as their default project (heat's
    ``heat_keystoneclient.create_stack_domain_project`` and
    ``create_stack_domain_user``). So they are identified reliably: the
    projects whose name starts with the project's ID and a dash and
    whose description is Heat's, then the users of those projects'
    domains whose default project is one of them.

    Heat deletes them, and their project, with the stack; they outlive
    it when the stack is abandoned (``cluster force-delete``). Shown,
    never deleted: users are not the project's."""

    name = 'identity.stack_domain_user'

    def list(self, conn, project_id):
        if project_id is None:
            return []
        prefix = f'{project_id}-'
        # case-insensitive: Keystone's SQL filter, applied before its
        # list_limit cuts the list. A case-sensitive name__startswith is
        # its controller's, applied after the cut: Keystone 30.0.0 cuts
        # in ID order first, so a stack's project past the first few of
        # the cloud was missed, with its user (an empty answer,
        # "truncated"). Read page after page where Keystone pages.
        found = retried(keystone.all_projects, conn, name__istartswith=prefix)
        if found.truncated:
            LOG.warning(
                "listing Heat's stack-user projects of project %s was "
                "truncated by Keystone's list_limit: the stack-domain users "
                'of the projects it leaves out are not reported',
                project_id,
            )
        # Keystone filters by prefix, ignoring case; a Keystone that
        # ignores the filter answers every project, so the prefix is
        # checked here too, with its case
        stack_projects = {
            p['id']: p
            for p in found.items
            if (p.get('name') or '').startswith(prefix)
            and p.get('description') == STACK_USER_PROJECT
        }
        refs = []
        for domain_id in sorted(
            {p.get('domain_id') or '' for p in stack_projects.values()}
        ):
            for user in _users_of_domain(conn, domain_id, partial=True):
                home = stack_projects.get(user.get('default_project_id'))
                if home is not None:
                    refs.append(
                        self._ref(
                            user,
                            project_id,
                            stack_project=home['name'],
                            stack_project_id=home['id'],
                        )
                    )
        return refs

    def primary_step(self, ref):
        return resource.keep(
            ref,
            f"Heat's stack-domain user of a stack of the project (its "
            f'stack project {ref.attrs["stack_project"]} in domain '
            f'{ref.attrs["domain_id"]}): Heat deletes it with the stack; '
            f'if the stack was abandoned, delete the user and its stack '
            f'project with `openstack user delete` and `openstack project '
            f'delete`',
            blocking=False,
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
