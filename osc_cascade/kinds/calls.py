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

"""The kinds' sub-calls: what a kind calls inside ``list``, ``parts`` or a
helper of theirs, besides the call the engine makes for it.

Discovery retries a kind's whole ``list``, and the executor each part and
delete. A list that makes one more call per stack or per container would
then be made whole again for one 503 among its calls, and with a few per
cent of calls failing it would rarely pass at all (at 20 %, a list of
ten calls passes whole once in ten attempts). So each sub-call is retried
on its own, as the engine retries: while it fails in a way that may pass
(429, 5xx, no answer), a few times, backing off; what fails otherwise (a
404 a kind expects, a 403) is raised at once, as it is.

A kind's calls per item (each stack's resources, each container's HEAD,
each floating IP's port forwardings) are made at once through ``fan_out``,
within a width per service that every kind of that service listed at the
same time shares: a discovery sets it to its own ``parallel``
(``shared_width``), so that its kinds' sub-calls add at most that many
requests at once to each service, however many kinds fan out together.
Per service, as the executor's API slots are: one width for every service
made Heat's 2,000 resource listings and Swift's 2,000 HEADs at N=100,000
wait for each other (20 s at 50 ms a call and a width of 10), though each
service answers its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import threading
from typing import Any, TypeVar

from osc_cascade.engine.retry import Clock, RetryPolicy, retrying

T = TypeVar('T')
R = TypeVar('R')

#: fewer attempts and shorter waits than a step's: the engine retries the
#: list or the step around them too
POLICY = RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=4.0)


def retried(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, retried while it fails in a way that may
    pass."""
    return retrying(lambda: call(*args, **kwargs), retry=POLICY, clock=Clock())


@dataclasses.dataclass(frozen=True)
class _Width:
    size: int
    lock: threading.Lock
    #: service type -> its slots, made on first use
    services: dict[str, threading.Semaphore]

    def slots(self, service: str) -> threading.Semaphore:
        with self.lock:
            if service not in self.services:
                self.services[service] = threading.BoundedSemaphore(self.size)
            return self.services[service]


def _width(size: int) -> _Width:
    return _Width(max(1, size), threading.Lock(), {})


#: the sub-calls' width where no discovery set one (a kind listed outside
#: one: a settle, a check): a discovery's default parallel
DEFAULT_WIDTH = 8
#: None inside a sub-call (see fan_out)
_WIDTH: contextvars.ContextVar[_Width | None] = contextvars.ContextVar(
    'sub_call_width', default=_width(DEFAULT_WIDTH)
)


@contextlib.contextmanager
def shared_width(size: int) -> Iterator[None]:
    """Within it, every ``fan_out`` of this context, and of the copies of
    it that the caller runs its threads in, shares ``size`` slots."""
    token = _WIDTH.set(_width(size))
    try:
        yield
    finally:
        _WIDTH.reset(token)


def fan_out(
    call: Callable[[T], R], items: Iterable[T], *, service: str = ''
) -> list[R]:
    """``[call(item) for item in items]``, the calls made at once within
    the shared width of ``service`` (the type of the service the calls
    ask), the results in the order of ``items``.

    A failure is raised as the loop raised it: once a call fails no other
    is started, and the failure of the first item (in the order of
    ``items``) whose call failed is raised. A call that fans out itself
    does so one item at a time in the slot it holds: calls waiting for
    slots that their callers hold would wait forever. Retries stay the
    caller's, one per sub-call (``call`` may use ``retried``)."""
    items = list(items)
    width = _WIDTH.get()
    if width is None or len(items) < 2:
        return [call(item) for item in items]
    slots = width.slots(service)
    failed = threading.Event()

    def one(item: T) -> R | None:
        _WIDTH.set(None)  # in this call's own copy of the context
        with slots:
            if failed.is_set():
                return None  # not made: an earlier call failed
            try:
                return call(item)
            except BaseException:
                failed.set()
                raise

    with concurrent.futures.ThreadPoolExecutor(
        max_workers=min(len(items), width.size),
        thread_name_prefix='sub-call',
    ) as pool:
        futures = [
            pool.submit(contextvars.copy_context().run, one, item)
            for item in items
        ]
    # result() raises the first failure in the order of the items
    return [fut.result() for fut in futures]  # type: ignore[misc]
