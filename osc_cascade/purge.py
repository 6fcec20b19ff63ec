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

"""``compute service delete --purge-allocations``: find, classify, plan, run.

Nova's delete of a compute service removes the allocations it knows of and
deletes the host's resource providers, but it ignores Placement's 409 when a
provider still has allocations and deletes the service anyway: the providers
are orphaned. The purge therefore:

1. resolves the services and finds their compute nodes (one paged
   hypervisor list) and the nodes' provider trees (one provider list);
2. reads the allocations on those providers and classifies each consumer
   with what nova says of it (``classify``);
3. plans: remove the trees' share of the consumers that are left-overs,
   keep (and refuse on) the ones that are not, delete the nested providers
   children first, then the service, whose delete in nova removes its
   nodes' providers (it fails if one is already gone), then check that
   those are gone;
4. runs that plan with the executor; nothing runs while anything blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import concurrent.futures
import dataclasses
from typing import Any

from keystoneauth1 import discover
from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import placement
from osc_cascade.api.placement import NOVA_VERSION, PLACEMENT_VERSION
from osc_cascade.engine.errors import CascadeError, status_code
from osc_cascade.engine.executor import (
    DONE,
    FAILED,
    SKIPPED,
    Event,
    Executor,
    RunResult,
)
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.resource import KEEP, ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, retrying
from osc_cascade.kinds import placement as kinds
from osc_cascade.kinds.base import SERVICE

#: statuses in which nova no longer counts a migration as in progress
#: (``migration_get_in_progress_by_host_and_node`` in nova's DB API)
ENDED = frozenset(
    {
        'confirmed',
        'reverted',
        'error',
        'failed',
        'completed',
        'cancelled',
        'done',
    }
)
#: a resize or cold migration waiting for confirmation (VERIFY_RESIZE)
UNCONFIRMED = 'finished'
#: what a successful evacuation leaves (``completed`` once the source host
#: cleaned up, which a dead host never does)
EVACUATION_DONE = frozenset({'done', 'completed'})
#: reads give up sooner than deletes: nothing was changed yet
READ_ATTEMPTS = 4

# consumer classes, as the plan shows them
ON_HOST = 'instance on host'
MIGRATING = 'migration in progress'
NOT_CONFIRMED = 'migration not confirmed'
EVACUATED = 'evacuated instance'
ELSEWHERE = 'instance on another host'
DELETED = 'deleted instance'
MIGRATION_ENDED = 'ended migration'
UNKNOWN = 'unknown consumer'


@dataclasses.dataclass
class PurgeOptions:
    #: remove the allocations of unfinished migrations and of consumers
    #: nova cannot explain, instead of refusing
    force: bool = False
    parallel: int = 10
    timeout: float = 600.0


@dataclasses.dataclass(frozen=True)
class Verdict:
    cls: str
    detail: str
    blocks: bool
    #: the instance's name, when the consumer is one nova has
    name: str = ''


@dataclasses.dataclass
class HostFacts:
    """What nova says of one compute host."""

    host: str
    #: the instances on the host, by ID
    servers: dict[str, Any]
    #: the migrations from or to the host
    migrations: list[Any]

    def migration(self, uuid: str) -> Any:
        return next((m for m in self.migrations if m.uuid == uuid), None)


@dataclasses.dataclass(frozen=True)
class Found:
    """What nova says of a consumer that is neither an instance on the host
    nor one of its migrations: the instance, if it exists elsewhere, or
    whether nova remembers deleting it."""

    server: Any = None
    deleted: bool = False


def classify(
    consumer: str, facts: HostFacts, found: Found | None, force: bool
) -> Verdict:
    """The class of one consumer of the host's providers, and whether it
    blocks the purge."""
    found = found or Found()
    server = facts.servers.get(consumer)
    if (
        server is None
        and found.server is not None
        and found.server.compute_host == facts.host
    ):
        server = found.server
    if server is not None:
        return Verdict(
            ON_HOST,
            f'instance {_label(server)} is on '
            f'{facts.host}: migrate or delete it first',
            True,
            server.name,
        )
    migration = facts.migration(consumer)
    if migration is not None:
        return _migration_verdict(migration, force)
    if found.server is not None:
        return _elsewhere(consumer, found.server, facts, force)
    if found.deleted:
        return Verdict(DELETED, f'instance {consumer} was deleted', False)
    return _unless_forced(
        UNKNOWN,
        f'nova knows no instance or migration {consumer} (a '
        f'consumer of another service, or a leak)',
        force,
    )


def _elsewhere(
    consumer: str, server: Any, facts: HostFacts, force: bool
) -> Verdict:
    mine = [m for m in facts.migrations if m.server_id == consumer]
    active = [m for m in mine if m.status not in ENDED]
    if active:
        return dataclasses.replace(
            _migration_verdict(active[0], force), name=server.name
        )
    host = server.compute_host or 'no host'
    for m in mine:
        if (
            m.migration_type == 'evacuation'
            and m.status in EVACUATION_DONE
            and m.source_compute == facts.host
        ):
            return Verdict(
                EVACUATED,
                f'evacuated to {host} (migration '
                f'{m.uuid}); its allocations there stay',
                False,
                server.name,
            )
    return dataclasses.replace(
        _unless_forced(
            ELSEWHERE,
            f'instance {_label(server)} is on {host}, and no '
            f'evacuation or migration from {facts.host} explains its '
            f'allocations here',
            force,
        ),
        name=server.name,
    )


def _migration_verdict(m: Any, force: bool) -> Verdict:
    what = (
        f'{m.migration_type} {m.uuid} of instance {m.server_id} '
        f'({m.source_compute} -> {m.dest_compute})'
    )
    if m.status in ENDED:
        return Verdict(MIGRATION_ENDED, f'{what} is {m.status}', False)
    if m.status == UNCONFIRMED:
        return _unless_forced(
            NOT_CONFIRMED,
            f'{what} is finished but not confirmed: run '
            f'`openstack server resize confirm {m.server_id}` or '
            f'`openstack server resize revert {m.server_id}`',
            force,
        )
    if m.migration_type == 'live-migration':
        hint = (
            f'`openstack --os-compute-api-version 2.59 server migration '
            f'abort {m.server_id} {m.uuid}`'
        )
    else:
        hint = f'`openstack server migration list --server {m.server_id}`'
    return _unless_forced(
        MIGRATING,
        f'{what} is {m.status}: let it end (or abort it) first: {hint}',
        force,
    )


def _unless_forced(cls: str, detail: str, force: bool) -> Verdict:
    if force:
        return Verdict(cls, detail + ' (removed: --force)', False)
    return Verdict(
        cls, detail + '; or pass --force to remove its allocations here', True
    )


def _label(server: Any) -> str:
    return f'{server.name} ({server.id})' if server.name else server.id


def _worst(verdicts: Iterable[Verdict]) -> Verdict:
    """A consumer on the trees of several services: the verdict that
    blocks, if any."""
    verdicts = list(verdicts)
    return next((v for v in verdicts if v.blocks), verdicts[0])


class ServicePurge:
    def __init__(
        self,
        conn: Any,
        options: PurgeOptions | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        self.options = options or PurgeOptions()
        self.kinds = kinds_mod.build(SERVICE)
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.on_event = on_event

    # -- which services ----------------------------------------------------

    def resolve(self, names_or_ids: Sequence[str]) -> list[Any]:
        """The nova-compute services named by UUID or, if unambiguous, by
        host."""
        self._check_versions()
        services = self._read(
            'listing compute services',
            lambda: list(
                self.conn.compute.services(microversion=NOVA_VERSION)
            ),
        )
        out = []
        for wanted in names_or_ids:
            matches = [s for s in services if s.id == wanted] or [
                s
                for s in services
                if s.host == wanted and s.binary == 'nova-compute'
            ]
            if not matches:
                raise CascadeError(
                    f'No nova-compute service with ID or host {wanted!r}. '
                    f'With --purge-allocations, name the service by its '
                    f'UUID (`openstack --os-compute-api-version 2.53 '
                    f'compute service list`) or by its host.'
                )
            if len(matches) > 1:
                raise CascadeError(
                    f'More than one nova-compute service is on host '
                    f'{wanted!r}: '
                    + ', '.join(s.id for s in matches)
                    + '; name it by ID.'
                )
            if matches[0].binary != 'nova-compute':
                raise CascadeError(
                    f'Service {wanted} is {matches[0].binary} on '
                    f'{matches[0].host}: --purge-allocations is for '
                    f'nova-compute services.'
                )
            out.append(matches[0])
        return out

    def _check_versions(self) -> None:
        if not self.conn.has_service('placement'):
            raise CascadeError(
                '--purge-allocations needs Placement, which '
                'is not in the catalog.'
            )
        # what the service offers, not sdk's supports_microversion: that
        # also says no below a --os-<service>-api-version the user gave,
        # and every call here pins its own microversion
        for adapter, version, what in (
            (self.conn.compute, NOVA_VERSION, 'compute'),
            (self.conn.placement, PLACEMENT_VERSION, 'placement'),
        ):
            data = self._read(
                f'reading the {what} API versions', adapter.get_endpoint_data
            )
            if not (
                data
                and data.max_microversion
                and discover.version_between(
                    data.min_microversion, data.max_microversion, version
                )
            ):
                raise CascadeError(
                    f'--purge-allocations needs the {what} API '
                    f'microversion {version} or later, which this cloud '
                    f'does not offer.'
                )

    # -- planning ----------------------------------------------------------

    def plan(self, services: Sequence[Any]) -> Plan:
        hypervisors = self._read(
            'listing hypervisors',
            lambda: list(
                self.conn.compute.hypervisors(
                    details=True, microversion=NOVA_VERSION
                )
            ),
        )
        providers = self._read(
            'listing resource providers',
            lambda: placement.list_providers(self.conn),
        )
        notes: list[str] = []
        nodes = {
            s.id: {
                h.id: h.name
                for h in hypervisors
                if (h.service_details or {}).get('id') == s.id
            }
            for s in services
        }
        trees = {
            s.id: self._tree(s, nodes[s.id], hypervisors, providers, notes)
            for s in services
        }
        service_of = {
            p['uuid']: sid for sid, tree in trees.items() for p in tree
        }
        held = self._consumers(list(service_of))
        owners = {
            c: sorted({service_of[rp] for rp in rps})
            for c, rps in held.items()
        }
        facts = {s.id: self._facts(s) for s in services}
        unexplained = [
            c
            for c in held
            if not any(
                c in facts[sid].servers or facts[sid].migration(c)
                for sid in owners[c]
            )
        ]
        found = dict(
            zip(
                unexplained,
                self._each(
                    lambda c: f'looking up consumer {c} in nova',
                    self._find,
                    unexplained,
                ),
            )
        )

        refs: list[ResourceRef] = []
        for consumer, rps in sorted(held.items()):
            verdict = _worst(
                classify(
                    consumer,
                    facts[sid],
                    found.get(consumer),
                    self.options.force,
                )
                for sid in owners[consumer]
            )
            refs.append(
                _allocation_ref(
                    consumer, owners[consumer], sorted(rps), verdict
                )
            )
        refs += self._unheld_blockers(services, facts, held, notes)
        for service in services:
            refs += self._provider_refs(
                service, nodes[service.id], trees[service.id], notes
            )
            if service.state == 'up':
                notes.append(
                    f'nova-compute on {service.host} is up: stop it first, '
                    f'or it re-creates its providers and its service'
                )
        # build_plan's owner check: everything here belongs to a service
        plan = build_plan(
            Inventory(refs),
            self.kinds,
            [{'id': s.id, 'name': s.host} for s in services],
        )
        plan.notes.extend(notes)
        return plan

    def _tree(
        self,
        service: Any,
        nodes: dict[str, str],
        hypervisors: list[Any],
        providers: list[dict],
        notes: list[str],
    ) -> list[dict]:
        """The provider trees of the service's compute nodes (a node's UUID
        is its root provider's), and a root that has the name of one of
        its nodes but belongs to no node: the orphan that an earlier delete
        of this host left, which stops nova from creating the new one."""
        roots = set(nodes)
        nova_nodes = {h.id for h in hypervisors}
        names = set(nodes.values()) | {service.host}
        for p in providers:
            if (
                p['uuid'] == p['root_provider_uuid']
                and p['name'] in names
                and p['uuid'] not in nova_nodes
            ):
                roots.add(p['uuid'])
                notes.append(
                    f'resource provider {p["name"]} ({p["uuid"]}) '
                    f'is no compute node nova knows but has the '
                    f'name of one of {service.host}: purged as '
                    f'the orphan of an earlier delete'
                )
        return [p for p in providers if p['root_provider_uuid'] in roots]

    @staticmethod
    def _provider_refs(
        service: Any, nodes: dict[str, str], tree: list[dict], notes: list[str]
    ) -> list[ResourceRef]:
        """The service and its providers; a node without a provider too:
        the service delete gives it an empty one for nova to delete."""
        found = {p['uuid'] for p in tree}
        missing = [
            {
                'uuid': uuid,
                'name': name,
                'parent_provider_uuid': None,
                'root_provider_uuid': uuid,
            }
            for uuid, name in nodes.items()
            if uuid not in found
        ]
        for p in missing:
            notes.append(
                f'compute node {p["name"]} ({p["uuid"]}) has no '
                f'resource provider: nova cannot delete the '
                f'service then (500), so the purge creates an '
                f'empty one for nova to delete'
            )
        refs = [
            ResourceRef(
                kind=kinds.ComputeService.name,
                id=service.id,
                name=service.host,
                project_id=service.id,
                attrs={
                    'nodes': nodes,
                    'roots': sorted({p['root_provider_uuid'] for p in tree}),
                },
            )
        ]
        refs += [
            ResourceRef(
                kind=kinds.ResourceProvider.name,
                id=p['uuid'],
                name=p['name'],
                project_id=service.id,
                attrs={
                    'parent': p.get('parent_provider_uuid'),
                    'service': service.id,
                    'host': service.host,
                    'node': p['uuid'] in nodes,
                },
            )
            for p in tree + missing
        ]
        return refs

    def _consumers(self, providers: list[str]) -> dict[str, set[str]]:
        """Each consumer with allocations on the providers, and on which."""
        held: dict[str, set[str]] = {}
        answers = self._each(
            lambda rp: f'reading the allocations of resource provider {rp}',
            self._allocations_of,
            providers,
        )
        for rp, consumers in zip(providers, answers):
            for consumer in consumers:
                held.setdefault(consumer, set()).add(rp)
        return held

    def _allocations_of(self, provider: str) -> list[str]:
        try:
            return list(placement.allocations_on(self.conn, provider))
        except sdk_exc.NotFoundException:
            return []  # deleted since the listing

    def _facts(self, service: Any) -> HostFacts:
        host = service.host
        servers = self._read(
            f'listing the instances on {host}',
            lambda: {
                s.id: s
                for s in self.conn.compute.servers(
                    details=True,
                    all_projects=True,
                    compute_host=host,
                    microversion=NOVA_VERSION,
                )
            },
        )
        migrations = self._read(
            f'listing the migrations from or to {host}',
            lambda: list(
                self.conn.compute.migrations(
                    host=host, microversion=NOVA_VERSION
                )
            ),
        )
        return HostFacts(host, servers, migrations)

    def _find(self, consumer: str) -> Found:
        compute = self.conn.compute
        try:
            return Found(server=compute.get_server(consumer))
        except sdk_exc.NotFoundException:
            pass
        try:
            # from 2.21 nova shows the actions of a deleted instance, and
            # 404 for a UUID it never had (or has archived)
            list(compute.server_actions(consumer, microversion=NOVA_VERSION))
        except sdk_exc.NotFoundException:
            return Found()
        return Found(deleted=True)

    def _unheld_blockers(
        self,
        services: Sequence[Any],
        facts: dict[str, HostFacts],
        held: dict[str, set[str]],
        notes: list[str],
    ) -> list[ResourceRef]:
        """What makes nova refuse the service delete without holding
        anything on the trees: instances on the host, unfinished
        migrations (with --force, a note for each: nova still refuses)."""
        refs = []
        for service in services:
            f = facts[service.id]
            for server in f.servers.values():
                if server.id not in held:
                    refs.append(
                        _allocation_ref(
                            server.id,
                            [service.id],
                            [],
                            classify(server.id, f, None, False),
                        )
                    )
            for m in f.migrations:
                if m.status in ENDED:
                    continue
                if self.options.force:
                    notes.append(
                        f'nova refuses to delete the service of {f.host} '
                        f'while {m.migration_type} {m.uuid} of instance '
                        f'{m.server_id} is {m.status}: --force removes the '
                        f'allocations, but the service and its compute '
                        f'nodes\' providers stay'
                    )
                elif m.uuid not in held and m.server_id not in held:
                    refs.append(
                        _allocation_ref(
                            m.uuid,
                            [service.id],
                            [],
                            _migration_verdict(m, False),
                        )
                    )
        return refs

    # -- execution ---------------------------------------------------------

    def execute(self, plan: Plan) -> RunResult:
        if plan.kept():
            raise CascadeError(blocked_message(plan))
        return Executor(
            self.conn,
            self.kinds,
            parallel=self.options.parallel,
            timeout=self.options.timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=self.on_event,
        ).run(plan)

    # -- reading -----------------------------------------------------------

    def _read(self, what: str, call: Callable[[], Any]) -> Any:
        """A read, retried while the cloud answers 429, 5xx or does not
        answer; any other error is one clear line, before anything was
        changed."""
        try:
            return retrying(
                call,
                retry=self.retry,
                clock=self.clock,
                attempts=min(READ_ATTEMPTS, self.retry.max_attempts),
            )
        except Exception as exc:
            raise CascadeError(read_error(what, exc)) from exc

    def _each(
        self,
        what: Callable[[Any], str],
        fn: Callable[[Any], Any],
        items: Sequence[Any],
    ) -> list[Any]:
        """``fn`` of every item, ``parallel`` at a time (a service of an
        ironic cloud has hundreds of providers to read)."""
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=self.options.parallel, thread_name_prefix='purge'
        ) as pool:
            return list(
                pool.map(
                    lambda item: self._read(what(item), lambda: fn(item)),
                    items,
                )
            )


def _allocation_ref(
    consumer: str, services: list[str], providers: list[str], verdict: Verdict
) -> ResourceRef:
    return ResourceRef(
        kind=kinds.Allocation.name,
        id=consumer,
        name=verdict.name,
        project_id=services[0],
        attrs={
            'providers': providers,
            'services': services,
            'blocks': verdict.blocks,
            'class': verdict.cls,
            'detail': verdict.detail,
        },
    )


def read_error(what: str, exc: Exception) -> str:
    code = status_code(exc)
    detail = ' '.join(str(exc).split()) or type(exc).__name__
    if code == 403:
        return (
            f'{what} was refused (HTTP 403): --purge-allocations needs '
            f'the admin role. Nothing was changed. {detail}'
        )
    return f'{what} failed, so nothing was changed: {detail}'


# -- what the command shows --------------------------------------------

PLAN_COLUMNS = ('Stage', 'Action', 'Kind', 'ID', 'Name', 'Class', 'Detail')
BLOCKER_COLUMNS = ('Consumer', 'Class', 'Providers', 'Why, and what to do')
SUMMARY_COLUMNS = ('Kind', 'Done', 'Failed', 'Skipped')


def plan_rows(plan: Plan) -> list[tuple[Any, ...]]:
    """Consumers with their class and action, providers in deletion order,
    the services last."""
    names = _provider_names(plan)
    stages = plan.stages()
    rows = []
    for step_id in plan.order():
        step = plan.steps[step_id]
        ref = step.target
        if ref.kind == kinds.Allocation.name:
            action = 'block' if step.action == KEEP else 'remove'
            cls, detail = ref.attrs['class'], ref.attrs['detail']
        elif ref.kind == kinds.ResourceProvider.name:
            action = step.action
            parent = ref.attrs.get('parent')
            if parent:
                cls, detail = (
                    'nested provider',
                    (f'in {names.get(parent, parent)}'),
                )
            elif ref.attrs.get('node'):
                cls, detail = (
                    'compute node',
                    ('nova deletes it with the service; checked after'),
                )
            else:
                cls, detail = 'orphan provider', ''
        else:
            action, cls, detail = step.action, 'nova-compute', ''
        rows.append(
            (stages[step_id], action, ref.kind, ref.id, ref.name, cls, detail)
        )
    return rows


def blocker_rows(plan: Plan) -> list[tuple[Any, ...]]:
    names = _provider_names(plan)
    return sorted(
        (
            s.target.id,
            s.target.attrs['class'],
            [names.get(p, p) for p in s.target.attrs['providers']],
            s.params['reason'],
        )
        for s in plan.kept()
    )


def _provider_names(plan: Plan) -> dict[str, str]:
    return {
        s.target.id: s.target.name
        for s in plan.steps.values()
        if s.target.kind == kinds.ResourceProvider.name
    }


def blocked_message(plan: Plan) -> str:
    return (
        f'Nothing was changed: {len(plan.kept())} consumer(s) of the '
        f'service\'s resource providers block the purge (listed '
        f'above).'
    )


def failure_message(result: RunResult) -> str:
    failed = result.by_outcome(FAILED)
    skipped = result.by_outcome(SKIPPED)
    kept = [
        r.step.target
        for r in result.results.values()
        if r.step.target.kind == kinds.ComputeService.name
        and r.outcome != DONE
    ]
    return (
        f'The purge did not finish: {len(failed)} step(s) failed, '
        f'{len(skipped)} skipped. '
        + ' '.join(f'{r.step.describe()}: {r.error}.' for r in failed)
        + (
            ' Not deleted: compute service(s) '
            + ', '.join(f'{s.name} ({s.id})' for s in kept)
            + '.'
            if kept
            else ''
        )
        + ' Run the command again once the cause is fixed: what is '
        'done stays done.'
    )
