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

"""``domain delete --cascade``: a customer leaves.

1. resolve the domain and refuse the unsafe ones, one line each: the
   default domain, the caller's own (its user's or its project's), an
   immutable one;
2. plan it whole, one plan (``DomainPlan``): every project of the domain
   (leaves first) with all it owns in every region, planned at once by
   the project cascade's discovery; every user with what it owns outside
   Keystone (``workflows.users``: keypairs in every region with Nova,
   credentials, trusts); the groups, the role assignments on the domain,
   its identity configuration, and last the domain. A project the
   cascade refuses (the caller's, an immutable one, one that keeps a
   resource) is kept with its parents, a user of the identity backend
   (LDAP, federation) is kept: each keeps the domain (and with it its
   users, groups, roles and configuration), not the other projects;
3. stage 1: disable the domain (Keystone then refuses every token of its
   users and projects) and drain its projects (the project cascade's
   drain: disabled, quotas frozen, recorded on each project);
4. stage 2: run the projects' plan, all projects at once on the one
   engine (``workflows.many``: the project cascade's locks, records and
   verification, each project ending on its own), delete the emptied
   projects; then, only if nothing keeps the domain, the users with
   their keypairs, the groups, the domain's role assignments and
   configuration (what stays may need them); the domain itself is OSC's
   (``domain delete``).

A run killed at any point is finished by running it again: the domain
stays disabled, the projects drained and recorded, and the plan is made
again from what is left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from typing import Any

from osc_cascade.api import keystone, keystone_users
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.events import PHASE
from osc_cascade.engine.executor import Event, RunResult
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef, Step, delete, keep
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.kinds.compute import Keypair
from osc_cascade.kinds.user import UserKeypair
from osc_cascade.workflows import actor as actor_mod
from osc_cascade.workflows import after_delete
from osc_cascade.workflows.cascade_options import CascadeOptions
from osc_cascade.workflows.many import ManyProjects
from osc_cascade.workflows.projects import is_protected, project_ref
from osc_cascade.workflows.users import NotOurs, UserCascade, without_users

GROUP = 'identity.group'
GRANT = 'identity.domain_role'
CONFIG = 'identity.domain_config'
DOMAIN = 'identity.domain'

#: what the domain's record says (``openstack domain show``)
STAGE = 'cascade_stage'
#: why the users, groups and roles stay in a plan that keeps the domain
STAYS = 'stays with the domain, which what the plan keeps keeps'
#: what a run that keeps the domain says of the rest of it
KEPT_WITH_DOMAIN = (
    'the domain stays (see what keeps it): its users (and their keypairs), '
    'groups, roles on the domain and configuration stay with it; run again '
    'once nothing keeps it'
)
#: why a project that owns something outside --region stays
OUTSIDE_REGION = (
    'owns resources outside --region (see the plan): emptied in the '
    'region, it stays drained'
)
#: the progress's name of the users' part of the run
USERS_PHASE = "the users' keypairs, credentials and trusts"
#: what the locks say holds them (``actor.holder``)
DOING = 'openstack domain delete --cascade'


@dataclasses.dataclass
class DomainPlan:
    """One plan for the whole domain, and its parts as they run."""

    domain: ResourceRef
    #: the projects' plan, of those not refused, and those projects
    projects: Plan
    project_targets: list[ResourceRef]
    #: the users' plan, of those not refused, and those users
    users: Plan
    user_targets: list[ResourceRef]
    #: groups, role assignments on the domain, its configuration
    rest: list[ResourceRef]
    #: what stays, and why (one line each): it keeps the domain
    refused: dict[str, str]
    notes: list[str]
    #: the kept steps of the refused projects and users, to show
    kept: list[Step] = dataclasses.field(default_factory=list)

    def whole(self) -> Plan:
        """What the dry run shows: both plans, the refused as kept, the
        rest and the domain last; when something keeps the domain, its
        users, groups, roles and configuration as staying with it."""
        steps = dict(self.projects.steps)
        steps.update((s.id, s) for s in self.kept)
        edges = set(self.projects.edges)
        for label, why in sorted(self.refused.items()):
            ref = ResourceRef('identity.refused', label, label, self.domain.id)
            step = keep(ref, why)
            steps[step.id] = step
        rest = [*self.users.steps.values(), *map(delete, self.rest)]
        if self.refused:
            for step in rest:
                if step.is_delete:
                    step = keep(step.target, STAYS, blocking=False)
                    steps[step.id] = step
            return self._plan(steps, edges)
        steps.update((s.id, s) for s in rest)
        edges |= self.users.edges
        last = delete(self.domain)
        edges |= {(step_id, last.id) for step_id in steps}
        steps[last.id] = last
        return self._plan(steps, edges)

    def _plan(self, steps: dict[str, Step], edges: set) -> Plan:
        return Plan(
            projects=[
                *self.projects.projects,
                *self.users.projects,
                {'id': self.domain.id, 'name': self.domain.name},
            ],
            steps=steps,
            edges=edges,
            notes=list(self.notes),
            made_for=self.projects.made_for,
        )


def _deleted_by(user_plan: Plan) -> Callable[[Step], bool]:
    """Whether a project step is a report of a user's keypair
    (``compute.keypair``, kept as the user's) that the users' plan
    deletes: one object, said once, as deleted."""
    deleted = {
        (s.target.region, s.target.id)
        for s in user_plan.steps.values()
        if s.is_delete and s.target.kind == UserKeypair.name
    }
    return lambda s: (
        s.target.kind == Keypair.name
        and (s.target.region, s.target.id) in deleted
    )


@dataclasses.dataclass
class DomainOutcome:
    runs: list[RunResult]
    projects: list[ResourceRef]
    users: list[ResourceRef]
    rest: list[ResourceRef]
    #: what stayed, and why; the domain is deleted only without any
    refused: dict[str, str]


class DomainCascade:
    def __init__(
        self,
        conn: Any,
        options: CascadeOptions | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        self.options = dataclasses.replace(
            options or CascadeOptions(), recursive=True
        )
        url = actor_mod.coordination_url(self.options.coordination_url, conn)

        def actor() -> actor_mod.Actor:
            return actor_mod.Actor(url, doing=DOING)

        #: the domain's lock; the projects' and the users' are their
        #: cascades' (each releases its own when its part is over)
        self.actor = actor()
        self.on_event = on_event
        common = {'on_event': on_event, 'clock': clock, 'retry': retry}
        self.project_cascade = ManyProjects(
            conn, self.options, actor=actor(), **common
        )
        self.user_cascade = UserCascade(
            conn, self.options, actor=actor(), **common
        )
        self.retried = self.project_cascade.projects.retried

    # -- what to delete ----------------------------------------------------

    def resolve(self, name_or_id: str) -> ResourceRef:
        found = self.retried(
            f'looking up domain {name_or_id!r}',
            lambda: keystone.find_domain(self.conn, name_or_id),
        )
        if found is None:
            raise CascadeError(
                f'No domain with a name or ID of {name_or_id!r} exists.'
            )
        body = self.retried(
            f'reading domain {found.id}',
            lambda: keystone_users.domain_body(self.conn, found.id),
        )
        if body is None:
            raise CascadeError(f'Domain {name_or_id!r} is gone.')
        label = f'{body.get("name")} ({body["id"]})'
        if body['id'] == 'default' or body.get('name') == 'Default':
            raise CascadeError(
                f'Refusing to delete domain {label}: it is the default '
                'domain, where the cloud itself lives.'
            )
        access = self.conn.session.auth.get_access(self.conn.session)
        own = {
            access.user_domain_id,
            access.project_domain_id,
            getattr(access, 'domain_id', None),  # a domain-scoped token
        }
        if body['id'] in own:
            raise CascadeError(
                f'Refusing to delete domain {label}: it is the domain you '
                'are authenticated in. Authenticate in another domain and '
                'run again.'
            )
        if is_protected(body):
            raise CascadeError(
                f'Domain {label} is protected (marked immutable): '
                "unprotect it with 'openstack domain set --no-immutable "
                f"{body['id']}' first."
            )
        return ResourceRef(
            DOMAIN, body['id'], body.get('name') or '', body['id']
        )

    # -- planning ----------------------------------------------------------

    def plan(self, domain: ResourceRef) -> DomainPlan:
        refused: dict[str, str] = {}
        projects = self._projects(domain)
        targets = self._deletable(projects, refused)
        plan = self.project_cascade.plan(targets) if targets else _empty()
        # a project that keeps a resource stays, and its parents with it
        kept = plan.kept()
        keeping = {s.target.project_id for s in kept}
        by_id = {p.id: p for p in projects}
        for project_id in sorted(keeping):
            refused.setdefault(
                _label(by_id[project_id]),
                'keeps resources (see the plan): the project stays',
            )
        ids = self._stay(projects, keeping, refused)
        targets = [t for t in targets if t.id not in ids]
        plan = plan.subplan(lambda s: s.target.project_id not in ids)
        # with --region: emptied there, a project that owns something in
        # another region stays drained, and keeps the domain
        for step in self.project_cascade.outside(plan):
            refused.setdefault(
                _label(by_id[step.target.project_id]), OUTSIDE_REGION
            )
        users = self._users(domain, refused)
        user_plan = self.user_cascade.plan(users) if users else _empty()
        keeping = {s.target.project_id for s in user_plan.kept()}
        for user in users:
            if user.id in keeping:
                refused[f'user {user.name} ({user.id})'] = '; '.join(
                    s.describe()
                    for s in user_plan.kept()
                    if s.target.project_id == user.id
                )
        kept.extend(user_plan.kept())
        users = [u for u in users if u.id not in keeping]
        user_plan = user_plan.subplan(
            lambda s: s.target.project_id not in keeping
        )
        covered = _deleted_by(user_plan)
        plan = plan.subplan(lambda s: not covered(s))
        return DomainPlan(
            domain=domain,
            projects=plan,
            project_targets=targets,
            users=user_plan,
            user_targets=users,
            rest=self._rest(domain),
            refused=refused,
            notes=[*plan.notes, *user_plan.notes],
            kept=kept,
        )

    def _projects(self, domain: ResourceRef) -> list[Any]:
        found = self.retried(
            f'listing the projects of domain {domain.label()}',
            lambda: keystone.all_projects(self.conn, domain_id=domain.id),
        )
        return [
            keystone.as_project(p)
            for p in keystone.complete(
                f'listing the projects of domain {domain.id}', found
            )
            if not p.get('is_domain')
        ]

    def _deletable(
        self, projects: Sequence[Any], refused: dict[str, str]
    ) -> list[ResourceRef]:
        """The projects the cascade may delete; the others refused, one
        line each, with their parents (Keystone deletes no parent)."""
        for project in projects:
            try:
                self.project_cascade.check_deletable(project)
            except CascadeError as exc:
                refused[_label(project)] = str(exc)
        stays = self._stay(projects, set(), refused)
        return [project_ref(p) for p in projects if p.id not in stays]

    @staticmethod
    def _stay(
        projects: Sequence[Any], ids: set[str], refused: dict[str, str]
    ) -> set[str]:
        """The IDs of the projects that stay: those of ``ids``, those
        refused, and the parents of each (Keystone deletes no parent of a
        project), each parent refused with its reason."""
        starts = [p.id for p in projects if _label(p) in refused]
        return with_parents(
            projects, [*starts, *ids], refused, lambda p: p.parent_id
        )

    def _users(
        self, domain: ResourceRef, refused: dict[str, str]
    ) -> list[ResourceRef]:
        found = keystone.complete(
            f'listing the users of domain {domain.id}',
            self.retried(
                f'listing the users of domain {domain.label()}',
                lambda: keystone.users(self.conn, domain_id=domain.id),
            ),
        )
        targets = []
        for user in found:
            try:
                targets.append(self.user_cascade.check(user))
            except NotOurs as exc:
                refused[f'user {user.get("name")} ({user["id"]})'] = str(exc)
        return targets

    def _rest(self, domain: ResourceRef) -> list[ResourceRef]:
        """The groups, the role assignments on the domain, and its
        identity configuration."""
        listed = self.retried(
            f'listing the groups of domain {domain.label()}',
            lambda: keystone_users.groups(self.conn, domain.id),
        )
        rest = [
            ResourceRef(GROUP, g['id'], g.get('name') or '', domain.id)
            for g in keystone.complete(
                f'listing the groups of domain {domain.id}', listed
            )
        ]
        grants = self.retried(
            f'listing the role assignments on domain {domain.label()}',
            lambda: keystone_users.domain_role_assignments(
                self.conn, domain.id
            ),
        )
        for grant in keystone.complete(
            f'listing the role assignments on domain {domain.id}', grants
        ):
            rest.append(_grant_ref(domain.id, grant))
        config = self.retried(
            f'reading the configuration of domain {domain.label()}',
            lambda: keystone_users.domain_config(self.conn, domain.id),
        )
        if config:
            rest.append(ResourceRef(CONFIG, domain.id, '', domain.id))
        return rest

    # -- execution ---------------------------------------------------------

    def execute(self, plan: DomainPlan) -> DomainOutcome:
        """Stage 1, then stage 2; what was refused stays (and says why).
        The domain is left to OSC's delete, disabled."""
        domain = plan.domain
        try:
            self.actor.hold(f'domain-{domain.id}', domain.label())
            self.retried(
                f'disabling domain {domain.label()}',
                lambda: keystone_users.update_domain(
                    self.conn,
                    domain.id,
                    enabled=False,
                    **{STAGE: 'disabled by openstack domain delete --cascade'},
                ),
            )
            runs: list[RunResult] = []
            deleted: list[ResourceRef] = []
            refused = dict(plan.refused)
            if plan.project_targets:
                # the plan after the drain: the same keypairs said once
                self.project_cascade.said_elsewhere = _deleted_by(plan.users)
                outcome = self.project_cascade.execute(
                    plan.projects, plan.project_targets
                )
                runs.extend(outcome.runs)
                # each project ends on its own: what stays keeps the domain
                for target in plan.project_targets:
                    if target.id in outcome.stays:
                        refused[f'project {target.name} ({target.id})'] = (
                            outcome.stays[target.id]
                        )
                self.project_cascade.projects.delete(outcome.empty_projects)
                self.project_cascade.notes.extend(
                    after_delete.finish(self.project_cascade, outcome)
                )
                deleted = outcome.empty_projects + outcome.deleted_children
            if refused:
                # the domain stays: so do its users, groups, roles and
                # configuration, which what stays may need; a run once
                # the refusals are gone deletes them
                self.project_cascade.notes.append(KEPT_WITH_DOMAIN)
                return DomainOutcome(runs, deleted, [], [], refused)
            users: list[ResourceRef] = []
            if plan.user_targets:
                if self.on_event is not None:  # not a verification round
                    self.on_event(
                        Event(
                            PHASE,
                            None,
                            USERS_PHASE,
                            planned=len(without_users(plan.users).steps),
                        )
                    )
                done = self.user_cascade.execute(plan.users, plan.user_targets)
                runs.extend(done.runs)
                self.user_cascade.delete_users(done.empty_users)
                users = done.empty_users
            for ref in plan.rest:
                self.retried(
                    f'deleting {ref.label()}', _delete_rest(self, ref)
                )
            refused.update(self.appeared(domain))
            return DomainOutcome(
                runs, deleted, users, list(plan.rest), refused
            )
        finally:
            self.actor.release()

    def appeared(self, domain: ResourceRef) -> dict[str, str]:
        """What the domain holds after the run, that the plan did not
        have (made by another domain's admin meanwhile): Keystone would
        delete it with the domain and leave what it owns, so it keeps the
        domain, one line each."""
        why = 'appeared during the run (not in the plan): run again'
        out = {_label(p): why for p in self._projects(domain)}
        listed = self.retried(
            f'listing the users of domain {domain.label()}',
            lambda: keystone.users(self.conn, domain_id=domain.id),
        )
        for user in listed.items:
            out[f'user {user.get("name")} ({user["id"]})'] = why
        groups = self.retried(
            f'listing the groups of domain {domain.label()}',
            lambda: keystone_users.groups(self.conn, domain.id),
        )
        for group in groups.items:
            out[f'group {group.get("name")} ({group["id"]})'] = why
        return out

    def interrupt(self, signum: int) -> None:
        self.project_cascade.interrupt(signum)
        self.user_cascade.interrupt(signum)

    @property
    def notes(self) -> list[str]:
        return self.project_cascade.notes


def _delete_rest(cascade: DomainCascade, ref: ResourceRef) -> Callable:
    conn = cascade.conn
    if ref.kind == GROUP:
        return lambda: keystone_users.delete_group(conn, ref.id)
    if ref.kind == GRANT:
        return lambda: keystone_users.revoke_domain_grant(
            conn, ref.attrs['path']
        )
    return lambda: keystone_users.delete_domain_config(conn, ref.id)


def _grant_ref(domain_id: str, grant: dict[str, Any]) -> ResourceRef:
    """A role on the domain: its ID the actor's and the role's, its
    name what it is (``include_names``), its grant's path to revoke it."""
    actor = 'user' if grant.get('user') else 'group'
    who, role = grant[actor], grant['role']
    inherited = (grant.get('scope') or {}).get('OS-INHERIT:inherited_to')
    return ResourceRef(
        GRANT,
        f'{who["id"]}/{role["id"]}' + ('/inherited' if inherited else ''),
        f'{role.get("name") or role["id"]}: {actor} '
        f'{who.get("name") or who["id"]}',
        domain_id,
        attrs={'path': keystone_users.domain_grant_path(domain_id, grant)},
    )


def with_parents(
    projects: Sequence[Any],
    ids: Sequence[str],
    refused: dict[str, str],
    parent_of: Callable[[Any], str | None],
) -> set[str]:
    """The IDs of ``ids`` and of their parents (Keystone deletes no parent
    of a project that stays), each parent refused with its reason; a
    project has a ``name`` and an ``id``, ``parent_of`` gives its
    parent's ID."""
    by_id = {p.id: p for p in projects}
    out: set[str] = set()
    todo = list(ids)
    while todo:
        project = by_id.get(todo.pop())
        if project is None or project.id in out:
            continue
        out.add(project.id)
        refused.setdefault(
            _label(project), 'a child project of it stays: it stays too'
        )
        todo.append(parent_of(project) or '')
    return out


def _label(project: Any) -> str:
    return f'project {project.name} ({project.id})'


def _empty() -> Plan:
    return Plan(projects=[], steps={}, edges=set())
