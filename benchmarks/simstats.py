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

"""What the simulated cloud (benchmarks.simcloud) counts of the requests
it answers: by service, region, method, route and status; its handlers'
CPU; the workers busy at once; the shards each answer read; and what each
answer took beyond the latency, which says whether the simulator keeps up
(a saturated simulator queues requests behind its lock, and their answers
come later than the latency alone would make them)."""

from __future__ import annotations

import collections
from collections.abc import Callable
import os
import re
import resource
import threading
import time
from typing import Any
from urllib import parse

#: what varies in a path: ids, names of the generated resources
_VARYING = re.compile(
    r'/(?:[0-9a-f]{32}|AUTH_[0-9a-f]+|(?:c|stack|obj)-[^/?]+)'
)


def route(url: str) -> str:
    """The path of ``url`` without its ids (as tools/cloudproxy counts)."""
    return _VARYING.sub('/{id}', parse.urlsplit(url).path)


def added_delays(seconds: list[float]) -> dict[str, float]:
    """The simulator's own delay per request, beyond the latency: its
    mean, median and 99th percentile in ms."""
    if not seconds:
        return {'added_ms_mean': 0.0, 'added_ms_p50': 0.0, 'added_ms_p99': 0.0}
    ordered = sorted(seconds)

    def at(fraction: float) -> float:
        index = min(len(ordered) - 1, int(fraction * len(ordered)))
        return round(1000 * ordered[index], 3)

    return {
        'added_ms_mean': round(1000 * sum(ordered) / len(ordered), 3),
        'added_ms_p50': at(0.5),
        'added_ms_p99': at(0.99),
    }


def _process_cpu() -> float:
    t = os.times()
    return t.user + t.system


class Counters:
    """The counters since the last ``reset``; thread-safe. ``settings``:
    the simulator's own figures for a snapshot (its workers, latency,
    delete scale and shards)."""

    def __init__(self, settings: Callable[[], dict[str, Any]]):
        self._lock = threading.Lock()
        self._settings = settings
        self._stats = self._new()

    @staticmethod
    def _new() -> dict[str, Any]:
        return {
            'requests': 0,
            'by_service': collections.Counter(),
            'by_region': collections.Counter(),
            'by_method': collections.Counter(),
            'routes': collections.Counter(),
            'statuses': collections.Counter(),
            # the simulator's own CPU seconds in its request threads
            'handler_cpu_s': 0.0,
            'busy': collections.Counter(),
            'busy_max': collections.Counter(),
            'fanout_shards': 0,
            'fanout_routes': collections.Counter(),
            # per request, what its answer took beyond the latency
            'added': [],
            'started': time.monotonic(),
            'cpu_at_start': _process_cpu(),
        }

    def reset(self) -> dict[str, Any]:
        """Start again; the snapshot of what was counted until now."""
        with self._lock:
            old, self._stats = self._stats, self._new()
            return self._snapshot(old)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return self._snapshot(self._stats)

    def _snapshot(self, s: dict[str, Any]) -> dict[str, Any]:
        wall = time.monotonic() - s['started']
        cpu = _process_cpu() - s['cpu_at_start']
        return {
            'requests': s['requests'],
            'by_service': dict(s['by_service']),
            'by_region': dict(s['by_region']),
            'by_method': dict(s['by_method']),
            'routes': dict(s['routes'].most_common()),
            'statuses': dict(s['statuses']),
            'handler_cpu_s': round(s['handler_cpu_s'], 3),
            'handler_cpu_ms_per_request': round(
                1000 * s['handler_cpu_s'] / max(1, s['requests']), 3
            ),
            **added_delays(s['added']),
            'process_cpu_s': round(cpu, 3),
            'wall_s': round(wall, 3),
            'busy_max': dict(s['busy_max']),
            'fanout_shards': s['fanout_shards'],
            'fanout_routes': dict(s['fanout_routes'].most_common(12)),
            **self._settings(),
            'peak_rss_mib': round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
            ),
        }

    def count(self, service, route, status, cpu, fanout, region) -> None:
        """One request answered: ``route`` its method and path without
        ids, ``cpu`` its handler's CPU seconds, ``fanout`` the shards
        that answered it."""
        named = f'{service} {route}'
        with self._lock:
            s = self._stats
            s['requests'] += 1
            s['by_service'][service] += 1
            s['by_region'][region] += 1
            s['by_method'][route.split(' ', 1)[0]] += 1
            s['routes'][named] += 1
            s['statuses'][str(status)] += 1
            s['handler_cpu_s'] += cpu
            s['fanout_shards'] += fanout
            if fanout > 1:
                s['fanout_routes'][named] += fanout

    def added(self, seconds: float) -> None:
        """A request was answered ``seconds`` later than the latency
        alone would have: the simulator's own delay (its lock, its CPU,
        the HTTP server's), which the client's wall time includes."""
        with self._lock:
            self._stats['added'].append(seconds)

    def busy(self, service: str, delta: int) -> None:
        """A worker of ``service`` taken (1) or given back (-1)."""
        with self._lock:
            busy = self._stats['busy']
            busy[service] += delta
            if busy[service] > self._stats['busy_max'][service]:
                self._stats['busy_max'][service] = busy[service]
