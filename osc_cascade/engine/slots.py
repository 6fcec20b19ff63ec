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
    fewer than ``size`` hold."""

    def __init__(self, size: int):
        self._size = max(1, size)
        self._held = 0
        self._cond = threading.Condition()
        self._queue: list[tuple[float, int]] = []
        self._tickets = itertools.count()

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    @property
    def held(self) -> int:
        with self._cond:
            return self._held

    @property
    def size(self) -> int:
        with self._cond:
            return self._size

    def resize(self, size: int) -> None:
        with self._cond:
            self._size = max(1, size)
            self._cond.notify_all()

    @contextlib.contextmanager
    def hold(self, priority: float):
        """Yields how many hold a slot, this one included."""
        with self._cond:
            ticket = (-priority, next(self._tickets))
            heapq.heappush(self._queue, ticket)
            self._cond.wait_for(
                lambda: self._held < self._size and self._queue[0] == ticket
            )
            heapq.heappop(self._queue)
            self._held += 1
            held = self._held
            # another slot may be free for the next in line
            self._cond.notify_all()
        try:
            yield held
        finally:
            with self._cond:
                self._held -= 1
                self._cond.notify_all()
