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

"""Cinder's freeze follows the cascade's deletes down (``Lowering``).

Cinder refuses a limit below usage, so the drain freezes it at usage; fed
the executor's events while the cascade deletes, ``Lowering`` brings the
limits down to the usage left, to 0 once the project's volumes are gone.
"""

from __future__ import annotations

from collections.abc import Callable
import threading
from typing import TYPE_CHECKING, Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, Event
from osc_cascade.workflows.drain_record import FROZEN
from osc_cascade.workflows.quota_freeze import where_in

if TYPE_CHECKING:
    from osc_cascade.workflows.drain import Drain


class Lowering:
    """Cinder's freeze follows the deletes down. Cinder refuses a limit
    below usage, so the drain froze it at usage, and each volume, snapshot
    or backup deleted makes room that a token cached before the drain
    could take. Fed the executor's events (``notice``), it lowers the
    limits of a project and region to the usage after each such delete
    (``Freezes.lower``: read, never raised, read back), so that they are 0
    once the project holds nothing there.

    The lowerings are coalesced, not one per delete: a lowering is three
    calls (the usage, the PUT, the read-back), more than a delete makes
    (its DELETE and a poll or two), so one per delete would double
    Cinder's calls. One lowering runs at a time, in a thread of its own,
    and covers every delete done before it began: the calls follow the
    time the deletes take, not their number, and the room a delete makes
    stays open for one lowering (a fraction of a second), not for the
    run. ``close`` lowers once more, after the last delete, merges what
    was lowered into the records, and says what stays above 0: what the
    freeze did not cover there, which the verification rounds (and
    ``--settle``) catch."""

    def __init__(
        self,
        drain: Drain,
        records: dict[str, dict[str, Any]],
        forward: Callable[[Event], None] | None = None,
    ):
        self.drain = drain
        self.records = records
        #: where the events go on to (the progress)
        self.forward = forward
        self._apis = {
            api.lowered_by + '.': api for api in drain.apis if api.lowered_by
        }
        self._due: set[tuple[str, str, str]] = set()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        #: (project, region, service) -> the limits in force, the missed
        self._lowered: dict[
            tuple[str, str, str], tuple[dict[str, Any], dict[str, Any]]
        ] = {}
        #: (project, region, service) -> why its last lowering failed
        self._failed: dict[tuple[str, str, str], str] = {}

    def _entry(self, key: tuple[str, str, str]) -> dict[str, Any] | None:
        project_id, region, service = key
        record = self.records.get(project_id) or {}
        entry = record.get('quotas', {}).get(region, {}).get(service)
        return entry if entry and entry.get('state') == FROZEN else None

    def notice(self, event: Event) -> None:
        """An event of the run: a delete done of a kind that lowers a
        freeze makes that project's and region's lowering due."""
        if self.forward is not None:
            self.forward(event)
        step = event.step
        if event.kind != DONE or step is None or step.is_break_action:
            return
        ref = step.target
        for prefix, api in self._apis.items():
            key = (ref.project_id, ref.region, api.service_type)
            if ref.kind.startswith(prefix) and self._entry(key):
                with self._cond:
                    self._due.add(key)
                    if self._thread is None and not self._closed:
                        self._thread = threading.Thread(
                            target=self._work,
                            name='cascade-lowering',
                            daemon=True,
                        )
                        self._thread.start()
                    self._cond.notify()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._due and not self._closed:
                    self._cond.wait()
                if not self._due:
                    return
                due, self._due = sorted(self._due), set()
            for key in due:
                self._lower(key)

    def _lower(self, key: tuple[str, str, str]) -> None:
        entry = self._entry(key)
        api = next(a for a in self._apis.values() if a.service_type == key[2])
        if entry is None:
            return
        frozen = self._lowered.get(key, (entry['frozen'], {}))[0]
        try:
            self._lowered[key] = self.drain.freezes.lower(
                key[0], key[1], api, frozen
            )
            self._failed.pop(key, None)
        except CascadeError as exc:
            self._failed[key] = str(exc)

    def close(self) -> list[str]:
        """After the last delete: stop the thread, lower every freeze at
        usage once more, keep the limits in force in the records. What
        stays above 0, or could not be lowered, one line each."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        notes = []
        for project_id, record in sorted(self.records.items()):
            for region, entries in sorted(record.get('quotas', {}).items()):
                for api in self._apis.values():
                    key = (project_id, region, api.service_type)
                    entry = self._entry(key)
                    if entry is None:
                        continue
                    self._lower(key)
                    where = where_in(api.service_type, region)
                    if key in self._failed:
                        notes.append(
                            f'quotas of {where} of project {project_id} '
                            f'not lowered: {self._failed[key]}'
                        )
                    frozen, missed = self._lowered.get(
                        key, (entry['frozen'], {})
                    )
                    entry['frozen'] = frozen
                    if missed:
                        entry['missed'] = missed
                    above = {
                        k: missed.get(k, v)
                        for k, v in sorted(frozen.items())
                        if missed.get(k, v)
                    }
                    if above:
                        notes.append(
                            f'quotas of {where} of project {project_id} '
                            'stay at '
                            + ', '.join(f'{k}={v}' for k, v in above.items())
                            + ' (its usage: what it still holds there, or '
                            "Cinder's count of it): the freeze does not "
                            'cover that room; the verification rounds and '
                            '--settle catch what is created'
                        )
        return notes
