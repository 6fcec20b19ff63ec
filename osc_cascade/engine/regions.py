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

"""The regions a workflow works in, with one SDK connection to each.

Keystone is global, every other service is per region: what a project owns
in RegionTwo is invisible to a connection to RegionOne. The regions come
from the token's catalog; a service whose endpoint is the same URL in
several regions (one Glance or Swift shared by all) is one service, listed
in the first of them only, or its resources would be planned twice.
"""

from __future__ import annotations

from collections.abc import Sequence
import threading
from typing import Any

from osc_cascade.api import scopes, session_costs
from osc_cascade.engine.errors import CascadeError

#: the region of what is global (Keystone's projects and credentials)
GLOBAL = ''


class Regions:
    """``only`` narrows the catalog's regions to those named (``--region``);
    a name the catalog does not have is refused."""

    def __init__(self, conn: Any, only: Sequence[str] = ()):
        self.conn = conn
        # every region's connection shares this one's HTTP session
        session_costs.once_per_run(conn)
        self._lock = threading.Lock()
        self._connections: dict[str, Any] = {GLOBAL: conn}
        self._of_service: dict[str, list[str]] = {}
        self.catalog = sorted(
            {
                endpoint.region_name or GLOBAL
                for endpoints in self._access().values()
                for endpoint in endpoints
            }
        )
        unknown = sorted(set(only) - set(self.catalog))
        if unknown:
            raise CascadeError(
                f'No region {", ".join(unknown)} in the catalog; its '
                f'regions are {", ".join(self.catalog) or "none"}.'
            )
        #: the regions worked in
        self.names = sorted(set(only)) if only else self.catalog
        #: the catalog's regions left out by ``only``
        self.others = [r for r in self.catalog if r not in self.names]

    @classmethod
    def client(cls, conn: Any) -> Regions:
        """Only the region the client points at (``--os-region-name``),
        or the whole catalog if it names none."""
        region = conn.config.get_region_name()
        return cls(conn, [region] if region else ())

    def _access(self, service_type: str | None = None) -> dict[str, list]:
        session = self.conn.session
        catalog = session.auth.get_access(session).service_catalog
        return catalog.get_endpoints_data(
            service_type=service_type,
            interface=self.conn.config.get_interface(service_type),
        )

    def of_service(
        self, service_type: str, among: Sequence[str] = ()
    ) -> list[str]:
        """The regions (of ``among``, by default those worked in) that
        offer the service, one per distinct endpoint URL: a URL shared by
        several regions belongs to the first of the catalog's regions that
        has it, whether or not that one is worked in."""
        with self._lock:
            if service_type not in self._of_service:
                by_url: dict[str, str] = {}
                for endpoints in self._access(service_type).values():
                    for endpoint in endpoints:
                        url = (endpoint.url or '').rstrip('/')
                        region = endpoint.region_name or GLOBAL
                        if url not in by_url or region < by_url[url]:
                            by_url[url] = region
                self._of_service[service_type] = sorted(set(by_url.values()))
        wanted = among or self.names
        return [r for r in self._of_service[service_type] if r in wanted]

    def connection(self, region: str) -> Any:
        """The SDK connection to ``region``: the same session and token
        (one authentication), its own proxies; GLOBAL is the client's."""
        with self._lock:
            if region not in self._connections:
                self._connections[region] = scopes.sibling(
                    self.conn, region=region
                )
            return self._connections[region]
