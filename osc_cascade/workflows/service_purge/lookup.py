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

"""Which compute services a purge works on: the region whose Nova has
them, the nova-compute services named, and the API versions it needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keystoneauth1 import discover

from osc_cascade.api.placement import NOVA_VERSION, PLACEMENT_VERSION
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.regions import Regions
from osc_cascade.workflows.service_purge.base import PurgeBase


class ServiceLookup(PurgeBase):
    """Find the services to purge and check the cloud can."""

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
