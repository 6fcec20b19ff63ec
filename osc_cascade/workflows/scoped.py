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

"""The cascade without the cloud-admin role (issue #20): through a token
scoped to the project.

Who may run it:

* a project's **domain manager** (Keystone's manager persona: the role
  ``manager`` on the project's domain, with a token scoped to that domain)
  gives itself the role ``member`` on the project for the run if it has
  none, recorded on the project first, and takes it back before OSC's own
  delete of the project, which needs none of it (or after a failure or an
  interrupt); it may delete the project;
* a user with a role on the project (its **owner**) works with its own
  role; it may only empty the project (``keep_project``): deleting a
  project needs a manager of its domain or an admin.

Discovery lists what the token sees, each kind as a non-admin lists it; the
owner checks stay (``kinds.base.owned``): what the project only sees
(shared and external networks, public, shared and community images,
other projects' RBAC shares) is another project's and stays. What a
scoped token cannot see it cannot prove safe: a volume attached to a
server it cannot see is kept, and the kinds only an admin can list are
named in a note.

The drain (``scoped_drain``) cannot disable the project first: Keystone
refuses tokens for a disabled project, the cascade's own included. It
removes every other role assignment on the project the caller may
(``workflows.assignments``, recorded first, put back by the restore), and
the project is disabled last, right before it is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import functools
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError, status_code
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds import quota
from osc_cascade.workflows import assignments, cascade, drain_record
from osc_cascade.workflows import drain as drain_mod
from osc_cascade.workflows.projects import (
    Protected,
    is_protected,
    project_ref,
    protected_message,
)
from osc_cascade.workflows.scoped_drain import ScopedDrain

#: the role a domain manager gives itself on the project for the run: the
#: one the services' default policies let act on a project's resources
WORKING_ROLE = 'member'
#: Keystone's domain-manager persona
MANAGER_ROLE = 'manager'

#: what stays open without admin, said in the plan (and the README)
STAYS_OPEN = (
    'without admin, what stays open during the run: tokens already issued '
    'for the project stay valid until they expire (and in the services\' '
    'token caches), assignments inherited from its domain or parents and '
    'those the caller may not remove stay, and no quota is frozen (an '
    "admin's call); the verification rounds delete what appears before "
    'the project is deleted, and what a token issued before the drain '
    "creates after it is found by an admin's `openstack orphan list` (the "
    'settle needs admin)'
)
#: the ownership checks a scoped token cannot make
NOT_CHECKED = (
    'without admin, not checked: other projects\' security group rules '
    "naming the project's groups, their RBAC rules and image memberships "
    'naming the project, and the servers of other projects that its '
    'volumes are attached to (such volumes are kept)'
)
#: what the project only sees, and stays
ONLY_SEEN = (
    'without admin, what the project only sees is not its own and stays: '
    'shared and external networks, public, shared and community images, '
    "other projects' RBAC shares"
)


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who runs the cascade, as the token says."""

    user_id: str
    roles: frozenset[str]
    project_id: str = ''
    project_name: str = ''
    domain_id: str = ''

    @classmethod
    def of(cls, conn: Any) -> Caller:
        access = conn.session.auth.get_access(conn.session)
        return cls(
            user_id=access.user_id or '',
            roles=frozenset(access.role_names or ()),
            project_id=access.project_id or '',
            project_name=access.project_name or '',
            domain_id=access.domain_id or '',
        )

    @property
    def is_admin(self) -> bool:
        return 'admin' in self.roles

    def manages(self, domain_id: str) -> bool:
        """A domain manager of ``domain_id``: the role manager, and a
        token scoped to that domain."""
        return MANAGER_ROLE in self.roles and self.domain_id == domain_id


def needs_scoped(conn: Any) -> bool:
    """Whether the caller is no cloud admin: the cascade then works
    through a token scoped to the project."""
    return not Caller.of(conn).is_admin


def grant_command(user_id: str, role: str, where: str) -> str:
    return f'`openstack role add --user {user_id} {where} {role}`'


