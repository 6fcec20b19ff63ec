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

"""What every part of a compute service purge shares: the cloud and
region, the options, the kinds, and the reads (retried, ``parallel`` at
a time)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import concurrent.futures
from typing import Any

from osc_cascade import kinds
from osc_cascade.engine.executor import Event, RunResult
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds.base import SERVICE
from osc_cascade.workflows.stopping import Stop

#: reads give up sooner than deletes: nothing was changed yet
READ_ATTEMPTS = 4
#: what nova shows of a service the purge disabled; only a service that


class PurgeBase:
    """The state of a purge and its reads."""

    def __init__(
        self,
        conn: Any,
        *,
        force: bool = False,
        parallel: int = 10,
        timeout: float = 600.0,
        on_event: Callable[[Event], None] | None = None,
        notify: Callable[[str], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.conn = conn
        #: the region the services are in (``locate``); '' if not located
        self.region = ''
        #: told what is done to the services' status
        self.notify = notify or (lambda text: None)
        #: remove the allocations of unfinished migrations and of consumers
        #: nova cannot explain, instead of refusing
        self.force = force
        self.parallel = parallel
        self.timeout = timeout
        self.kinds = kinds.build(SERVICE)
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.on_event = on_event
        #: a signal stops the purge politely (``interrupt``)
        self.stop = Stop()
        #: what the last run did, also when it was interrupted
        self.result: RunResult | None = None

    # -- reading -----------------------------------------------------------

    def _read(self, what: str, call: Callable[[], Any]) -> Any:
        """A read, retried while the cloud answers 429, 5xx or does not
        answer; any other error is one clear line, before anything was
        changed."""
        return checked(
            what,
            call,
            retry=self.retry,
            clock=self.clock,
            attempts=min(READ_ATTEMPTS, self.retry.max_attempts),
            needs='--purge-allocations needs the admin role',
            outcome='Nothing was changed',
        )

    def _each(
        self,
        what: Callable[[Any], str],
        fn: Callable[[Any], Any],
        items: Sequence[Any],
    ) -> list[Any]:
        """``fn`` of every item, ``parallel`` at a time (a service of an
        ironic cloud has hundreds of providers to read)."""
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=self.parallel, thread_name_prefix='purge'
        ) as pool:
            return list(
                pool.map(
                    lambda item: self._read(what(item), lambda: fn(item)),
                    items,
                )
            )
