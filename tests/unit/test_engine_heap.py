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

"""engine.heap: the collector's thresholds raised while any thread is
within ``few_collections``, and put back as they were after the last."""

import gc
import threading

import pytest

from osc_cascade.engine import heap


@pytest.fixture(autouse=True)
def thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_raised_within_and_put_back_after():
    with heap.few_collections():
        assert gc.get_threshold() == (heap.YOUNG, heap.MIDDLE, heap.FULL)
    assert gc.get_threshold() == (700, 10, 10)


def test_put_back_after_a_failure():
    with pytest.raises(RuntimeError), heap.few_collections():
        raise RuntimeError('boom')
    assert gc.get_threshold() == (700, 10, 10)


def test_higher_thresholds_of_the_process_are_kept():
    gc.set_threshold(100_000, 10, 500)
    with heap.few_collections():
        assert gc.get_threshold() == (100_000, heap.MIDDLE, 500)
    assert gc.get_threshold() == (100_000, 10, 500)


def test_a_process_that_collects_nothing_is_left_so():
    gc.set_threshold(0, 10, 10)
    with heap.few_collections():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold() == (0, 10, 10)


def test_put_back_when_the_last_thread_leaves_whatever_the_order():
    first_in, second_in, first_out = (threading.Event() for _ in range(3))
    seen = {}

    def first():
        with heap.few_collections():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with heap.few_collections():
        second_in.set()
        first_out.wait(5)
        # the first left before this one: still raised
        seen['after_first_left'] = gc.get_threshold()
    thread.join(5)
    assert seen['after_first_left'] == (heap.YOUNG, heap.MIDDLE, heap.FULL)
    assert gc.get_threshold() == (700, 10, 10)


def test_the_decorated_function_runs_within():
    @heap.with_few_collections
    def thresholds_inside(extra):
        return gc.get_threshold(), extra

    assert thresholds_inside('x') == (
        (heap.YOUNG, heap.MIDDLE, heap.FULL),
        'x',
    )
    assert thresholds_inside.__name__ == 'thresholds_inside'
    assert gc.get_threshold() == (700, 10, 10)