class ScopedCascade(cascade.ProjectCascade):
    """``project delete --cascade`` without cloud admin; with
    ``keep_project``, the project is emptied and stays (and nothing is
    drained: its users keep their roles)."""

    def __init__(
        self,
        conn: Any,
        options: cascade.CascadeOptions | None = None,
        *,
        keep_project: bool = False,
        **kw: Any,
    ):
        super().__init__(conn, options, **kw)
        self.keep_project = keep_project
        self.caller = Caller.of(conn)
        self.kinds = quota.without_quotas(
            kinds_mod.build(
                delete_shared=self.options.delete_shared,
                force_stuck=self.options.force_stuck,
                scoped=True,
            )
        )
        if self.options.settle:
            raise CascadeError(
                '--settle needs the admin role: after the project is gone '
                'no token is scoped to it. Run it without --settle; an '
                "admin's `openstack orphan list` finds what appears later."
            )
        #: the token scoped to the project, once opened
        self.services_conn: Any = None
        #: the project it is scoped to
        self.project: ResourceRef | None = None
        #: the role given for the run, to take back (None: the caller's own)
        self.temporary: dict[str, Any] | None = None
        #: the project is deleted (``finish`` found it gone)
        self.gone = False

    @functools.cached_property
    def regions(self) -> Regions:
        if self.services_conn is None:
            raise CascadeError('internal: no token scoped to the project yet')
        return Regions(self.services_conn, self.options.regions)

    @functools.cached_property
    def drainer(self) -> drain_mod.Drain:
        return ScopedDrain(
            self.conn,
            Regions(self.conn, self.options.regions),
            retry=self.retry,
            clock=self.clock,
            now=lambda: self.projects.cloud_time().isoformat(),
        )

    # -- what to cascade ---------------------------------------------------

    def resolve(
        self, names_or_ids: Sequence[str], domain: str | None = None
    ) -> list[ResourceRef]:
        # A member may not list projects (its own is named by its token);
        # a domain manager may list its domain's, and reads another
        # domain's project no more than one that does not exist (403).
        wanted = [self._id_of(n, domain) for n in names_or_ids]
        try:
            return super().resolve(wanted, domain)
        except CascadeError as exc:
            if status_code(exc.__cause__) != 403:
                raise
            raise CascadeError(self._not_yours(names_or_ids)) from exc

    def _id_of(self, name_or_id: str, domain: str | None) -> str:
        if self.caller.project_id and name_or_id in (
            self.caller.project_id,
            self.caller.project_name,
        ):
            return self.caller.project_id
        if not self.caller.domain_id or domain:
            return name_or_id
        found = self.projects.retried(
            f'looking up project {name_or_id!r} in your domain',
            lambda: keystone.projects_named(
                self.conn, name=name_or_id, domain_id=self.caller.domain_id
            ),
        )
        return found[0].id if len(found) == 1 else name_or_id

    def _not_yours(self, names: Sequence[str]) -> str:
        user = self.caller.user_id
        what = ', '.join(names)
        if self.caller.domain_id:
            return (
                f'Project {what} is not in domain {self.caller.domain_id}, '
                'the one your token is scoped to (or does not exist): your '
                "manager role covers that domain's projects alone. Its own "
                "domain's manager or an admin may cascade it, or grant you "
                'the role there: '
                + grant_command(user, MANAGER_ROLE, '--domain <its domain>')
                + '.'
            )
        return (
            f'You may not read project {what}: without the admin role, '
            'name the project your token is scoped to '
            f'({self.caller.project_name}), or have a role on it granted: '
            + grant_command(user, WORKING_ROLE, '--project <project>')
            + '.'
        )

    def targets(self, projects: Sequence[Any]) -> list[ResourceRef]:
        if len(projects) != 1 or self.options.recursive:
            raise CascadeError(
                'Without the admin role the cascade works through a token '
                'scoped to one project: name one project, without '
                '--recursive (or run as a cloud admin).'
            )
        project = projects[0]
        label = f'{project.name} ({project.id})'
        if not self.keep_project and not self.caller.manages(
            project.domain_id
        ):
            raise CascadeError(
                f'Deleting project {label} needs the admin role or the '
                f'manager role on its domain {project.domain_id} (with a '
                'token scoped to that domain); you have neither: pass '
                '--keep-project to empty it only, or have it granted with '
                + grant_command(
                    self.caller.user_id,
                    MANAGER_ROLE,
                    f'--domain {project.domain_id}',
                )
                + '.'
            )
        if self.keep_project:
            # it stays, and its children with it: they are not looked up
            # (a member may not list projects)
            self._check_deletable(project)
            return [project_ref(project)]
        return super().targets(projects)

    def _check_deletable(self, project: Any) -> None:
        if self.keep_project and project.id == self.caller.project_id:
            # emptied, not deleted: the caller's own project is fine
            if is_protected(project):
                raise Protected(
                    protected_message(
                        f'{project.name} ({project.id})', project.id
                    )
                )
            return
        super()._check_deletable(project)

    # -- the token scoped to the project -----------------------------------

    def open(self, target: ResourceRef) -> None:
        """The token scoped to the project: the caller's own if scoped to
        it, else one made with the caller's role on it, given for the run
        to a domain manager that has none."""
        if self.services_conn is not None:
            return
        self.project = target
        if self.caller.project_id == target.id:
            self.services_conn = self.conn
            return
        domain_id = target.attrs.get('domain_id', '')
        if self.caller.manages(domain_id):
            self._give_role(target)
        elif not self._has_role(target):
            raise CascadeError(
                f'You (user {self.caller.user_id}) have no role on project '
                f'{target.name} ({target.id}) and no manager role on its '
                f'domain {domain_id}: without the admin role the cascade '
                'needs one of them; have it granted with '
                + grant_command(
                    self.caller.user_id, WORKING_ROLE, f'--project {target.id}'
                )
                + ' (or the manager role on the domain).'
            )
        self.services_conn = self.projects.retried(
            f'getting a token scoped to project {target.name} ({target.id})',
            lambda: _scoped_to(self.conn, target.id),
        )

    def _has_role(self, target: ResourceRef) -> bool:
        """Whether the caller has a role on the project (Keystone lists a
        user its own projects)."""
        found = self.projects.retried(
            'listing your projects',
            lambda: keystone.user_projects(self.conn, self.caller.user_id),
        )
        return any(p.id == target.id for p in found)

    def _give_role(self, target: ResourceRef) -> None:
        """The working role on the project for the run, unless the domain
        manager has it already; recorded on the project before it is given
        (a run killed before the end leaves it for the next run or the
        restore to take back)."""
        role = self.projects.retried(
            f'looking up role {WORKING_ROLE}',
            lambda: keystone.find_role(self.conn, WORKING_ROLE),
        )
        if role is None:
            raise CascadeError(
                f'Keystone has no role {WORKING_ROLE}: the cascade without '
                'admin gives it to the domain manager on the project.'
            )
        grant = {
            'user_id': self.caller.user_id,
            'role_id': role.id,
            'role': WORKING_ROLE,
            'inherited': False,
        }
        record = self.drainer.record_of(target.id)
        ours = bool(record and record.get(assignments.TEMPORARY) == grant)
        if not ours and self.projects.retried(
            f'checking your role on project {target.id}',
            lambda: keystone.has_grant(self.conn, target.id, grant),
        ):
            return  # a role of the manager's own: not taken back
        record = self.drainer.begin(target.id)
        record[assignments.TEMPORARY] = grant
        self.drainer._write(target.id, record)
        self.projects.retried(
            f'giving you role {WORKING_ROLE} on project {target.id} for '
            'the run',
            lambda: keystone.grant(self.conn, target.id, grant),
        )
        self.temporary = grant

    def close(self) -> None:
        """Take back the role given for the run (the project may be gone:
        Keystone then took it with it)."""
        if self.temporary is None or self.project is None:
            return
        project_id = self.project.id
        grant, self.temporary = self.temporary, None
        if self.gone:
            return  # Keystone deleted its assignments with it
        self.projects.retried(
            f'taking back your role {WORKING_ROLE} on project {project_id}',
            lambda: keystone.revoke(self.conn, project_id, grant),
        )
        record = self.drainer.record_of(project_id)
        if record is None or not record.pop(assignments.TEMPORARY, None):
            return
        drained = record.get(assignments.ASSIGNMENTS) or record.get('quotas')
        # a record that held the role alone (nothing was drained) goes
        self.drainer._write(project_id, record if drained else None)

    def release(self) -> None:
        try:
            self.close()
        finally:
            super().release()

    # -- planning and execution --------------------------------------------

    def plan(self, targets: Sequence[ResourceRef]) -> Plan:
        self.open(targets[0])
        plan = super().plan(targets)
        plan.notes.extend(self.scope_notes())
        return plan

    def load_plan(self, path: str, targets: Sequence[ResourceRef]) -> Plan:
        self.open(targets[0])
        return super().load_plan(path, targets)

    def scope_notes(self) -> list[str]:
        assert self.project is not None
        how = (
            f'role {WORKING_ROLE} given to you for the run, taken back '
            'before the project is deleted'
            if self.temporary
            else 'your own role on it'
        )
        notes = [
            f'without admin: listed and deleted through a token scoped to '
            f'project {self.project.name} ({self.project.id}), with {how}',
            ONLY_SEEN,
            NOT_CHECKED,
        ]
        if self.keep_project:
            notes.append(
                'with --keep-project nothing is drained: the project and '
                "its users' roles stay, and what they create during the run "
                'may stay too'
            )
        else:
            notes.append(STAYS_OPEN)
        return notes

    def drain(self, targets: Sequence[ResourceRef]) -> None:
        if self.keep_project:
            return
        super().drain(targets)

    def drain_summary(self, record: dict[str, Any]) -> str:
        removed = len(record.get(assignments.ASSIGNMENTS) or [])
        return (
            f'{removed} role assignment(s) removed; the project is '
            'disabled last, right before it is deleted'
        )

    def exists(self, project_id: str) -> bool:
        # a domain manager reads a deleted project no more than another
        # domain's (403): its domain's list by name says whether it is gone
        assert self.project is not None
        found = self.projects.retried(
            f'looking up project {project_id} in its domain',
            lambda: keystone.projects_named(
                self.conn,
                name=self.project.name,
                domain_id=self.project.attrs.get('domain_id'),
            ),
        )
        if any(p.id == project_id for p in found):
            return True
        self.gone = True
        return False

    def execute(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> cascade.CascadeOutcome:
        outcome = super().execute(plan, targets)
        if self.keep_project:
            self.release()
            return dataclasses.replace(outcome, empty_projects=[])
        try:
            self.disable_last(outcome.empty_projects)
        except Exception:
            self.release()
            raise
        self.notes.extend(self.give_back_before_delete())
        return outcome

    def give_back_before_delete(self) -> list[str]:
        """The role given for the run taken back before OSC's own delete,
        which needs none of it (Keystone's ``identity:delete_project``):
        when that delete fails, OSC raises and cliff runs no ``after()``.
        A failure is one line: what may stay, and how to take it back."""
        grant, project = self.temporary, self.project
        if grant is None or project is None:
            return []
        try:
            self.close()
        except CascadeError as exc:
            return [
                f'{exc}: your role {WORKING_ROLE} on project {project.id} '
                'may stay (Keystone deletes it with the project); if the '
                'project stays, `openstack role remove --user '
                f"{grant['user_id']} --project {project.id} {WORKING_ROLE}` "
                'or `openstack project restore` takes it back'
            ]
        return []

    def disable_last(self, projects: Sequence[ResourceRef]) -> None:
        """Disable the emptied project right before OSC deletes it: no
        token for it can be had from now on (the scoped one is done)."""
        for project in projects:
            record = self.records.get(project.id) or {}
            self.drainer.mark(project.id, drain_record.DELETING, record)
        self.projects.disable(projects)


def _scoped_to(conn: Any, project_id: str) -> Any:
    """A connection with the same credentials, scoped to the project (a
    domain scope dropped); it authenticates at once, so that a missing
    role is said here."""
    scoped = conn.connect_as(
        project_id=project_id, domain_id=None, domain_name=None
    )
    without_callers_swift_account(scoped, conn, project_id)
    scoped.session.timeout = conn.session.timeout
    scoped.authorize()
    return scoped


def without_callers_swift_account(
    scoped: Any, caller: Any, project_id: str
) -> None:
    """Drop from ``scoped`` (``caller``'s ``connect_as`` the project) the
    Swift endpoint of the caller's own account: openstacksdk keeps it in
    the config as an override once the caller's object_store is made, and
    connect_as copies it. The project's account is its token's."""
    override = scoped.config.config.get('object_store_endpoint_override')
    mine = caller.current_project_id
    if override and mine and mine != project_id and mine in override:
        del scoped.config.config['object_store_endpoint_override']
