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

"""The executor's API slots: a bounded, prioritised semaphore whose size
may change while it is held (an adaptive limit shrinks or grows it)."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading


class Slots:
    """At most ``size`` holders; a free slot goes to the waiter of highest
    priority, first come first served among equals. A smaller size takes
    nothing back: the holders above it finish, and no one new starts until
    fewer than ``size`` hold.

    A slot set free is handed to the next waiter alone (its own event):
    hundreds of threads wait here in a large run, and waking them all to
    let one through cost more CPU than the run's calls."""

    def __init__(self, size: int):
        self._size = max(1, size)
        self._held = 0
        self._lock = threading.Lock()
        #: (-priority, ticket, the waiter's event, [holders once granted])
        self._queue: list[tuple[float, int, threading.Event, list[int]]] = []
        self._tickets = itertools.count()

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def held(self) -> int:
        with self._lock:
            return self._held

    @property
    def size(self) -> int:
        with self._lock:
            return self._size

    def resize(self, size: int) -> None:
        with self._lock:
            self._size = max(1, size)
            self._grant()

    def _grant(self) -> None:
        """Hand the free slots to the waiters at the head (lock held)."""
        while self._queue and self._held < self._size:
            _key, _ticket, granted, holders = heapq.heappop(self._queue)
            self._held += 1
            holders.append(self._held)
            granted.set()

    @contextlib.contextmanager
    def hold(self, priority: float):
        """Yields how many hold a slot, this one included."""
        granted = threading.Event()
        holders: list[int] = []
        with self._lock:
            heapq.heappush(
                self._queue,
                (-priority, next(self._tickets), granted, holders),
            )
            self._grant()
        granted.wait()
        try:
            yield holders[0]
        finally:
            with self._lock:
                self._held -= 1
                self._grant()
