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

"""The cloud shared by pytest-xdist's workers (``tox -e functional`` runs
two): a module marked ``exclusive`` runs with no other module under way.

Such a module disturbs the whole cloud: it takes a compute down (what
another module boots there fails) or restarts RabbitMQ and purges what
any deleted project left (what another module expects to stay goes).
Every other module holds the cloud shared from its first test's setup to
its last test's teardown (its module fixtures and the cascade of what it
made), so an exclusive module waits for those under way, and none starts
while it runs. A reader-writer lock on two files (flock): the gate makes
the lock fair, so a waiting exclusive module is not starved by the other
worker's next modules.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

MARKER = 'exclusive'


class CloudLock:
    """One worker's hold on the cloud, a module at a time."""

    def __init__(self, run_id: str):
        base = os.path.join(tempfile.gettempdir(), f'osc-cascade-{run_id}')
        # open for the worker's life: a lock lives with its open file
        self._gate = open(base + '.gate', 'a')
        self._cloud = open(base + '.cloud', 'a')
        self._module = None

    def enter(self, item) -> None:
        """Before ``item``'s setup: hold the cloud for its module, shared
        or alone, unless this worker holds it for that module already."""
        if item.module is self._module:
            return
        alone = item.get_closest_marker(MARKER) is not None
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._cloud, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(self._gate, fcntl.LOCK_UN)
        self._module = item.module

    def leave(self, item, nextitem) -> None:
        """After ``item``'s teardown: let the cloud go when its module is
        done here (its module fixtures are torn down with its last test)."""
        if nextitem is not None and nextitem.module is item.module:
            return
        fcntl.flock(self._cloud, fcntl.LOCK_UN)
        self._module = None
