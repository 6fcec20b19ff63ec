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

"""The purge plan's resources, made from what was read (no calls): the
allocations with their verdicts, the provider trees of the services'
compute nodes, the services, and what blocks without holding anything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from osc_cascade.api.placement import OWNER_NOVA, OWNER_PREFIX
from osc_cascade.engine.resource import ResourceRef
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


def classified(
    held: dict[str, set[str]],
    owners: dict[str, list[str]],
    facts: dict[str, HostFacts],
    found: dict[str, Found],
    force: bool,
) -> list[ResourceRef]:
    """The allocation of each consumer on the trees, with its verdict on
    the host of each service whose trees it holds: the one that blocks."""
    return [
        allocation_ref(
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


def tree(
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


def not_novas(tree: list[dict], owners: dict[str, set[str]]) -> dict[str, str]:
    """The providers of ``tree`` that are not nova's to delete, each with
    why, in one line; ``owners``: the OWNER_* traits of each provider.

    Where no provider of a node's tree has an owner trait (nova before
    34, and no Cyborg that sets one), every provider is nova's, as
    before. Where one has, a provider with another owner's trait is that
    owner's (also if it carries OWNER_NOVA too: in doubt, keep), and a
    child without any is not nova's either (Neutron's agents, Cyborg's
    FPGAs); the root is the compute node, nova's unless it carries
    another owner's trait."""
    kept: dict[str, str] = {}
    for root in sorted({p['root_provider_uuid'] for p in tree}):
        members = [p for p in tree if p['root_provider_uuid'] == root]
        marked = sorted(
            {t for p in members for t in owners.get(p['uuid'], ())}
        )
        if not marked:
            continue
        for p in members:
            traits = owners.get(p['uuid'], set())
            others = sorted(traits - {OWNER_NOVA})
            label = f'resource provider {p["name"]} ({p["uuid"]})'
            if others:
                whose = ' and '.join(
                    f"{t[len(OWNER_PREFIX) :].capitalize()}'s" for t in others
                )
                also = (
                    f', though also marked {OWNER_NOVA}'
                    if OWNER_NOVA in traits
                    else ''
                )
                kept[p['uuid']] = (
                    f'{label} is {whose} ({", ".join(others)}){also}: '
                    f"not Nova's to delete"
                )
            elif not traits and p['uuid'] != root:
                kept[p['uuid']] = (
                    f'{label} has no owner trait, where its tree has '
                    f'{", ".join(marked)}: not Nova\'s to delete'
                )
    return kept


def provider_refs(
    service: Any,
    nodes: dict[str, str],
    tree: list[dict],
    notes: list[str],
    kept: dict[str, str] | None = None,
) -> list[ResourceRef]:
    """The service and its providers; a node without a provider too:
    the service delete gives it an empty one for nova to delete. A
    provider in ``kept`` (``not_novas``) is kept, with its line."""
    kept = kept or {}
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
                **({'keep': kept[p['uuid']]} if p['uuid'] in kept else {}),
            },
        )
        for p in tree + missing
    ]
    return refs


def unheld_blockers(
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
                    allocation_ref(
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
                    allocation_ref(
                        m.uuid,
                        [service.id],
                        [],
                        migration_verdict(m, False),
                    )
                )
    return refs


def allocation_ref(
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
