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

"""The deleted projects waiting for their purge, each due at a time.

One entry per project: a notification delivered twice, or a project that
is already waiting (for its grace period, or to be tried again after a
failure), adds nothing. A failed purge comes back with its count of
failures, so that the wait before the next try doubles
(``service.Timing.retry``).
"""

from __future__ import annotations

import dataclasses
import threading


@dataclasses.dataclass(frozen=True)
class Entry:
    project_id: str
    #: the clock's reading when the purge is due
    due: float
    #: purges of it that failed so far
    failures: int = 0


class Schedule:
    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

    def add(self, entry: Entry) -> bool:
        """False (and nothing changes) when the project already waits."""
        with self._lock:
            if entry.project_id in self._entries:
                return False
            self._entries[entry.project_id] = entry
            return True

    def pop_due(self, now: float, limit: int) -> list[Entry]:
        """The entries due by ``now``, the earliest first, ``limit`` at
        most; they leave the schedule."""
        with self._lock:
            due = sorted(
                (e for e in self._entries.values() if e.due <= now),
                key=lambda e: (e.due, e.project_id),
            )[:limit]
            for entry in due:
                del self._entries[entry.project_id]
            return due

    def next_due(self) -> float | None:
        with self._lock:
            return min((e.due for e in self._entries.values()), default=None)

    def ids(self) -> set[str]:
        with self._lock:
            return set(self._entries)

    def get(self, project_id: str) -> Entry | None:
        with self._lock:
            return self._entries.get(project_id)
