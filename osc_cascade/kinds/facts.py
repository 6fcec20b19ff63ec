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

"""What the kinds of one workflow learn together about the cloud."""

from __future__ import annotations

from collections.abc import Callable
import threading
from typing import Any, TypeVar

from osc_cascade.engine.resource import ResourceRef

T = TypeVar('T')


class Facts:
    """What the kinds of one workflow learn once about the cloud (the
    extensions a service has loaded), per connection: ``kinds.build`` gives
    one to all the kinds it makes, so nothing is cached beyond the run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, int], Any] = {}
        self._kept: dict[str, tuple[ResourceRef, str]] = {}

    def keep(self, ref: ResourceRef, why: str) -> None:
        """Remember a resource that a delete kept (``recheck``)."""
        with self._lock:
            self._kept[ref.key] = (ref, why)

    def kept(self) -> list[tuple[ResourceRef, str]]:
        """What the deletes of the run kept, and why: their projects are
        not to be deleted (``Discovery.run`` refuses to say they are
        empty)."""
        with self._lock:
            return list(self._kept.values())

    def get(self, what: str, conn: Any, learn: Callable[[], T]) -> T:
        key = (what, id(conn))
        with self._lock:
            if key not in self._values:
                self._values[key] = learn()
            return self._values[key]
