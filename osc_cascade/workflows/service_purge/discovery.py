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

"""What a purge plans from: the services' compute nodes and their
Placement provider trees, the allocations on them and what nova says of
each consumer; the plan built from it (``refs``) changes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import placement
from osc_cascade.api.placement import NOVA_VERSION
from osc_cascade.engine.planner import Inventory, Plan, build_plan
from osc_cascade.workflows.consumers import (
    Found,
    HostFacts,
)
from osc_cascade.workflows.service_purge import refs as plan_refs
from osc_cascade.workflows.service_purge.base import PurgeBase


class PurgePlanner(PurgeBase):
    """Read the cloud and plan the purge."""

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
            s.id: plan_refs.tree(s, nodes[s.id], hypervisors, providers, notes)
            for s in services
        }
        owners = self._owners() if any(trees.values()) else {}
        kept = {
            sid: plan_refs.not_novas(tree, owners)
            for sid, tree in trees.items()
        }
        # what is not nova's is not the purge's: its allocations stay
        service_of = {
            p['uuid']: sid
            for sid, tree in trees.items()
            for p in tree
            if p['uuid'] not in kept[sid]
        }
        held = self._consumers(list(service_of))
        services_of = {
            c: sorted({service_of[rp] for rp in rps})
            for c, rps in held.items()
        }
        facts = {s.id: self._facts(s) for s in services}
        unexplained = [
            c
            for c in held
            if not any(
                c in facts[sid].servers or facts[sid].migration(c)
                for sid in services_of[c]
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

        refs = plan_refs.classified(
            held, services_of, facts, found, self.force
        )
        refs += plan_refs.unheld_blockers(
            services, facts, held, notes, self.force
        )
        for service in services:
            refs += plan_refs.provider_refs(
                service,
                nodes[service.id],
                trees[service.id],
                notes,
                kept[service.id],
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

    def _owners(self) -> dict[str, set[str]]:
        """The OWNER_* traits of each provider that has one: one call for
        the owner traits Placement knows, then one provider list for each
        (1 + 2 calls with os-traits 2.8 to 3.9), however many providers
        the trees have; one call where Placement knows none."""
        traits = sorted(
            self._read(
                'listing the owner traits',
                lambda: placement.owner_traits(self.conn),
            )
        )
        answers = self._each(
            lambda t: f'listing the resource providers with trait {t}',
            lambda t: placement.providers_with(self.conn, t),
            traits,
        )
        owners: dict[str, set[str]] = {}
        for trait, uuids in zip(traits, answers):
            for uuid in uuids:
                owners.setdefault(uuid, set()).add(trait)
        return owners

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
