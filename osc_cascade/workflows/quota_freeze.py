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

"""The freeze of each service's quotas in each region: what a project may
create, set to what it holds, so that a token a service validated before
the drain (and keeps in its cache for keystonemiddleware's
``token_cache_time``, 300 s by default) can create nothing either.

``kinds.quota.QUOTA_APIS`` says how each service takes it. Every value is
read back; one that did not take is a note, and the cascade's verification
rounds (and ``--settle``) still catch what is created. Cinder refuses a
limit below usage, so its freeze is at usage, and ``lower`` brings it down
(``workflows.lowering``). Here too: the restore of the values before, the
release (reset) of the frozen ones once the project is gone, and what a
freeze cannot cover (``unfrozen``).

``Freezes`` makes each API call through ``call(what, fn)`` (retried, one
line on failure): the drain's ``_retried_api_call``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import dataclasses
from typing import Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.retry import is_gone
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.quota import QuotaApi
from osc_cascade.workflows.drain_record import FAILED, FROZEN, INTENT

#: runs one API call: ``call(what, fn)``
Call = Callable[[str, Callable[[], Any]], Any]

#: why the drain freezes no quota of a service, where it is more than
#: "no per-project quota" (what the plan's note says)
WHY_UNFROZEN = {
    'object-store': "Swift's account quota checks object PUTs only, not "
    "containers nor a reseller admin's PUTs",
    'image': 'Glance limits a project only through Keystone unified limits, '
    'frozen only where Keystone has them registered',
    'dns': "Designate's quotas are not frozen",
    'database': "Trove's quotas are not frozen",
}


@dataclasses.dataclass
class Freeze:
    """One service's freeze in one region, as the drain's phases find and
    make it and the release resets it (each in a thread of its own)."""

    api: QuotaApi
    region: str
    conn: Any
    #: read: whether there is a freeze to record and make
    due: bool = False
    before: dict[str, Any] = dataclasses.field(default_factory=dict)
    frozen: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: made: FROZEN or FAILED, and the values that did not take
    state: str = INTENT
    missed: dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def service_type(self) -> str:
        return self.api.service_type

    @property
    def where(self) -> str:
        return where_in(self.service_type, self.region)


@dataclasses.dataclass
class Freezes:
    """The freezes of a drain: its quota APIs in its regions, each API call
    made through ``call(what, fn)`` (retried, one line on failure)."""

    call: Call
    regions: Regions
    apis: Sequence[QuotaApi]

    def regions_of(self, api: QuotaApi) -> list[str]:
        """The regions of the catalog where ``api``'s freeze is made: one
        per endpoint URL (``Regions.of_service``), the first alone for a
        service that is one for every region (``one_for_all_regions``:
        Keystone, whose endpoints may differ per region; a freeze in each
        would post the same limits again, which Keystone refuses, 409)."""
        found = self.regions.of_service(api.service_type, self.regions.catalog)
        return found[:1] if api.one_for_all_regions else found

    def read(
        self, project_id: str, record: dict[str, Any], freeze: Freeze
    ) -> None:
        """What one service's freeze in one region is to be: the project's
        own values before (an earlier run's record has them: the values
        now are frozen ones) and the frozen ones. The record is not
        changed: it is written once every service is read."""
        entry = (
            record['quotas'].get(freeze.region, {}).get(freeze.service_type)
        )
        try:
            before = (
                entry['before']
                if entry
                else self.call(
                    f'reading the quotas of {freeze.where}',
                    lambda: freeze.api.own(freeze.conn, project_id),
                )
            )
            frozen = self.call(
                f'reading the quotas of {freeze.where}',
                lambda: freeze.api.frozen(freeze.conn, project_id),
            )
        except CascadeError as exc:
            freeze.notes.append(f'quotas of {freeze.where} not frozen: {exc}')
            return
        # nothing to freeze: no registered unified limits
        freeze.due = bool(frozen or entry)
        freeze.before, freeze.frozen = before, frozen

    def make(self, project_id: str, freeze: Freeze) -> None:
        """Make one freeze whose intent is recorded, and read it back."""
        try:
            self.call(
                f'freezing the quotas of {freeze.where}',
                lambda: freeze.api.set(freeze.conn, project_id, freeze.frozen),
            )
            now = self.call(
                f'reading back the quotas of {freeze.where}',
                lambda: freeze.api.current(freeze.conn, project_id),
            )
        except CascadeError as exc:
            freeze.state = FAILED
            freeze.notes.append(f'quotas of {freeze.where} not frozen: {exc}')
            return
        freeze.state = FROZEN
        freeze.missed = {
            k: now.get(k)
            for k, v in sorted(freeze.frozen.items())
            if now.get(k) != v
        }
        if freeze.missed:
            freeze.notes.append(
                f'quotas of {freeze.where} did not take: '
                + ', '.join(f'{k} is {v}' for k, v in freeze.missed.items())
                + ' (the verification rounds catch what is created)'
            )

    def lower(
        self,
        project_id: str,
        region: str,
        api: QuotaApi,
        frozen: dict[str, Any],
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A freeze at usage (``api.lowered_by``) lowered to the usage now,
        never raised: the limits now in force, and those the read-back
        found otherwise (``missed``)."""
        conn = self.regions.connection(region)
        where = where_in(api.service_type, region)
        usage = self.call(
            f'reading the usage of {where}',
            lambda: api.frozen(conn, project_id),
        )
        lowered = {k: min(v, usage.get(k, v)) for k, v in frozen.items()}
        down = {k: v for k, v in lowered.items() if v < frozen[k]}
        if not down:
            return frozen, {}
        self.call(
            f'lowering the quotas of {where}',
            lambda: api.set(conn, project_id, down),
        )
        now = self.call(
            f'reading back the quotas of {where}',
            lambda: api.current(conn, project_id),
        )
        return lowered, {
            k: now.get(k) for k, v in sorted(down.items()) if now.get(k) != v
        }

    def unfrozen(self, service_types: Iterable[str]) -> list[str]:
        """The plan's note of what the freeze cannot cover: the services
        of the cascade's kinds in the catalog whose quotas the drain does
        not freeze (Keystone's are the disable's), and how the run covers
        them instead."""
        frozen = {api.service_type for api in self.apis} | {'identity'}
        gaps = sorted(
            s
            for s in set(service_types) - frozen
            if self.regions.of_service(s, self.regions.catalog)
        )
        if not gaps:
            return []
        return [
            'the drain freezes no quota of '
            + ', '.join(
                f'{s} ({WHY_UNFROZEN[s]})' if s in WHY_UNFROZEN else s
                for s in gaps
            )
            + ': what a token that a service validated before the drain '
            'creates there is deleted by the verification rounds while the '
            'cascade runs, and once the project is gone by --settle or the '
            'later purge (the reaper\'s, `openstack orphan purge --project`)'
        ]

    def restore(self, project_id: str, record: dict[str, Any]) -> list[str]:
        """The quotas back to the project's own values before the drain, as
        the record says. An entry comes out of the record only once its
        values are put back and read back so; one that did not come back
        stays in it (a second restore tries it again), and is a note."""
        notes = []
        quotas = record.get('quotas', {})
        for region, entries in sorted(quotas.items()):
            conn = self.regions.connection(region)
            for api in self.apis:
                entry = entries.get(api.service_type)
                if entry is None:
                    continue
                where = where_in(api.service_type, region)
                before = entry['before']
                try:
                    self.call(
                        f'restoring the quotas of {where}',
                        lambda a=api, c=conn, b=before: a.restore(
                            c, project_id, b
                        ),
                    )
                    now = self.call(
                        f'reading back the quotas of {where}',
                        lambda a=api, c=conn: a.own(c, project_id),
                    )
                except CascadeError as exc:
                    notes.append(str(exc))  # it names the quotas
                    continue
                if now != before:
                    notes.append(
                        f'quotas of {where} are {now} after the restore, '
                        f'not {before}'
                    )
                    continue
                del entries[api.service_type]
            known = {api.service_type for api in self.apis}
            notes.extend(
                f'quotas of {where_in(service, region)}: no quota API of '
                'this version restores them (kept in the drain record)'
                for service in sorted(set(entries) - known)
            )
        for region in [r for r, entries in quotas.items() if not entries]:
            del quotas[region]
        return notes

    def release(self, project_id: str, record: dict[str, Any]) -> list[str]:
        """Reset (the quota APIs' DELETE) every quota the record froze, all
        at once: after the project is gone, so the record is the copy read
        before. A failure is a note naming the purge that resets them
        (Nova and Cinder list no quota sets: no search finds them)."""
        resets = [
            Freeze(api, region, self.regions.connection(region))
            for region, entries in sorted(record.get('quotas', {}).items())
            for api in self.apis
            if api.service_type in entries
        ]

        def reset(freeze: Freeze) -> str:
            try:
                self.call(
                    f'resetting the quotas of {freeze.where} of deleted '
                    f'project {project_id}',
                    lambda: freeze.api.reset(freeze.conn, project_id),
                )
            except CascadeError as exc:
                if is_gone(exc.__cause__):
                    # a 404: nothing of the project's to reset there. (The
                    # 404 once seen from Manila was its quota-sets route,
                    # asked below 2.7: quota.shared_file_system says why)
                    return ''
                return (
                    f'{exc} (its quota rows stay: `openstack orphan purge '
                    f'--project {project_id}` resets them)'
                )
            return ''

        return [note for note in fan_out(reset, resets) if note]


def where_in(service_type: str, region: str) -> str:
    """A service's name in a note, with its region where there is one."""
    return service_type + (f' in {region}' if region else '')
