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

"""Per-service API slots that find each service's capacity.

A cloud's capacity is per service: each endpoint (a service type in a
region) has API processes of its own. So each gets slots of its own, and a
service that is saturated holds no slot that another service's ready calls
need; inside each, the call on the longest chain goes first. How many slots
a service gets is found while the run goes (``AdaptiveLimit``, a limiter
after TCP Vegas, as adaptive concurrency limiters do): from how much slower
than its fastest the service answers, and how many calls it had, it
estimates how many of them were waiting in it; it grows while few were,
shrinks when more were, and halves when it answers 429 or 503. A service whose
``concurrency`` clouds.yaml sets keeps that many. ``--parallel`` is a
ceiling over all services, and a ``rate_limit`` (clouds.yaml's, or
``--rate-limit``) spaces a service's calls on top.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
import contextlib
import statistics
import threading
from typing import Any

from osc_cascade.api import session_costs
from osc_cascade.engine.errors import status_code
from osc_cascade.engine.retry import Clock
from osc_cascade.engine.slots import Slots

#: slots a service starts with (fewer if ``--parallel`` is lower): enough
#: to measure how its answers slow down when it gets several calls at once
INITIAL_LIMIT = 4
#: calls waiting inside the service (a window's median estimate): below
#: this it has room for more, and the limit may grow...
QUEUE_LEAST = 2
#: ...beyond this the calls wait there instead of here (where the longest
#: chain goes first): the limit shrinks by the excess. Between the two it
#: stays: a few calls queued keep the service busy between answers
QUEUE_MOST = 4
#: answers a decision needs at least (and at least the limit's worth)
MIN_WINDOW = 5
#: what a service answers when it has more than it can take
OVERLOADED = (429, 503)


class AdaptiveLimit:
    """How many calls one service is given at once.

    Each answer is compared with the fastest answer to the same call
    (``call``: a kind and what is asked of it, so that a slow call is not
    mistaken for a slow service): of the ``in_flight`` calls it went with,
    ``in_flight * (1 - fastest / seconds)`` were waiting inside the service
    (TCP Vegas's estimate). Once a window of answers (as many as the limit)
    is in, their median decides: below ``QUEUE_LEAST`` and the limit was
    used, it grows (doubles until the first cut, then one more per
    window); beyond ``QUEUE_MOST``, it shrinks by the excess, by half at
    most. A 429 or 503 halves it at once. Each change begins a new window,
    and a call counts in the window it was sent in (``window`` when it was
    sent): those sent before answer as the former limit had them, and
    counted again they cut a limit already cut (on the simulated cloud,
    down to one call with no 429 or 503 at all).

    A ratio of answer times alone would not do: the fastest answer is from
    a quiet moment, and when the whole cloud slows (its hosts busy with
    the deletes) every answer is slower at any limit; shrinking on that
    drove a service's limit down to one call, idle for a round trip
    between its calls (Nova's, at N=300 on the minicloud).
    """

    def __init__(self, ceiling: int, initial: int = INITIAL_LIMIT):
        self.ceiling = max(1, ceiling)
        self.limit = float(min(self.ceiling, max(1, initial)))
        #: per call, its fastest answer in seconds
        self._fastest: dict[Hashable, float] = {}
        #: per answer of the window, the calls waiting in the service
        self._queued: list[float] = []
        #: the most calls in flight during the window
        self._peak = 0
        self._slow_start = True
        self._window = 0
        self._lock = threading.Lock()
        #: how often it grew and shrank (the run's report)
        self.grown = 0
        self.shrunk = 0
        self.lowest = self.highest = self.size

    @property
    def size(self) -> int:
        return max(1, int(self.limit))

    @property
    def window(self) -> int:
        """The window under way: what a call sent now counts in."""
        with self._lock:
            return self._window

    def answered(
        self, call: Hashable, seconds: float, in_flight: int, window: int
    ) -> None:
        """A call sent in ``window`` answered in ``seconds`` with
        ``in_flight`` calls (itself included) in flight when it started."""
        with self._lock:
            fastest = self._fastest.get(call)
            self._fastest[call] = (
                seconds if fastest is None else min(fastest, seconds)
            )
            if fastest is None or window != self._window:
                # a first answer has nothing to be compared with; one sent
                # before the last change tells of the former limit
                return
            self._peak = max(self._peak, in_flight)
            self._queued.append(in_flight * (1 - fastest / max(seconds, 1e-3)))
            if len(self._queued) < max(MIN_WINDOW, self.size):
                return
            queued = statistics.median(self._queued)
            if queued > QUEUE_MOST:
                self._slow_start = False
                self._set(
                    max(self.limit / 2, self.limit - (queued - QUEUE_MOST))
                )
            elif queued < QUEUE_LEAST and self._peak >= self.size:
                self._set(
                    self.limit * 2 if self._slow_start else self.limit + 1
                )
            self._new_window()

    def overloaded(self, window: int) -> None:
        """The service answered 429 or 503 to a call sent in ``window``."""
        with self._lock:
            if window != self._window:
                return  # sent before the last cut: it answers the same
            self._slow_start = False
            self._set(self.limit / 2)
            self._new_window()

    def _set(self, limit: float) -> None:
        before = self.size
        self.limit = min(float(self.ceiling), max(1.0, limit))
        if self.size > before:
            self.grown += 1
        elif self.size < before:
            self.shrunk += 1
        self.lowest = min(self.lowest, self.size)
        self.highest = max(self.highest, self.size)

    def _new_window(self) -> None:
        self._queued.clear()
        self._peak = 0
        self._window += 1


class Rate:
    """At most ``per_second`` calls per second, evenly spaced: each call
    starts no sooner than 1/``per_second`` after the one before it."""

    def __init__(self, per_second: float):
        self.interval = 1.0 / per_second
        self._next: float | None = None
        self._lock = threading.Lock()

    def wait(self, clock: Clock, stop: threading.Event) -> None:
        with self._lock:
            now = clock.now()
            at = now if self._next is None else max(now, self._next)
            self._next = at + self.interval
        if at > now:
            clock.pause(at - now, stop)


class _Service:
    def __init__(
        self, slots: Slots, adaptive: AdaptiveLimit | None, rate: Rate | None
    ):
        self.slots = slots
        self.adaptive = adaptive
        self.rate = rate


class Limiter:
    """The API slots of one executor: per service (type and region) slots
    sized by an ``AdaptiveLimit`` (or clouds.yaml's ``concurrency``), all
    under the ``parallel`` ceiling, and the service's rate limit."""

    def __init__(
        self, conn: Any, parallel: int, clock: Clock, stop: threading.Event
    ):
        self.conn = conn
        self.parallel = parallel
        self.clock = clock
        self._stop = stop
        self._ceiling = Slots(parallel)
        self._services: dict[tuple[str, str], _Service] = {}
        self._lock = threading.Lock()

    def _service(self, service_type: str, region: str) -> _Service:
        with self._lock:
            service = self._services.get((service_type, region))
            if service is None:
                fixed = configured(self.conn, 'concurrency', service_type)
                per_second = rate_limit(self.conn, service_type)
                adaptive = None if fixed else AdaptiveLimit(self.parallel)
                service = self._services[(service_type, region)] = _Service(
                    Slots(int(fixed) if fixed else adaptive.size),
                    adaptive,
                    Rate(per_second) if per_second else None,
                )
            return service

    @contextlib.contextmanager
    def hold(
        self,
        service_type: str,
        region: str,
        priority: float,
        call: Hashable | None,
    ) -> Iterator[None]:
        """One call to the service: its slot first (waiting there holds no
        slot of the ceiling, that other services' calls need), then one of
        the ceiling, then its turn in the rate; the call's answer (its
        time, or an overload) sizes the service's slots. ``call`` names
        what is asked (answers are compared with those to the same); None
        for what may make no call: neither rate limited nor measured."""
        service = self._service(service_type, region)
        adaptive = service.adaptive
        with service.slots.hold(priority) as in_flight:
            with self._ceiling.hold(priority):
                if call is not None and service.rate is not None:
                    service.rate.wait(self.clock, self._stop)
                window = adaptive.window if adaptive is not None else 0
                started = self.clock.now()
                try:
                    yield
                except Exception as exc:
                    if adaptive is not None and status_code(exc) in OVERLOADED:
                        adaptive.overloaded(window)
                        service.slots.resize(adaptive.size)
                    raise
                if call is not None and adaptive is not None:
                    adaptive.answered(
                        call, self.clock.now() - started, in_flight, window
                    )
                    service.slots.resize(adaptive.size)

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot, of their service or of the ceiling."""
        with self._lock:
            services = list(self._services.values())
        return self._ceiling.waiting + sum(s.slots.waiting for s in services)

    def size(self, service_type: str, region: str) -> int:
        """How many slots the service has now."""
        return self._service(service_type, region).slots.size

    def limits(self) -> dict[str, dict[str, Any]]:
        """Per service ('type@region', or the type alone), its slots now
        and how they moved: for the run's report."""
        with self._lock:
            services = dict(self._services)
        out = {}
        for (service_type, region), service in sorted(services.items()):
            name = f'{service_type}@{region}' if region else service_type
            adaptive = service.adaptive
            out[name] = {
                'slots': service.slots.size,
                'adaptive': adaptive is not None,
                'rate_limit': 1.0 / service.rate.interval
                if service.rate
                else None,
            }
            if adaptive is not None:
                out[name].update(
                    lowest=adaptive.lowest,
                    highest=adaptive.highest,
                    grown=adaptive.grown,
                    shrunk=adaptive.shrunk,
                )
        return out


def configured(conn: Any, key: str, service_type: str) -> float | None:
    """clouds.yaml's ``key`` (``rate_limit``, ``concurrency``) for the
    service: one number for every service, or one per service type (an
    alias of the type too, as openstacksdk looks them up)."""
    config = getattr(conn, 'config', None)
    values = getattr(config, 'config', None)
    if not isinstance(values, dict):
        return None
    value = values.get(key)
    if isinstance(value, dict):
        getter = getattr(config, f'get_{key}', None)
        found = getter(service_type) if getter is not None else None
        if found is None:
            # openstacksdk never finds it for a hyphenated type: its loader
            # turns clouds.yaml's 'object-store' into 'object_store', then
            # it looks up 'object-store'
            found = value.get(service_type.replace('-', '_'))
        value = found
    return None if value is None else float(value)


def repair_limits(conn: Any) -> None:
    """Make clouds.yaml's per-service ``rate_limit`` and ``concurrency``
    usable by openstacksdk's adapters, before any proxy is made: its
    loader hands the numbers over as strings (keystoneauth then fails
    every call of the service: "'<=' not supported between instances of
    'int' and 'str'") and the hyphenated types spelt with underscores
    (never found)."""
    values = getattr(getattr(conn, 'config', None), 'config', None)
    if not isinstance(values, dict):
        return
    for key, number in (('rate_limit', float), ('concurrency', int)):
        value = values.get(key)
        if isinstance(value, dict):
            values[key] = {
                t.replace('_', '-'): number(v) for t, v in value.items()
            }
        elif value is not None:
            values[key] = number(value)


def size_pools(conn: Any, parallel: int) -> None:
    """Make the connection's session ready for a run's calls: what the
    HTTP stack works out on every call worked out once, and as many
    connections kept open to a host as a run of ``parallel`` makes calls
    at once (``api.session_costs``)."""
    # discovery lists up to ``parallel`` kinds at once, and their calls
    # per item or the executor's come on top
    session_costs.once_per_run(conn)
    session = getattr(getattr(conn, 'session', None), 'session', None)
    session_costs.size_pools(session, 2 * parallel)


def rate_limit(conn: Any, service_type: str) -> float | None:
    """The ``rate_limit`` of the connection's config (clouds.yaml, or
    ``limit_rate``'s) for the service, in calls per second."""
    return configured(conn, 'rate_limit', service_type)


def limit_rate(
    conn: Any, per_second: float, service_types: Iterable[str]
) -> dict[str, float]:
    """Set ``per_second`` as the connection's ``rate_limit`` of every
    service type (a lower one of clouds.yaml stays): the executor spaces
    its calls by it, and openstacksdk's adapters (discovery's lists) too,
    those made after this call. Returns the limits."""
    limits = {}
    for service_type in sorted(set(service_types)):
        wanted = [r for r in (rate_limit(conn, service_type), per_second) if r]
        if wanted:
            limits[service_type] = min(wanted)
    conn.config.config['rate_limit'] = limits
    return limits
