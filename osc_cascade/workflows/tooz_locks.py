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

"""Per-project locks on a tooz backend: the reaper's, and a command's where
its locks are not files (``actor``).

Two reapers, or a reaper's sweep and its notification handling, never
purge the same project at once: whoever holds the project's lock works on
it, the others skip it and try again later. The lock's name is
``lock_name``'s, one per project, so that every actor on a project (a
reaper, a cascade, a drain) takes the same one.

tooz is the ``reaper`` extra's, and a third of a second to import: it is
imported when locks are made (``Locks``), not with this module, so that a
command that locks files never loads it; the reaper loads it as it starts
(``reaper.lock``).
"""

from __future__ import annotations

from collections.abc import Iterator
import contextlib
import logging
from typing import Any

LOG = logging.getLogger(__name__)


def lock_name(project_id: str) -> str:
    return f'osc-cascade.project.{project_id}'


class Locks:
    """Per-project locks on a tooz backend (``url``); ``member`` names this
    actor to the backend."""

    def __init__(self, url: str, member: str):
        from tooz import coordination

        self.url = url
        self._tooz: Any = coordination
        self._coordinator = coordination.get_coordinator(url, member.encode())

    def start(self) -> None:
        # the heart keeps the locks of backends with leases (etcd, Redis,
        # MySQL's connection) alive while a long purge runs
        self._coordinator.start(start_heart=True)

    def stop(self) -> None:
        self._coordinator.stop()

    @contextlib.contextmanager
    def held(self, project_id: str) -> Iterator[bool]:
        """Whether the project's lock could be taken (without waiting);
        held until the block ends."""
        lock = self._coordinator.get_lock(lock_name(project_id).encode())
        if not lock.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            try:
                lock.release()
            except self._tooz.ToozError as exc:
                # a lost lease: the backend has let it go already
                LOG.warning(
                    'project %s: releasing its lock failed: %s',
                    project_id,
                    exc,
                )
