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

"""Polling many deletes of one kind with one list call."""

from __future__ import annotations

from collections.abc import Callable
import contextlib
import threading
from typing import Any

from osc_cascade.kinds.base import GONE, ResourceKind

#: what a shared listing answers for a kind that cannot list statuses
UNLISTED = object()


class SharedListing:
    """The statuses of one kind's resources in one project, from one list
    call shared by all the steps waiting on their deletes: a step takes
    the last listing if it began after the step's own last poll (or its
    delete), else it lists again for everyone. One request per round of
    polls for the lot instead of one per resource."""

    def __init__(
        self,
        conn: Any,
        kind: ResourceKind,
        project_id: str,
        sequence: Callable[[], int],
    ):
        self.conn = conn
        self.kind = kind
        self.project_id = project_id
        self._sequence = sequence
        self._lock = threading.Lock()
        #: the sequence number taken when the last listing began
        self._listed_seq: int | None = None
        self._statuses: dict[str, str] | None = None

    def status_of(
        self,
        resource_id: str,
        since: int,
        slot: Callable[[], contextlib.AbstractContextManager],
    ) -> Any:
        """The status in a listing begun after the event numbered
        ``since``: an older one shows the resource as it was (an ERROR
        server from before its delete would look like a failed delete)."""
        # the lock, not a slot, while another step lists: waiting for
        # its answer must not keep the slots from other calls
        with self._lock:
            unlisted = self._listed_seq is not None and self._statuses is None
            if not unlisted and (
                self._listed_seq is None or self._listed_seq < since
            ):
                seq = self._sequence()
                with slot():
                    self._statuses = self.kind.list_statuses(
                        self.conn, self.project_id
                    )
                self._listed_seq = seq
            if self._statuses is None:
                return UNLISTED
            return self._statuses.get(resource_id, GONE)
