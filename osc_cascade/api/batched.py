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

"""The same list, filtered by one field, that many of the executor's
threads ask at once for one value each, asked once for all their values.

A re-read before a delete is one GET per resource: at N=10,000 the
re-reads of ports alone were 2,600 of a cascade's 17,128 requests. Where a
service filters a list by several values of a field (Neutron's
``?id=a&id=b``), the threads that ask at the same moment are answered by
one listing (``Batches.items``): a value is listed at once while fewer
than ``UNDER_WAY`` listings of the list are under way; else it waits
with the others asked meanwhile for the first of those to answer, and
they go together (at once when ``LIMIT`` values wait). A quiet run's
calls are unchanged; a busy one's are fewer, each read waiting less than
the service takes to answer one.

Each caller gets the items whose field holds its value, read after it
asked: the listing is made after the value was added, as its own GET
would have been. A listing that fails answers nobody: each caller asks on
its own, as without batches (``Failed``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import threading
from typing import Any
import weakref

#: values per listing: a URL of 40 UUIDs (``&id=`` and 36 characters each)
#: is about 1,700 characters, under every front end's limit
LIMIT = 40
#: listings of one list under way at once: a value waits for a turn only
#: when so many are, so that a step's read waits less than the service
#: takes to answer one (one at a time made the ports of a 10,000-resource
#: cascade take half as long again)
UNDER_WAY = 4


class Failed(Exception):
    """The listing that was to answer this value failed (its error is the
    cause): ask for the value on its own."""


class _Batch:
    def __init__(self) -> None:
        self.values: list[Any] = []
        self.sent = False
        self.answered = False
        self.items: list[dict[str, Any]] = []
        self.error: BaseException | None = None


class Batches:
    """The listings of one list by ``field``, at most ``UNDER_WAY`` under
    way, the values asked meanwhile gathered for the next."""

    def __init__(self, field: str):
        self.field = field
        self._turn = threading.Condition()
        self._open: _Batch | None = None
        self._under_way = 0

    def items(
        self,
        value: Any,
        fetch: Callable[[list[Any]], Iterable[dict[str, Any]]],
    ) -> list[dict[str, Any]]:
        """The items whose ``field`` is ``value``, listed after this call
        began (``fetch``: the items whose ``field`` is one of the values
        given it; every caller's lists the same); ``Failed`` if that
        listing failed."""
        with self._turn:
            batch = self._open
            if batch is None:
                batch = self._open = _Batch()
            batch.values.append(value)
            while not batch.sent:
                if self._under_way < UNDER_WAY or len(batch.values) >= LIMIT:
                    self._send(batch)
                    break
                self._turn.wait()
            else:
                # another thread sends it: wait for its answer
                while not batch.answered:
                    self._turn.wait()
                return self._answer(batch, value)
        try:
            batch.items = list(fetch(sorted(set(batch.values))))
        except BaseException as exc:
            # each caller asks alone; an interruption goes on up
            batch.error = exc
            if not isinstance(exc, Exception):
                raise
        finally:
            with self._turn:
                batch.answered = True
                self._under_way -= 1
                self._turn.notify_all()
        return self._answer(batch, value)

    def _send(self, batch: _Batch) -> None:
        batch.sent = True
        self._under_way += 1
        if self._open is batch:
            self._open = None

    def _answer(self, batch: _Batch, value: Any) -> list[dict[str, Any]]:
        if batch.error is not None:
            raise Failed(str(batch.error)) from batch.error
        return [
            item
            for item in batch.items
            if isinstance(item, dict) and item.get(self.field) == value
        ]


_LOCK = threading.Lock()
#: proxy -> {name of the list and field: its Batches}, while it lives (its
#: connection's token and endpoint make the list)
_BATCHES: weakref.WeakKeyDictionary[Any, dict[str, Batches]]
_BATCHES = weakref.WeakKeyDictionary()


def batches(proxy: Any, name: str, field: str) -> Batches:
    """The one ``Batches`` of list ``name`` by ``field`` through
    ``proxy``; a new one each time for a proxy that cannot be weakly
    referred to (no batching)."""
    key = f'{name}?{field}'
    with _LOCK:
        try:
            kept = _BATCHES.setdefault(proxy, {})
        except TypeError:
            return Batches(field)
        if key not in kept:
            kept[key] = Batches(field)
        return kept[key]
