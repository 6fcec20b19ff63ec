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

"""The drain: a recorded, reversible set of changes that stops a project
from creating anything, whatever token a caller holds.

1. the project is disabled (Keystone then refuses new tokens for it from
   every credential);
2. its quotas are frozen in every region that offers each service with
   per-project quotas (``workflows.quota_freeze``); Keystone's unified
   limits, of every region, once: one Keystone serves every region.

Each change is written down on the project itself *before* it is made
(``workflows.drain_record``): a run killed at any point leaves a record
that a later run continues and that ``restore`` reverses. While the
cascade deletes, Cinder's freeze follows its deletes down
(``workflows.lowering``).

What a freeze cannot cover (the plan's note, ``Drain.unfrozen``):

* Swift's account quota middleware checks object PUTs only (and not those
  of a reseller admin): containers, and objects under a reseller's token,
  are not stopped;
* Glance has no quota set of its own: it limits a project only through
  Keystone unified limits, which the drain freezes (a project limit of 0
  for every registered limit) only where Keystone has them registered;
* Designate's and Trove's quotas are not frozen, nor anything of a
  service without per-project quotas (Heat, Aodh, Mistral, ...);
* Cinder's room between a delete and the lowering that follows it.

While the cascade runs, its verification rounds delete what is created
there all the same; after the project is gone, ``--settle`` does, or the
later purge (the reaper's, ``openstack orphan purge --project``). Keystone
deletes a project's unified limits with it: their freeze ends there.

The quota rows keyed by the project's ID outlive it, and keep refusing
creates while they stay frozen. With ``--settle``, ``release_quotas``
resets the recorded quotas (the quota APIs' DELETE) after the settle: the
last thing the cascade does. Without, they stay frozen at exit, so that a
token a service still has in its cache creates nothing; a later purge that
finds nothing left releases them once the token cache window has passed
(``workflows.late_release``). Until then they are orphans that ``openstack
orphan list`` finds where the service can list them (Neutron, Octavia,
Barbican, Magnum).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.retry import Clock, RetryPolicy
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.quota import QUOTA_APIS
from osc_cascade.kinds.quota.base import QuotaApi
from osc_cascade.workflows import assignments
from osc_cascade.workflows.drain_record import (
    DRAINED_AT,
    DRAINED_BY,
    INTENT,
    RECORD,
    RESTORING,
    DrainRecord,
)
from osc_cascade.workflows.quota_freeze import Freeze, Freezes


class Drain(DrainRecord):
    """The drain of projects, its restore and the release of its quotas;
    the record (``DrainRecord``) is written before each change."""

    def __init__(
        self,
        conn: Any,
        regions: Regions,
        *,
        retry: RetryPolicy,
        clock: Clock,
        now: Callable[[], str] | None = None,
        apis: Sequence[QuotaApi] = QUOTA_APIS,
    ):
        super().__init__(conn, retry=retry, clock=clock, now=now)
        self.regions = regions
        self.apis = apis

    @property
    def freezes(self) -> Freezes:
        """The freezes of each service's quotas, made through
        ``_retried_api_call``."""
        return Freezes(self._retried_api_call, self.regions, self.apis)

    # -- the drain ---------------------------------------------------------

    def drain(self, project_id: str) -> tuple[dict[str, Any], list[str]]:
        """Disable the project and freeze its quotas, each change recorded
        before it is made; a record left by an earlier run is continued.
        The record, and a note for each value that did not take.

        The services answer on their own, so each phase asks all of them
        at once: their quotas are read, the intents of every freeze (and
        the disable) written in one record, then the freezes made and read
        back; a freeze is never made before the record that has its intent
        is written."""
        record = self.begin(project_id)
        freezes = [
            Freeze(api, region, self.regions.connection(region))
            for api in self.apis
            for region in self.freezes.regions_of(api)
        ]
        fan_out(lambda f: self.freezes.read(project_id, record, f), freezes)
        due = [f for f in freezes if f.due]
        for f in due:
            record['quotas'].setdefault(f.region, {})[f.service_type] = {
                'before': f.before,
                'frozen': f.frozen,
                'state': INTENT,
            }
        if due:  # the intents, and the disable with them
            self._write(project_id, record, enabled=False)
        fan_out(lambda f: self.freezes.make(project_id, f), due)
        for f in due:
            entry = record['quotas'][f.region][f.service_type]
            entry['state'] = f.state
            if f.missed:
                entry['missed'] = f.missed
        self.complete(project_id, record, enabled=False)
        after = self._project(project_id)
        if after is None or after.get('enabled'):
            raise CascadeError(
                f'Project {project_id} is still enabled after the drain '
                'disabled it; nothing was deleted.'
            )
        return record, [note for f in freezes for note in f.notes]

    def unfrozen(self, service_types: Iterable[str]) -> list[str]:
        """The plan's note of what the freeze cannot cover
        (``Freezes.unfrozen``)."""
        return self.freezes.unfrozen(service_types)

    # -- the way back ------------------------------------------------------

    def restore(self, project_id: str) -> list[str]:
        """Reverse exactly what the record says: the quotas back to the
        project's own values before the drain, the role assignments the
        drain without admin took away put back, the project enabled again
        if it was. Each entry of the record comes out of it once it is
        back and read back so; the record goes when nothing is left in it.
        What did not come back stays in the record, at stage ``restore
        incomplete`` (the drain is over: the sweep leaves it alone), for a
        second restore to try again: a note each."""
        record = self.record_of(project_id)
        if record is None:
            raise CascadeError(
                f'Project {project_id} has no drain record ({RECORD}): '
                'nothing to restore.'
            )
        notes = self.freezes.restore(project_id, record)
        notes.extend(
            assignments.restore(
                self.conn, project_id, record, self._restore_call
            )
        )
        left = (
            record.get('quotas')
            or record.get(assignments.ASSIGNMENTS)
            or record.get(assignments.TEMPORARY)
        )
        if left:
            record['stage'] = RESTORING
            record.pop(DRAINED_AT, None)
            record.pop(DRAINED_BY, None)
        self._write(
            project_id,
            record if left else None,
            enabled=record.get('enabled', True),
        )
        return notes

    def release_quotas(
        self, project_id: str, record: dict[str, Any]
    ) -> list[str]:
        """Reset every quota the record froze, after the project is gone
        (``Freezes.release``): a failure is a note."""
        return self.freezes.release(project_id, record)
