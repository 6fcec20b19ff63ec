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

"""``compute service delete --purge-allocations``: resolve, plan, run.

Nova's delete of a compute service removes the allocations it knows of and
deletes the host's resource providers, but it ignores Placement's 409 when a
provider still has allocations and deletes the service anyway: the providers
are orphaned. The purge therefore:

1. resolves the services and finds their compute nodes (one paged
   hypervisor list) and the nodes' provider trees (one provider list);
2. reads the allocations on those providers and classifies each consumer
   with what nova says of it (``consumers.classify``);
3. plans: remove the trees' share of the consumers that are left-overs,
   keep (and refuse on) the ones that are not, delete the nested providers
   children first, then the service, whose delete in nova removes its
   nodes' providers (it fails if one is already gone), then check that
   those are gone;
4. runs that plan with the executor; nothing runs while anything blocks.
   An enabled service is disabled first (``disabled_reason`` naming
   osc-cascade), so that the scheduler places nothing new on the host
   while its allocations go, and its consumers are read again: the plan
   that runs is the one read with the host disabled, and it may not hold
   more than the plan shown (a blocker, or anything new, refuses). If the
   purge is refused or stops before nova deletes the service, the service
   is enabled again, unless someone changed it meanwhile. A service that
   was disabled already is left as it is.

Planning changes nothing: a dry run only says that a service would be
disabled. The command (``v1.compute_service``) confirms and shows the
plan, the blockers and the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import concurrent.futures
from typing import Any

from keystoneauth1 import discover
from openstack import exceptions as sdk_exc

from osc_cascade import kinds
from osc_cascade.api import placement
from osc_cascade.api.placement import NOVA_VERSION, PLACEMENT_VERSION
from osc_cascade.engine import resource
from osc_cascade.engine.errors import CascadeError, Interrupted
from osc_cascade.engine.executor import DONE, Event, Executor, RunResult
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds.base import SERVICE
from osc_cascade.kinds.placement import (
    Allocation,
    ComputeService,
    ResourceProvider,
)
from osc_cascade.workflows.consumers import (
    ENDED,
    Found,
    HostFacts,
    Verdict,
    classify,
    migration_verdict,
    worst,
)
from osc_cascade.workflows.stopping import Stop, steps_done

#: reads give up sooner than deletes: nothing was changed yet
READ_ATTEMPTS = 4
#: what nova shows of a service the purge disabled; only a service that
#: still says so is enabled again
DISABLED_REASON = (
    'osc-cascade: compute service delete --purge-allocations in progress'
)


class ServicePurge:
    def __init__(
        self,
        conn: Any,
        *,
        force: bool = False,
        parallel: int = 10,
        timeout: float = 600.0,
        on_event: Callable[[Event], None] | None = None,
        notify: Callable[[str], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        #: the region the services are in (``locate``); '' if not located
        self.region = ''
        #: told what is done to the services' status
        self.notify = notify or (lambda text: None)
        #: remove the allocations of unfinished migrations and of consumers
        #: nova cannot explain, instead of refusing
        self.force = force
        self.parallel = parallel
        self.timeout = timeout
        self.kinds = kinds.build(SERVICE)
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.on_event = on_event
        #: a signal stops the purge politely (``interrupt``)
        self.stop = Stop()
        #: what the last run did, also when it was interrupted
        self.result: RunResult | None = None

    # -- which services ----------------------------------------------------

    def locate(self, regions: Regions, names_or_ids: Sequence[str]) -> str:
        """The region whose Nova has the services named; the purge then
        works there (its Nova and Placement). A name found in two regions
        is refused with both named, and so are services of two regions."""
        where = regions.of_service('compute')
        if len(where) < 2:
            self.region = where[0] if where else ''
            self.conn = regions.connection(self.region)
            return self.region
        found: dict[str, list[str]] = {}
        for region in where:
            services = self._read(
                f'listing compute services in {region}',
                lambda region=region: list(
                    regions.connection(region).compute.services(
                        microversion=NOVA_VERSION
                    )
                ),
            )
            for wanted in names_or_ids:
                if any(
                    s.id == wanted
                    or (s.host == wanted and s.binary == 'nova-compute')
                    for s in services
                ):
                    found.setdefault(wanted, []).append(region)
        for wanted, in_regions in sorted(found.items()):
            if len(in_regions) > 1:
                raise CascadeError(
                    f'Compute service {wanted!r} is in more than one '
                    f'region: {", ".join(in_regions)}. Name the region '
                    f'with --region.'
                )
        chosen = sorted({r for rs in found.values() for r in rs})
        if len(chosen) > 1:
            raise CascadeError(
                'The compute services named are in different regions ('
                + ', '.join(
                    f'{w} in {rs[0]}' for w, rs in sorted(found.items())
                )
                + '): purge one region at a time.'
            )
        self.region = chosen[0] if chosen else regions.names[0]
        self.conn = regions.connection(self.region)
        return self.region

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
            s.id: _tree(s, nodes[s.id], hypervisors, providers, notes)
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

        refs = _classified(held, owners, facts, found, self.force)
        refs += _unheld_blockers(services, facts, held, notes, self.force)
        for service in services:
            refs += _provider_refs(
                service, nodes[service.id], trees[service.id], notes
            )
            if service.state == 'up':
                notes.append(
                    f'nova-compute on {service.host} is up: stop it first, '
                    f'or it re-creates its providers and its service'
                )
            if service.status == 'enabled':
                notes.append(
                    f'compute service {service.host} ({service.id}) is '
                    f'enabled: the purge disables it first, so that '
                    f'nothing new is placed on it, and enables it again if '
                    f'it stops before the service is deleted'
                )
        # build_plan's owner check: everything here belongs to a service
        plan = build_plan(
            Inventory(r.in_region(self.region) for r in refs),
            self.kinds,
            [{'id': s.id, 'name': s.host} for s in services],
        )
        plan.notes.extend(notes)
        return plan

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

    # -- execution ---------------------------------------------------------

    def execute(self, plan: Plan) -> RunResult:
        """Run the plan; the services that are enabled are disabled for
        the run, and enabled again if it does not delete them."""
        refuse_blocked(plan)
        ids = [
            s.target.id
            for s in plan.steps.values()
            if s.target.kind == ComputeService.name
        ]
        services = self._services_now(ids)
        enabled = [s for s in services if s.status == 'enabled']
        if not enabled:
            result = self._run(plan)
            self._check_stop(result, [])
            return result
        self._disable(enabled)
        try:
            plan = self._read_again(plan, services)
            self.stop.check(
                'nothing was removed. Run the command again to purge.'
            )
            result = self._run(plan)
        except Interrupted as exc:
            restored = self._restore(enabled)
            raise Interrupted(
                ' '.join([str(exc), *restored]), exc.signum
            ) from exc
        except CascadeError as exc:
            restored = self._restore(enabled)
            raise CascadeError(' '.join([str(exc), *restored])) from exc
        except BaseException:
            self._restore(enabled)
            raise
        deleted = {
            sid
            for sid in ids
            if getattr(
                result.results.get(
                    resource.delete(
                        ResourceRef(
                            ComputeService.name, sid, region=self.region
                        )
                    ).id
                ),
                'outcome',
                None,
            )
            == DONE
        }
        restored = self._restore([s for s in enabled if s.id not in deleted])
        self._check_stop(result, restored)
        return result

    def interrupt(self, signum: int) -> None:
        """Stop the purge (from a signal handler): nothing more starts,
        what is in flight finishes, and a service it disabled and did not
        delete is enabled again, as after a refusal."""
        self.stop(signum)

    def _check_stop(self, result: RunResult, restored: list[str]) -> None:
        self.stop.check(
            ' '.join(
                [
                    f'{steps_done(result.results.values())}.',
                    *restored,
                    'Run the command again to finish: what is done stays '
                    'done.',
                ]
            )
        )

    def _run(self, plan: Plan) -> RunResult:
        executor = Executor(
            self.conn,
            self.kinds,
            parallel=self.parallel,
            timeout=self.timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=self.on_event,
        )
        with self.stop.running(executor):
            self.result = executor.run(plan)
        return self.result

    # -- the services' status ------------------------------------------------

    def _services_now(
        self, ids: Sequence[str], *, changed: bool = False
    ) -> list[Any]:
        """The services of ``ids`` that exist, as nova has them now
        (``changed``: read after the purge changed something)."""
        what = 'listing compute services'

        def call() -> list[Any]:
            return list(self.conn.compute.services(microversion=NOVA_VERSION))

        listed = (
            checked(
                what,
                call,
                retry=self.retry,
                clock=self.clock,
                needs='--purge-allocations needs the admin role',
            )
            if changed
            else self._read(what, call)
        )
        return [s for s in listed if s.id in ids]

    def _set_status(
        self, service: Any, status: str, reason: str | None = None
    ) -> None:
        checked(
            f'{"disabling" if reason else "enabling"} compute service '
            f'{service.host} ({service.id})',
            lambda: placement.set_service_status(
                self.conn, service.id, status, reason
            ),
            retry=self.retry,
            clock=self.clock,
            needs='--purge-allocations needs the admin role',
        )

    def _disable(self, services: Sequence[Any]) -> None:
        """Disable each service; if one fails, the others go back."""
        done: list[Any] = []
        for service in services:
            try:
                self._set_status(service, 'disabled', DISABLED_REASON)
            except CascadeError as exc:
                restored = self._restore(done)
                raise CascadeError(
                    ' '.join([f'{exc}. Nothing was removed.', *restored])
                ) from exc
            done.append(service)
            self.notify(
                f'disabled compute service {service.host} ({service.id}) '
                f'for the purge: nothing new is placed on it'
            )

    def _read_again(self, shown: Plan, services: Sequence[Any]) -> Plan:
        """The plan read again with the hosts disabled: what landed on
        them before refuses, and so does anything the plan shown did not
        hold."""
        plan = self.plan(services)
        if plan.kept():
            raise CascadeError(
                f'Nothing was removed: with the service(s) disabled, '
                f'{len(plan.kept())} consumer(s) block the purge: '
                + ', '.join(
                    f'{s.target.id} ({s.target.attrs["class"]})'
                    for s in plan.kept()
                )
                + '.'
            )
        new = sorted(set(plan.steps) - set(shown.steps))
        if new:
            raise CascadeError(
                f'Nothing was removed: the service(s) changed since the '
                f'plan was shown ({", ".join(new)}); run the command again.'
            )
        return plan

    def _restore(self, services: Sequence[Any]) -> list[str]:
        """Enable again the services the purge disabled and did not
        delete, unless their status was changed meanwhile; what became of
        each, one sentence each (also told)."""
        if not services:
            return []
        lines: list[str] = []
        now: dict[str, Any] | None
        try:
            found = self._services_now([s.id for s in services], changed=True)
            now = {s.id: s for s in found}
        except CascadeError as exc:
            now = None  # unknown: enable them all the same
            lines.append(f'Could not read the services again: {exc}.')
        for service in services:
            what = f'compute service {service.host} ({service.id})'
            current = now.get(service.id) if now is not None else None
            if now is not None and current is None:
                continue  # deleted after all
            if current is not None and (
                current.status != 'disabled'
                or current.disabled_reason != DISABLED_REASON
            ):
                lines.append(
                    f'{what} was not enabled again: its status was changed '
                    f'meanwhile ({current.status}: '
                    f'{current.disabled_reason or "no reason"}).'
                )
                continue
            try:
                self._set_status(service, 'enabled')
            except CascadeError as exc:
                lines.append(
                    f'{what} stays disabled: {exc}; enable it with '
                    f'`openstack compute service set --enable '
                    f'{service.host} nova-compute`.'
                )
            else:
                lines.append(
                    f'{what} was enabled again: the purge did not delete it.'
                )
        for line in lines:
            self.notify(line)
        return lines

    # -- reading -----------------------------------------------------------

    def _read(self, what: str, call: Callable[[], Any]) -> Any:
        """A read, retried while the cloud answers 429, 5xx or does not
        answer; any other error is one clear line, before anything was
        changed."""
        return checked(
            what,
            call,
            retry=self.retry,
            clock=self.clock,
            attempts=min(READ_ATTEMPTS, self.retry.max_attempts),
            needs='--purge-allocations needs the admin role',
            outcome='Nothing was changed',
        )

    def _each(
        self,
        what: Callable[[Any], str],
        fn: Callable[[Any], Any],
        items: Sequence[Any],
    ) -> list[Any]:
        """``fn`` of every item, ``parallel`` at a time (a service of an
        ironic cloud has hundreds of providers to read)."""
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=self.parallel, thread_name_prefix='purge'
        ) as pool:
            return list(
                pool.map(
                    lambda item: self._read(what(item), lambda: fn(item)),
                    items,
                )
            )


# -- the plan's resources, from what was read (no calls) -------------------


def _classified(
    held: dict[str, set[str]],
    owners: dict[str, list[str]],
    facts: dict[str, HostFacts],
    found: dict[str, Found],
    force: bool,
) -> list[ResourceRef]:
    """The allocation of each consumer on the trees, with its verdict on
    the host of each service whose trees it holds: the one that blocks."""
    return [
        _allocation_ref(
            consumer,
            owners[consumer],
            sorted(rps),
            worst(
                classify(consumer, facts[sid], found.get(consumer), force)
                for sid in owners[consumer]
            ),
        )
        for consumer, rps in sorted(held.items())
    ]


def _tree(
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
            kind=ComputeService.name,
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
            kind=ResourceProvider.name,
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


def _unheld_blockers(
    services: Sequence[Any],
    facts: dict[str, HostFacts],
    held: dict[str, set[str]],
    notes: list[str],
    force: bool,
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
            if force:
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
                        migration_verdict(m, False),
                    )
                )
    return refs


def _allocation_ref(
    consumer: str, services: list[str], providers: list[str], verdict: Verdict
) -> ResourceRef:
    return ResourceRef(
        kind=Allocation.name,
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


def refuse_blocked(plan: Plan) -> None:
    """Nothing runs while a consumer blocks: the plan keeps it."""
    if plan.kept():
        raise CascadeError(
            f'Nothing was changed: {len(plan.kept())} consumer(s) of the '
            f'service\'s resource providers block the purge (listed '
            f'above).'
        )
