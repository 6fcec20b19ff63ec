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
"""Orphans: resources whose owner project no longer exists in Keystone.

Every kind the cascade knows is listed across all projects (the kinds'
``list`` with no project) in every region of the catalog (or those asked
for), and then each resource's owner is proven gone or
not (``Owners``). Blind spots of earlier tools are handled on purpose: an
RBAC policy's wildcard target ``*`` is not an owner (only the policy's own
project is), a resource with an empty owner is reported as such rather than
passed over, and resources that go with their owner (a router's gateway
port, a DHCP port) are not reported on their own.

Swift cannot list its accounts, so the object-store kind lists nothing
for every project at once: the account of each owner proven gone (given
by ID, or found by what else it left) is listed on its own
(``AUTH_<id>``, on the caller's object-store endpoint with the project
swapped, which needs Swift's reseller admin role). One that cannot be
listed is said in one line, and its owner is never called clean.

An owner is gone only when Keystone answers 404 to it, asked after the
resources were listed (a project created during the search is seen), and
asked again right before a purge runs. Whatever cannot be proven (a 403, a
5xx that stays) keeps its resources: they are not orphans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import concurrent.futures
import dataclasses
import difflib
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import (
    CascadeError,
    PlanError,
    describe,
    one_line,
)
from osc_cascade.engine.executor import (
    DONE,
    KEPT,
    Event,
    RunResult,
    StepResult,
)
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, checked, retrying
from osc_cascade.engine.selection import Selection
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.workflows.k8s.conventions import made_for
from osc_cascade.workflows.stopping import Stop, run_plan, steps_done

GONE_OWNER = 'owner project does not exist'
NO_OWNER = 'no owner project'
GONE_TARGET = 'shared with a project that does not exist'

#: what a 403 from Keystone means the caller lacks
NEEDS = 'the orphan search needs an admin token that sees every domain'

EXISTS = 'exists'
GONE = 'gone'
UNKNOWN = 'unknown'


@dataclasses.dataclass(frozen=True)
class Verdict:
    state: str
    #: why an UNKNOWN owner could not be confirmed
    error: Exception | None = None


class Owners:
    """Whether owners exist, as Keystone says it one owner at a time.

    A listing of the projects and domains proves that the owners it shows
    exist, and nothing else: Keystone cuts it at ``list_limit`` (and says so
    only in a flag the SDK drops), a domain-scoped token sees one domain,
    and a project created after the listing is not in it. So every owner a
    listing does not show is asked for: gone only when ``GET
    /v3/projects/{id}`` and ``GET /v3/domains/{id}`` both answer Keystone's
    404; a 403, a 5xx that stays after the retries, or any other answer
    leaves it UNKNOWN, and the resources of an UNKNOWN owner are kept.

    Verdicts are cached for the life of the object: one question per
    distinct owner in a search, however many resources it owns.
    """

    def __init__(
        self,
        conn: Any,
        *,
        retry: RetryPolicy,
        clock: Clock,
        parallel: int,
    ):
        self.conn = conn
        self.retry = retry
        self.clock = clock
        self.parallel = max(1, parallel)
        self._verdicts: dict[str, Verdict] = {}

    def confirm(
        self, owner_ids: Iterable[str], shown: Iterable[str] = ()
    ) -> dict[str, Verdict]:
        """The verdict on each owner; ``shown`` are the owners a listing
        showed as existing (they are not asked for)."""
        wanted = {o for o in owner_ids if o}
        listed = set(shown)
        for owner in wanted & listed:
            self._verdicts.setdefault(owner, Verdict(EXISTS))
        ask = sorted(o for o in wanted if o not in self._verdicts)
        if ask:
            # the SDK's proxy made once, not by each thread that gets
            # there first (each would discover Keystone's versions)
            _ = self.conn.identity
            # One GET per owner (two for a gone one): a cloud has as many
            # owners as projects that own something, thousands on a large
            # one, so they are asked in parallel; the pool is bounded, as
            # discovery's lists are, because the same Keystone validates
            # every token of the cloud while we ask.
            with concurrent.futures.ThreadPoolExecutor(
                max_workers=min(self.parallel, len(ask)),
                thread_name_prefix='owners',
            ) as pool:
                for owner, verdict in zip(
                    ask, pool.map(self._ask, ask), strict=True
                ):
                    self._verdicts[owner] = verdict
        return {o: self._verdicts[o] for o in wanted}

    def _ask(self, owner: str) -> Verdict:
        try:
            exists = retrying(
                lambda: keystone.owner_exists(self.conn, owner),
                retry=self.retry,
                clock=self.clock,
            )
        except Exception as exc:
            return Verdict(UNKNOWN, exc)
        return Verdict(EXISTS if exists else GONE)


def unconfirmed(owner: str, error: Exception | None, outcome: str) -> str:
    """One line: the owner that could not be proven gone, and why."""
    return describe(
        f'confirming that owner {owner} is gone',
        error or CascadeError('no answer'),
        needs=NEEDS,
        outcome=outcome,
    )


@dataclasses.dataclass(frozen=True)
class Orphan:
    ref: ResourceRef
    reason: str

    def row(self) -> tuple[str, ...]:
        attrs = self.ref.attrs
        # what a Kubernetes cluster's controllers made says whose
        cluster = made_for(self.ref.kind, self.ref.name)
        return (
            self.ref.project_id,
            self.ref.region,
            self.ref.kind,
            self.ref.id,
            self.ref.name,
            self.reason + (f' (Kubernetes: {cluster})' if cluster else ''),
            attrs.get('created_at', ''),
            attrs.get('updated_at', ''),
        )


def select_kinds(
    kinds: Mapping[str, ResourceKind],
    services: Sequence[str] = (),
    kind_names: Sequence[str] = (),
) -> dict[str, ResourceKind]:
    """The kinds to search, filtered by service type and kind name."""
    unknown = [k for k in kind_names if k not in kinds]
    if unknown:
        # a few close names, not the 100 known ones on one line
        close = list(
            dict.fromkeys(  # best first
                m
                for k in unknown
                for m in difflib.get_close_matches(k, kinds, n=3, cutoff=0.6)
            )
        )
        raise CascadeError(
            f'Unknown kind(s): {", ".join(unknown)}; '
            + (
                f'did you mean {" or ".join(close[:3])}?'
                if close
                else 'a kind is <service>.<resource>, such as network.port'
            )
        )
    return {
        name: kind
        for name, kind in kinds.items()
        if name != kinds_mod.PROJECT_KIND
        and (not services or kind.service_type in services)
        and (not kind_names or name in kind_names)
    }


def _target(ref: ResourceRef) -> str:
    """The project an RBAC policy shares with; '' for none or ``*``."""
    target = ref.attrs.get('target') or ''
    return '' if target == '*' else target


def classify(
    ref: ResourceRef, kind: ResourceKind, verdicts: Mapping[str, Verdict]
) -> str | None:
    """Why the resource is an orphan; None if it is not one (or goes with
    its owner resource). An owner not proven gone is not gone."""
    if kind.primary_step(ref) is None:
        return None
    if not ref.project_id:
        return NO_OWNER
    owner = verdicts.get(ref.project_id, Verdict(UNKNOWN)).state
    if owner == GONE:
        return GONE_OWNER
    target = _target(ref)
    if owner == EXISTS and target and verdicts[target].state == GONE:
        return GONE_TARGET
    return None


@dataclasses.dataclass
class Findings:
    orphans: list[Orphan]
    #: services skipped because they are not in the catalog, owners that
    #: could not be confirmed
    notes: list[str]
    #: everything the orphans' owners still hold, including what goes with
    #: its owner (a router's interface ports): the purge plan needs it
    owned_by_gone: list[ResourceRef]
    #: owners of resources that could not be proven gone, with why: a
    #: purge leaves their resources (and purges the others')
    unconfirmed: dict[str, Exception | None] = dataclasses.field(
        default_factory=dict
    )
    #: gone owners whose Swift account could not be listed, with why in
    #: one line: what they left there is unknown, so they are not clean
    unlisted: dict[str, str] = dataclasses.field(default_factory=dict)


class OrphanSearch:
    """``orphan list`` and ``orphan purge``: find, plan, confirm, purge."""

    def __init__(
        self,
        conn: Any,
        kinds: Mapping[str, ResourceKind],
        *,
        regions: Regions | None = None,
        parallel: int = 8,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        self.kinds = kinds
        #: where to search: by default every region of the catalog
        self.regions = regions or Regions(conn)
        self.parallel = parallel
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        #: a signal stops the purge politely (``interrupt``)
        self.stop = Stop()
        #: what the last purge did, also when it was interrupted
        self.result: RunResult | None = None

    def _owners(self) -> Owners:
        return Owners(
            self.conn,
            retry=self.retry,
            clock=self.clock,
            parallel=self.parallel,
        )

    def find(self, owners_filter: Iterable[str] = ()) -> Findings:
        """Every orphan of the kinds (of the owners in ``owners_filter``
        only, if given)."""
        refs, notes = Discovery(
            self.conn,
            self.kinds,
            regions=self.regions,
            parallel=self.parallel,
            clock=self.clock,
        ).run([None])
        wanted = set(owners_filter)
        refs = [r for r in refs if not wanted or r.project_id in wanted]
        owners = {
            r.project_id
            for r in refs
            if r.project_id and self.kinds[r.kind].primary_step(r)
        } | wanted
        targets = {_target(r) for r in refs} - {''}
        # after the resources were listed: an owner made meanwhile exists
        verdicts = self._owners().confirm(
            owners | targets, () if wanted else self._listed()
        )
        accounts, unlisted = self._accounts(
            sorted(o for o in owners if verdicts[o].state == GONE)
        )
        refs.extend(accounts)
        notes.extend(unlisted[o] for o in sorted(unlisted))
        found = []
        for ref in refs:
            reason = classify(ref, self.kinds[ref.kind], verdicts)
            if reason:
                found.append(Orphan(ref, reason))
        found.sort(
            key=lambda o: (
                o.ref.project_id,
                o.ref.region,
                o.ref.kind,
                o.ref.name,
                o.ref.id,
            )
        )
        unknown = {
            o: v.error for o, v in verdicts.items() if v.state == UNKNOWN
        }
        notes.extend(
            unconfirmed(
                o,
                e,
                'Its resources are not reported as orphans'
                if o in owners
                else 'The RBAC policies sharing with it are not reported '
                'as orphans',
            )
            for o, e in sorted(unknown.items(), key=lambda i: i[0])
        )
        gone = {o for o, v in verdicts.items() if v.state == GONE}
        return Findings(
            found,
            notes,
            [r for r in refs if r.project_id in gone],
            {o: e for o, e in unknown.items() if o in owners},
            unlisted,
        )

    def _accounts(
        self, owners: Sequence[str]
    ) -> tuple[list[ResourceRef], dict[str, str]]:
        """What the kinds that list one project at a time (Swift's
        containers) hold of each owner, and the owners whose listing
        failed, with why in one line. One listing per owner and region
        (a GET of the account, and a HEAD per container), owners in
        parallel."""
        kinds = {
            name: kind
            for name, kind in self.kinds.items()
            if getattr(kind, 'lists_one_project', False)
        }
        if not kinds or not owners:
            return [], {}

        where = Discovery(self.conn, kinds, regions=self.regions)
        usable, _notes = where.available_kinds()  # the search noted them
        jobs = [
            (kind, region)
            for kind in usable
            for region in where.regions_of(kind)
        ]

        def listed(owner: str) -> list[ResourceRef] | str:
            refs = []
            for kind, region in jobs:
                conn = self.regions.connection(region)
                try:
                    found = checked(
                        f'listing the Swift account of project {owner} '
                        f'in {region}',
                        lambda kind=kind, conn=conn: list(
                            kind.list(conn, owner)
                        ),
                        retry=self.retry,
                        clock=self.clock,
                        needs=kind.forbidden_hint.format(
                            service_type=kind.service_type
                        ),
                        outcome='What the project left there is unknown: '
                        'it is not clean',
                    )
                except Exception as exc:  # said; the owner is not clean
                    return one_line(exc)
                refs.extend(ref.in_region(region) for ref in found)
            return refs

        refs: list[ResourceRef] = []
        unlisted: dict[str, str] = {}
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=min(self.parallel, len(owners)),
            thread_name_prefix='accounts',
        ) as pool:
            for owner, found in zip(
                owners, pool.map(listed, owners), strict=True
            ):
                if isinstance(found, str):
                    unlisted[owner] = found
                else:
                    refs.extend(found)
        return refs, unlisted

    def _listed(self) -> set[str]:
        """The projects and domains a listing shows: they exist. Those it
        does not show may exist too (a truncated listing, a token that sees
        one domain), so they are asked for one by one."""
        shown: set[str] = set()
        for what, call in (
            ('listing the projects of the cloud', keystone.projects),
            ('listing the domains of the cloud', keystone.domains),
        ):
            listed = checked(
                what,
                lambda call=call: call(self.conn),
                retry=self.retry,
                clock=self.clock,
                needs=NEEDS,
            )
            shown |= {item['id'] for item in listed.items}
        return shown

    def reconfirm(self, findings: Findings) -> tuple[Findings, list[str]]:
        """Right before a purge: each owner the plan would purge is asked
        again (no listing, no cached verdict). One that exists now takes
        its resources out, with a note; one that cannot be confirmed
        takes its resources out too, and is among the ``unconfirmed`` of
        the findings returned (it is not purged; the others are)."""
        gone = {r.project_id for r in findings.owned_by_gone}
        verdicts = self._owners().confirm(gone)
        unknown = {
            o: v.error for o, v in verdicts.items() if v.state == UNKNOWN
        }
        back = {o for o, v in verdicts.items() if v.state == EXISTS}
        notes = [
            f'project {owner} exists now: its '
            f'{sum(r.project_id == owner for r in findings.owned_by_gone)} '
            'resource(s) are kept, not purged'
            for owner in sorted(back)
        ]
        out = back | set(unknown)
        kept = Findings(
            [o for o in findings.orphans if o.ref.project_id not in out],
            findings.notes,
            [r for r in findings.owned_by_gone if r.project_id not in out],
            {**findings.unconfirmed, **unknown},
            unlisted={
                o: why for o, why in findings.unlisted.items() if o not in out
            },
        )
        return kept, notes

    def purge(
        self,
        plan: Plan,
        *,
        parallel: int,
        timeout: float,
        on_event: Callable[[Event], None] | None = None,
    ) -> RunResult:
        """Run a purge plan: no token scoped to the deleted projects
        needed. Interrupted (``interrupt``), it finishes what is in flight
        and raises ``Interrupted``; ``result`` has what it did."""
        self.result = run_plan(
            self.conn,
            plan,
            self.kinds,
            parallel=parallel,
            timeout=timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=on_event,
            stop=self.stop,
            regions=self.regions,
        )
        self.stop.check(
            f'{steps_done(self.result.results.values())}. What is '
            'left is still orphaned: run `openstack orphan purge` again '
            'to finish.'
        )
        return self.result

    def interrupt(self, signum: int) -> None:
        """Stop the purge (from a signal handler): nothing more starts;
        what is in flight finishes."""
        self.stop(signum)


def not_purged(findings: Findings) -> dict[str, str]:
    """The owners the purge leaves, one line each saying why: those that
    could not be proven gone (their resources are kept), and those whose
    Swift account could not be listed (what they left there is
    unknown)."""
    lines = {
        owner: unconfirmed(owner, error, 'Its resources were not purged')
        for owner, error in findings.unconfirmed.items()
    }
    lines.update(findings.unlisted)
    return dict(sorted(lines.items()))


def not_done_by_owner(
    plan: Plan, result: RunResult
) -> dict[str, tuple[int, list[StepResult]]]:
    """Each owner of the plan: how many of its steps ran, and those not
    done. A keep that does not block (what the project's delete must not
    take along: another project's network a stack made) is not counted
    as not done."""
    out: dict[str, tuple[int, list[StepResult]]] = {}
    for project in plan.projects:
        mine = [
            r
            for r in result.results.values()
            if r.step.target.project_id == project['id']
        ]
        bad = [
            r
            for r in mine
            if r.outcome != DONE
            and not (
                r.outcome == KEPT
                and r.step.params.get('blocking', True) is False
            )
        ]
        out[project['id']] = (len(mine), bad)
    return out


def purge_plan(
    findings: Findings,
    kinds: Mapping[str, ResourceKind],
    select: Selection | None = None,
) -> Plan:
    """A plan that deletes what deleted projects left, ordered as a cascade
    of those projects would be. Resources with no owner, or owned by a
    project not proven gone, are never part of it: an owner that could not
    be confirmed is left, and not the others (``not_purged``). ``select``:
    only what it selects, and can go without what it does not
    (``engine.closure``)."""
    refs = findings.owned_by_gone
    projects = [
        {'id': pid, 'name': ''} for pid in sorted({r.project_id for r in refs})
    ]
    try:
        why_not = select.why_not if select else None
        plan = build_plan(Inventory(refs), kinds, projects, why_not)
    except PlanError as exc:
        raise CascadeError(f'Cannot plan the purge: {exc}') from exc
    if select:
        plan.notes.extend(select.notes(refs))
        plan.selection = {'filters': select.to_dict()}
    return plan
