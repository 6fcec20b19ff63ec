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

"""The services' status during a purge: an enabled service is disabled
for the run (``DISABLED_REASON``) and enabled again if the purge stops
before nova deletes it, unless someone changed it meanwhile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from osc_cascade.api import placement
from osc_cascade.api.placement import NOVA_VERSION
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.retry import checked
from osc_cascade.workflows.service_purge.base import PurgeBase

#: still says so is enabled again
DISABLED_REASON = (
    'osc-cascade: compute service delete --purge-allocations in progress'
)


class ServiceStatus(PurgeBase):
    """Disable the services for a purge, and enable them again."""

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
