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

"""The executor's API slots: a bounded, prioritised semaphore."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading


class Slots:
    """At most ``size`` holders; a free slot goes to the waiter of highest
    priority, first come first served among equals."""

    def __init__(self, size: int):
        self._free = size
        self._cond = threading.Condition()
        self._queue: list[tuple[float, int]] = []
        self._tickets = itertools.count()

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    @contextlib.contextmanager
    def hold(self, priority: float):
        with self._cond:
            ticket = (-priority, next(self._tickets))
            heapq.heappush(self._queue, ticket)
            self._cond.wait_for(
                lambda: self._free > 0 and self._queue[0] == ticket
            )
            heapq.heappop(self._queue)
            self._free -= 1
            # another slot may be free for the next in line
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._free += 1
                self._cond.notify_all()
