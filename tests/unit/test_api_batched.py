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

"""api.batched: the values threads ask of one list at the same moment are
listed once; each gets its own items, listed after it asked; a failed
listing answers nobody (each asks alone)."""

import threading
import time

import pytest

from osc_cascade.api import batched


class Listing:
    """A list of items ``{'id': v, 'k': v}``; the calls it answered (the
    values asked), each held until ``release`` when ``hold`` is set."""

    def __init__(self, hold=False, fail=None):
        self.asked = []
        self.gate = threading.Event()
        if not hold:
            self.gate.set()
        self.fail = fail

    def __call__(self, values):
        self.asked.append(values)
        assert self.gate.wait(10)
        if self.fail is not None:
            raise self.fail
        return [{'id': f'item-{v}', 'k': v} for v in values if v != 'absent']


def until(condition, what='it'):
    """Until ``condition()`` holds (at most 5 s)."""
    for _ in range(1000):
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError(f'{what} never happened')


def waiting(batches, count):
    """Until ``count`` values wait for the next listing."""

    def waits():
        with batches._turn:
            return (
                batches._open is not None
                and len(batches._open.values) == count
            )

    until(waits, f'{count} values waiting')


def ask(batches, listing, values):
    """Each value asked on a thread of its own; their answers by value."""
    answers = {}

    def one(value):
        try:
            answers[value] = batches.items(value, listing)
        except batched.Failed as exc:
            answers[value] = exc

    threads = [threading.Thread(target=one, args=(v,)) for v in values]
    for t in threads:
        t.start()
    return answers, threads


def test_a_lone_value_is_listed_at_once_alone():
    listing = Listing()
    assert batched.Batches('k').items('a', listing) == [
        {'id': 'item-a', 'k': 'a'}
    ]
    assert listing.asked == [['a']]


def test_values_asked_while_listings_are_under_way_go_in_the_next_one(
    monkeypatch,
):
    monkeypatch.setattr(batched, 'UNDER_WAY', 1)
    listing = Listing(hold=True)
    batches = batched.Batches('k')
    first, first_threads = ask(batches, listing, ['a'])
    until(lambda: listing.asked)
    rest, threads = ask(batches, listing, ['d', 'b', 'c', 'b'])
    waiting(batches, 4)
    listing.gate.set()
    for t in first_threads + threads:
        t.join(10)
    # the value asked twice is asked once, each caller gets its own items
    assert listing.asked == [['a'], ['b', 'c', 'd']]
    assert first == {'a': [{'id': 'item-a', 'k': 'a'}]}
    assert rest == {v: [{'id': f'item-{v}', 'k': v}] for v in 'bcd'}


def test_a_value_goes_at_once_while_fewer_are_under_way(monkeypatch):
    monkeypatch.setattr(batched, 'UNDER_WAY', 2)
    listing = Listing(hold=True)
    batches = batched.Batches('k')
    _first, first_threads = ask(batches, listing, ['a'])
    until(lambda: listing.asked)
    _second, second_threads = ask(batches, listing, ['b'])
    until(lambda: len(listing.asked) == 2)
    assert listing.asked == [['a'], ['b']]
    third, third_threads = ask(batches, listing, ['c'])
    waiting(batches, 1)
    listing.gate.set()
    for t in first_threads + second_threads + third_threads:
        t.join(10)
    assert listing.asked == [['a'], ['b'], ['c']]
    assert third == {'c': [{'id': 'item-c', 'k': 'c'}]}


def test_a_full_listing_goes_at_once_though_one_is_under_way(monkeypatch):
    monkeypatch.setattr(batched, 'UNDER_WAY', 1)
    monkeypatch.setattr(batched, 'LIMIT', 3)
    listing = Listing(hold=True)
    batches = batched.Batches('k')
    _first, first_threads = ask(batches, listing, ['a'])
    answers, threads = ask(batches, listing, ['b', 'c', 'd'])
    until(lambda: len(listing.asked) == 2)
    # the second went before the first answered: it was full
    assert listing.asked == [['a'], ['b', 'c', 'd']]
    listing.gate.set()
    for t in first_threads + threads:
        t.join(10)
    assert answers == {v: [{'id': f'item-{v}', 'k': v}] for v in 'bcd'}


def test_a_value_the_list_does_not_hold_gets_nothing():
    assert batched.Batches('k').items('absent', Listing()) == []


def test_a_failed_listing_fails_each_of_its_values_and_the_next_one_lists(
    monkeypatch,
):
    monkeypatch.setattr(batched, 'UNDER_WAY', 1)
    listing = Listing(hold=True, fail=RuntimeError('503'))
    batches = batched.Batches('k')
    first, first_threads = ask(batches, listing, ['a'])
    until(lambda: listing.asked)
    rest, threads = ask(batches, listing, ['b', 'c'])
    waiting(batches, 2)
    listing.gate.set()
    for t in first_threads + threads:
        t.join(10)
    for value in 'abc':
        assert isinstance(first.get(value) or rest.get(value), batched.Failed)
        cause = (first.get(value) or rest.get(value)).__cause__
        assert str(cause) == '503'
    listing.fail = None
    assert batches.items('e', listing) == [{'id': 'item-e', 'k': 'e'}]


def test_an_interruption_goes_up_and_leaves_no_one_waiting():
    listing = Listing(fail=KeyboardInterrupt())
    batches = batched.Batches('k')
    with pytest.raises(KeyboardInterrupt):
        batches.items('a', listing)
    listing.fail = None
    assert batches.items('b', listing) == [{'id': 'item-b', 'k': 'b'}]


def test_one_batches_per_proxy_and_list():
    class Proxy:
        pass

    one, two = Proxy(), Proxy()
    ports = batched.batches(one, '/ports', 'id')
    assert batched.batches(one, '/ports', 'id') is ports
    assert batched.batches(one, '/ports', 'network_id') is not ports
    assert batched.batches(two, '/ports', 'id') is not ports
    # a proxy that cannot be weakly referred to: no batching, a new one
    assert batched.batches(1, '/ports', 'id') is not batched.batches(
        1, '/ports', 'id'
    )
