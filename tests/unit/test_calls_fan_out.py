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

"""kinds.calls.fan_out: the kinds' calls per item made at once, in the
order of the items, the first failure raised, within a width per service
that every fan-out of a discovery shares. No timing: barriers and counters say what
ran at once."""

import contextvars
import threading

import pytest

from osc_cascade.kinds import calls

#: a safety net for a broken bound, never a measure: a barrier that waits
#: this long has failed the test
STUCK_S = 10


class Concurrency:
    """Counts the calls running at once; each call waits at a barrier of
    ``together`` so that that many run at once before any goes on."""

    def __init__(self, together):
        self.barrier = threading.Barrier(together, timeout=STUCK_S)
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0

    def __call__(self, item):
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            self.barrier.wait()
            return item * 10
        finally:
            with self.lock:
                self.running -= 1


def test_results_keep_the_order_of_the_items():
    # the later items are answered first: the order is still the items'
    release = {i: threading.Event() for i in range(6)}

    def answer(i):
        if i + 1 in release:
            release[i + 1].wait(STUCK_S)
        release[i].set()
        return f'item {i}'

    with calls.shared_width(6):
        assert calls.fan_out(answer, range(6)) == [
            f'item {i}' for i in range(6)
        ]


def test_calls_run_at_once_up_to_the_width_and_never_more():
    seen = Concurrency(together=3)
    with calls.shared_width(3):
        assert calls.fan_out(seen, range(9)) == [i * 10 for i in range(9)]
    assert seen.peak == 3


def test_fan_outs_of_one_discovery_share_its_width():
    # two kinds listed at once, each fanning out: 2 slots between them
    seen = Concurrency(together=2)
    results = {}

    def kind(name):
        results[name] = calls.fan_out(seen, range(4))

    with calls.shared_width(2):
        threads = [
            threading.Thread(
                target=contextvars.copy_context().run, args=(kind, name)
            )
            for name in ('a', 'b')
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(STUCK_S)
    assert results == {'a': [0, 10, 20, 30], 'b': [0, 10, 20, 30]}
    assert seen.peak == 2


def test_each_service_has_a_width_of_its_own():
    # Heat's and Swift's calls, each kind fanning out at once: 2 slots
    # each, 4 calls at once in all, never more than 2 to one service
    per_service = {name: Concurrency(together=2) for name in ('heat', 'swift')}
    both = Concurrency(together=4)
    results = {}

    def kind(service):
        def call(i):
            both(i)
            return per_service[service](i)

        results[service] = calls.fan_out(call, range(4), service=service)

    with calls.shared_width(2):
        threads = [
            threading.Thread(
                target=contextvars.copy_context().run, args=(kind, service)
            )
            for service in per_service
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(STUCK_S)
    assert results == {s: [0, 10, 20, 30] for s in per_service}
    assert both.peak == 4
    assert {s: c.peak for s, c in per_service.items()} == {
        'heat': 2,
        'swift': 2,
    }


def test_the_first_failure_in_the_order_of_the_items_is_raised():
    # item 3 fails first in time, item 1 (started by then) after it: item
    # 1's is raised, as the loop would have raised it
    both_started = threading.Barrier(2, timeout=STUCK_S)
    three_failed = threading.Event()

    def call(i):
        if i == 3:
            both_started.wait()
            three_failed.set()
            raise LookupError('item 3')
        if i == 1:
            both_started.wait()
            three_failed.wait(STUCK_S)
            raise ValueError('item 1')
        return i

    with calls.shared_width(4), pytest.raises(ValueError, match='item 1'):
        calls.fan_out(call, range(4))


def test_no_call_is_started_after_one_failed():
    made = []

    def call(i):
        made.append(i)
        if i == 0:
            raise LookupError('item 0')
        return i

    # one slot: the calls are made one after the other, and the first fails
    with calls.shared_width(1), pytest.raises(LookupError, match='item 0'):
        calls.fan_out(call, range(5))
    assert made == [0]


def test_a_call_that_fans_out_itself_does_so_in_its_own_slot():
    # with one slot, nested calls waiting for a slot would wait forever
    def outer(i):
        return calls.fan_out(lambda j: (i, j), range(2))

    with calls.shared_width(1):
        assert calls.fan_out(outer, range(2)) == [
            [(0, 0), (0, 1)],
            [(1, 0), (1, 1)],
        ]


def test_outside_a_discovery_the_default_width_bounds_the_calls():
    seen = Concurrency(together=2)
    assert calls.fan_out(seen, range(4)) == [0, 10, 20, 30]
    assert 2 <= seen.peak <= calls.DEFAULT_WIDTH
