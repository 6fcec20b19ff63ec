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

"""``user delete --cascade``: resolve, check, plan, disable, delete,
verify.

1. resolve the users and refuse the unsafe ones, one line each: the
   caller itself, and a user that Keystone's SQL backend does not own (a
   federated user, a user of an LDAP or other read-only backend: the
   identity backend owns it, and nothing of it is deleted);
2. plan what each owns outside a project (``kinds.user``): its keypairs
   in every region with Nova, application credentials, credentials, and
   the trusts it made, a trust a Heat stack or a Magnum cluster acts with
   kept (with the stack or cluster named) and its user with it;
3. stage 1: disable the users (Keystone revokes their tokens: nobody
   makes a keypair in their name any more);
4. stage 2: run the plan, then list again and delete what appeared,
   until nothing is left (bounded); only then are the users deleted (OSC
   deletes them, after the workflow; the domain's cascade does it here).

Each user has its lock (``workflows.actor``, the projects' own), so that
two runs never work on one user.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
import functools
import re
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import heat, keystone_users
from osc_cascade.api.http import request
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.events import ROUND
from osc_cascade.engine.executor import Event, RunResult
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef, keep
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds.base import USER
from osc_cascade.workflows import actor as actor_mod
from osc_cascade.workflows.cascade_messages import stop_if_stuck
from osc_cascade.workflows.cascade_options import CascadeOptions
from osc_cascade.workflows.stopping import Stop, run_round

#: what a 403 from Keystone means the caller lacks
NEEDS = 'deleting another user needs the admin role'

#: the IDs Keystone's SQL backend gives its users (uuid4, hex)
_SQL_ID = re.compile(r'[0-9a-f]{32}')

TRUST = 'user.trust'


@dataclasses.dataclass
class UserOutcome:
    runs: list[RunResult]
    #: the users now holding nothing: to be deleted
    empty_users: list[ResourceRef]


class NotOurs(CascadeError):
    """The user is the identity backend's (LDAP, federation): not ours
    to delete."""


def backend_owner(user: dict[str, Any], config: dict[str, Any]) -> str:
    """Who owns the user if not Keystone's SQL backend ('' if it does):
    the identity provider of a federated user, the domain's own driver
    (domain-specific configuration), or a backend whose IDs are not SQL's
    (a mapped ID: LDAP, or another non-SQL driver)."""
    if user.get('federated'):
        idps = sorted(
            {f.get('idp_id') or '?' for f in user['federated'] or []}
        )
        return f'the identity provider {", ".join(idps)} (federated)'
    driver = (config.get('identity') or {}).get('driver')
    if driver and driver != 'sql':
        return f"the domain's {driver} identity backend"
    if not _SQL_ID.fullmatch(user.get('id') or ''):
        return (
            'an identity backend other than SQL (its ID is not one '
            'Keystone makes: LDAP or a mapped backend)'
        )
    return ''


def user_ref(user: dict[str, Any]) -> ResourceRef:
    return ResourceRef(
        kind=kinds_mod.USER_KIND,
        id=user['id'],
        name=user.get('name') or '',
        project_id=user['id'],
        attrs={'domain_id': user.get('domain_id') or ''},
    )


class UserCascade:
    def __init__(
        self,
        conn: Any,
        options: CascadeOptions | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        actor: actor_mod.Actor | None = None,
    ):
        self.conn = conn
        self.options = options or CascadeOptions()
        self.on_event = on_event
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.kinds = kinds_mod.build(scope=USER)
        self.actor = actor or actor_mod.Actor(
            actor_mod.coordination_url(self.options.coordination_url, conn),
            doing='openstack user delete --cascade',
        )
        self.runs: list[RunResult] = []
        #: a signal stops the round under way (``interrupt``)
        self.stop = Stop()

    @functools.cached_property
    def regions(self) -> Regions:
        return Regions(self.conn, self.options.regions)

    @functools.cached_property
    def discovery(self) -> Discovery:
        return Discovery(
            self.conn,
            self.kinds,
            regions=self.regions,
            clock=self.clock,
            parallel=max(1, self.options.parallel),
        )

    def retried(self, what: str, call: Callable[[], Any]) -> Any:
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=NEEDS
        )

    # -- what to delete ----------------------------------------------------

    def resolve(
        self, names_or_ids: Sequence[str], domain: str | None = None
    ) -> list[ResourceRef]:
        """The users named (by ID, or by name in ``domain``), checked."""
        return [self.check(self.find(n, domain)) for n in names_or_ids]

    def find(self, name_or_id: str, domain: str | None) -> dict[str, Any]:
        domain_id = ''
        if domain:
            found = self.retried(
                f'looking up domain {domain!r}',
                lambda: self.conn.identity.find_domain(domain),
            )
            if found is None:
                raise CascadeError(
                    f'No domain with a name or ID of {domain!r} exists.'
                )
            domain_id = found.id
        user = self.retried(
            f'looking up user {name_or_id!r}',
            lambda: keystone_users.user_body(self.conn, name_or_id),
        )
        if user is not None and domain_id in ('', user.get('domain_id')):
            return user
        matches = self.retried(
            f'looking up user {name_or_id!r}',
            lambda: keystone_users.users_named(
                self.conn, name_or_id, domain_id
            ),
        ).items
        matches = [u for u in matches if u.get('name') == name_or_id]
        if not matches:
            where = f' in domain {domain!r}' if domain else ''
            raise CascadeError(
                f'No user with a name or ID of {name_or_id!r} exists{where}.'
            )
        if len(matches) > 1:
            raise CascadeError(
                f'More than one user is named {name_or_id!r}: '
                + ', '.join(
                    f'{u["id"]} (domain {u.get("domain_id")})' for u in matches
                )
                + '; name it by ID or use --domain.'
            )
        # the listing leaves out what a GET shows (federated)
        return (
            self.retried(
                f'reading user {matches[0]["id"]}',
                lambda: keystone_users.user_body(self.conn, matches[0]['id']),
            )
            or matches[0]
        )

    def check(self, user: dict[str, Any]) -> ResourceRef:
        """The user as a target, or one line why not."""
        label = f'{user.get("name")} ({user["id"]})'
        if user['id'] == self.conn.current_user_id:
            raise CascadeError(
                f'Refusing to delete user {label}: it is the user you are '
                'authenticated as.'
            )
        owner = self.backend_owner(user)
        if owner:
            raise NotOurs(
                f'Refusing to delete user {label}: it belongs to {owner}, '
                'which Keystone cannot delete from; nothing of it is '
                'deleted (its keypairs, credentials and trusts stay).'
            )
        return user_ref(user)

    def backend_owner(self, user: dict[str, Any]) -> str:
        domain_id = user.get('domain_id') or ''
        config = self.retried(
            f'reading the identity configuration of domain {domain_id}',
            lambda: keystone_users.domain_config(self.conn, domain_id),
        )
        return backend_owner(user, config)

    # -- planning ----------------------------------------------------------

    def plan(self, targets: Sequence[ResourceRef]) -> Plan:
        refs, notes = self.discovery.run(t.id for t in targets)
        names = {t.id: t.name for t in targets}
        refs = [self.with_use(r, names) for r in refs]
        plan = build_plan(
            Inventory([*refs, *targets]),
            self.kinds,
            [{'id': t.id, 'name': t.name} for t in targets],
        )
        plan.notes.extend(notes)
        # with --region: what the users own in the other regions (their
        # keypairs there) is kept, and keeps them (Nova would keep the
        # keypairs of a deleted user for ever)
        for ref in self.elsewhere(targets):
            step = keep(ref, 'outside --region: stays, and keeps the user')
            plan.steps[step.id] = step
        if any(r.kind == TRUST for r in refs):
            plan.notes.append(
                'trusts: those a Heat stack or a Magnum cluster acts with '
                'are kept; other services that act with trusts (Aodh, '
                'Senlin, Mistral) are not asked'
            )
        return plan

    def elsewhere(self, targets: Sequence[ResourceRef]) -> list[ResourceRef]:
        """What the users own in the catalog's regions outside
        ``--region``."""
        if not self.regions.others:
            return []
        refs, _notes = self.discovery.run(
            (t.id for t in targets), among=self.regions.others
        )
        return [r for r in refs if r.region in self.regions.others]

    def with_use(self, ref: ResourceRef, names: dict[str, str]) -> ResourceRef:
        """A trust, with who acts with it (``used_by``); anything else as
        it is."""
        if ref.kind != TRUST or not ref.attrs.get('project'):
            return ref
        users = self.trust_users(
            ref.attrs['project'], ref.project_id, names.get(ref.project_id, '')
        )
        if not users:
            return ref
        return dataclasses.replace(
            ref, attrs={**ref.attrs, 'used_by': '; '.join(users)}
        )

    def trust_users(
        self, project_id: str, user_id: str, user_name: str
    ) -> list[str]:
        """The Heat stacks and Magnum clusters of the trust's project that
        its trustor made: Heat makes a trust per stack (its
        ``deferred_auth_method = trusts``) and keeps it with the stack
        (its ``trust_id``, which the API does not show), Magnum one per
        cluster; so every stack of the project whose owner has the user's
        name, and every cluster of the user there, is taken to act with
        it (a name shared across domains keeps more, never less)."""
        found: list[str] = []
        for region in self.regions.of_service('orchestration'):
            conn = self.regions.connection(region)
            stacks = self.retried(
                f'listing the stacks of project {project_id} in {region}',
                lambda c=conn: heat.stacks(c, tenant=project_id),
            )
            found.extend(
                f'Heat stack {s.get("stack_name")} ({s["id"]}) in {region}'
                for s in stacks
                if s.get('stack_owner') == user_name
                and s.get('project', project_id) == project_id
            )
        for region in self.regions.of_service('container-infra'):
            conn = self.regions.connection(region)
            clusters = self.retried(
                f'listing the clusters of project {project_id} in {region}',
                lambda c=conn: request(
                    c.container_infrastructure_management,
                    'GET',
                    '/clusters/detail',
                ).json()['clusters'],
            )
            found.extend(
                f'Magnum cluster {c.get("name")} ({c["uuid"]}) in {region}'
                for c in clusters
                if c.get('project_id') == project_id
                and c.get('user_id') == user_id
            )
        return found

    # -- execution ---------------------------------------------------------

    def execute(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> UserOutcome:
        """Disable, run the plan, verify; raise if anything is left or
        kept. The users themselves are not deleted here."""
        if plan.kept():
            raise CascadeError(
                'The users were not deleted, nothing was changed: '
                + '; '.join(
                    s.describe() for s in sorted(plan.kept(), key=_by_id)
                )
            )
        try:
            for target in sorted(targets, key=lambda t: t.id):
                self.actor.hold(target.id, f'{target.name} ({target.id})')
            for target in targets:
                self.retried(
                    f'disabling user {target.name} ({target.id})',
                    lambda t=target: keystone_users.disable_user(
                        self.conn, t.id
                    ),
                )
            return self._delete(plan, targets)
        finally:
            self.actor.release()

    def _delete(
        self, plan: Plan, targets: Sequence[ResourceRef]
    ) -> UserOutcome:
        self.runs = runs = [self.run_round(without_users(plan))]
        stop_if_stuck(runs[-1])
        for _round in range(self.options.verify_rounds):
            leftover = without_users(self.plan(targets))
            if self.on_event is not None:  # its own verification round
                self.on_event(Event(ROUND, None, planned=len(leftover.steps)))
            if leftover.kept():
                raise CascadeError(
                    'The users were not deleted: '
                    + '; '.join(s.describe() for s in leftover.kept())
                )
            if not leftover.steps:
                return UserOutcome(runs, list(targets))
            runs.append(self.run_round(leftover))
            stop_if_stuck(runs[-1])
        leftover = without_users(self.plan(targets))
        if leftover.steps:
            raise CascadeError(
                'The users were not deleted (they stay disabled): they '
                f'still own {len(leftover.steps)} resource(s): '
                + '; '.join(
                    sorted(s.target.label() for s in leftover.steps.values())
                )
            )
        return UserOutcome(runs, list(targets))

    def run_round(self, plan: Plan) -> RunResult:
        return run_round(self, plan)

    def interrupt(self, signum: int) -> None:
        self.stop(signum)

    def delete_users(self, users: Sequence[ResourceRef]) -> None:
        """The users themselves (the domain's cascade; OSC's own ``user
        delete`` does it for the hook)."""
        for user in users:
            self.retried(
                f'deleting user {user.name} ({user.id})',
                lambda u=user: keystone_users.delete_user(self.conn, u.id),
            )


def without_users(plan: Plan) -> Plan:
    return plan.subplan(lambda s: s.target.kind != kinds_mod.USER_KIND)


def _by_id(step: Any) -> str:
    return step.id
