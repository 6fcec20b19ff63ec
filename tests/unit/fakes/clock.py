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

"""A clock that never sleeps: time advances only when something waits."""

from __future__ import annotations

import threading
import time

from osc_cascade.engine.retry import Clock


class FakeClock(Clock):
    """Time advances only when something sleeps; every sleep is recorded."""

    def __init__(self, start: float = 1000.0, *, yields: bool = False):
        self.start = start
        #: whether a sleep first lets the other threads run, as a real one
        #: does: without, a step retrying "in use" at no cost in time can
        #: keep the interpreter from the thread whose delete frees it until
        #: its retries are spent. Not where calls are spaced in time: the
        #: one clock of all threads adds up sleeps that then overlap
        self.yields = yields
        self.time = start
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self.time

    def sleep(self, seconds: float) -> None:
        if self.yields:
            time.sleep(0)
        with self._lock:
            self.sleeps.append(seconds)
            self.time += seconds

    def pause(self, seconds: float, stop: threading.Event) -> None:
        if not stop.is_set():
            self.sleep(seconds)


def patch_wall_clock(monkeypatch, *, yields: bool = False) -> FakeClock:
    """Make the real Clock (what the command uses) a fake one: retries
    and polls of a whole command then take no time (``yields``: as
    FakeClock's)."""
    clock = FakeClock(yields=yields)
    monkeypatch.setattr(Clock, 'now', lambda self: clock.now())
    monkeypatch.setattr(Clock, 'sleep', lambda self, s: clock.sleep(s))
    monkeypatch.setattr(
        Clock, 'pause', lambda self, s, stop: clock.pause(s, stop)
    )
    return clock
