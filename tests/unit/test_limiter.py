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

"""Per-service API slots: each service's limit grows while few of its calls
wait in the service, shrinks when more do or it answers 429/503, under the
``--parallel`` ceiling; a saturated service holds no slot another needs.
Time is a fake clock's, or the answers' seconds given as numbers."""

import contextlib
import threading
import time
from unittest import mock

from openstack.config import cloud_region
import pytest

from osc_cascade.engine import limiter
from osc_cascade.engine.executor import Executor
from osc_cascade.engine.limiter import AdaptiveLimit, Limiter
from osc_cascade.engine.resource import delete
from osc_cascade.kinds.base import GONE
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.kinds import KIND, FakeKind, http_error, make_plan, ref
from tests.unit.test_executor import wait_until

CALL = ('test.thing', 'delete')


class Conn:
    """What the limiter reads of a connection: its config (clouds.yaml's
    per-service ``concurrency`` and ``rate_limit``)."""

    def __init__(self, **config):
        self.config = cloud_region.CloudRegion(config=config)


def window(limit, seconds, *, in_flight=None, call=CALL):
    """A window's worth of answers, each taking ``seconds``, with the
    limit full (or ``in_flight``) when each started."""
    for _ in range(max(limiter.MIN_WINDOW, limit.size)):
        limit.answered(call, seconds, in_flight or limit.size, limit.window)


def used_limit(ceiling=100, first=0.2):
    limit = AdaptiveLimit(ceiling)
    limit.answered(CALL, first, 1, limit.window)  # the fastest to compare with
    return limit


def test_the_limit_doubles_while_answers_hold_then_grows_by_one():
    limit = used_limit()
    assert limit.size == limiter.INITIAL_LIMIT
    window(limit, 0.25)  # 1.25 times the fastest: holds
    assert limit.size == 2 * limiter.INITIAL_LIMIT
    window(limit, 0.25)
    assert limit.size == 4 * limiter.INITIAL_LIMIT
    limit.overloaded(limit.window)  # the first cut ends the doubling
    after_cut = limit.size
    window(limit, 0.25)
    assert limit.size == after_cut + 1


def test_an_unused_limit_does_not_grow():
    limit = used_limit()
    window(limit, 0.2, in_flight=1)
    assert limit.size == limiter.INITIAL_LIMIT


def test_the_limit_shrinks_when_calls_wait_in_the_service():
    limit = used_limit()
    window(limit, 0.2)
    window(limit, 0.2)
    assert limit.size == 16
    # 16 in flight, each ten times slower than the fastest: 14.4 of them
    # waited in the service; the limit sheds the excess, by half at most
    window(limit, 2.0)
    assert limit.size == 8
    window(limit, 0.8)  # 8 * (1 - 0.2 / 0.8) = 6 waited: 2 too many
    assert limit.size == 6
    window(limit, 0.4)  # 3 waited: between the bounds, it stays
    assert limit.size == 6
    assert (limit.lowest, limit.highest) == (4, 16)
    assert (limit.grown, limit.shrunk) == (2, 2)


def test_answers_to_calls_sent_before_a_change_do_not_count_again():
    limit = used_limit()
    window(limit, 0.2)
    window(limit, 0.2)
    assert limit.size == 16
    sent_at_16 = limit.window
    window(limit, 2.0)  # 14.4 calls waited in the service: cut to 8
    assert limit.size == 8
    # the rest of the calls sent at 16 answer as slowly: they tell of
    # the former limit, and would cut it to 4, then 2, then 1
    for _ in range(3 * 16):
        limit.answered(CALL, 2.0, 16, sent_at_16)
    assert limit.size == 8
    # calls sent at 8 that wait as much: 7.2 of 8 waited, cut to 4.8
    window(limit, 2.0)
    assert limit.size == 4


def test_a_cloud_slower_as_a_whole_does_not_drive_the_limit_down():
    # every answer five times slower than the fastest, from a quiet
    # moment: with two calls in flight, fewer than two waited in the
    # service, which has room; a ratio of answer times alone (5) read it
    # as saturated, and the limit fell to one call, the service idle for
    # a round trip between calls
    limit = used_limit()
    limit.overloaded(limit.window)  # slow start over: one more per window
    assert limit.size == 2
    window(limit, 1.0)
    assert limit.size == 3
    # the same answers with 5 in flight: 4 waited, it stays
    limit.limit = 5.0
    window(limit, 1.0)
    assert limit.size == 5
    assert limit.shrunk == 1  # the overload's alone


def test_answers_are_compared_with_the_same_call():
    # the service's other call is ten times slower, and always was: the
    # service did not slow down
    limit = used_limit()
    slow = ('test.thing', 'remove_interface')
    limit.answered(slow, 2.0, 1, limit.window)
    for _ in range(3):
        for _ in range(limit.size):
            limit.answered(CALL, 0.2, limit.size, limit.window)
            limit.answered(slow, 2.0, limit.size, limit.window)
    assert limit.size == 32


@pytest.mark.parametrize('code', [429, 503])
def test_an_overload_halves_the_limit_once_for_the_calls_sent_before(code):
    clock = FakeClock()
    lim = Limiter(object(), 100, clock, threading.Event())
    service = lim._service('test', '')
    service.adaptive.limit = 16.0
    service.slots.resize(16)
    # three calls in flight, all refused: one cut
    with pytest.raises(Exception):
        with lim.hold('test', '', 0, CALL):
            with lim.hold('test', '', 0, CALL):
                with lim.hold('test', '', 0, CALL):
                    raise http_error(code)
    assert lim.size('test', '') == 8
    assert lim.limits()['test']['shrunk'] == 1
    # one sent after the cut, refused too: another
    with pytest.raises(Exception):
        with lim.hold('test', '', 0, CALL):
            raise http_error(code)
    assert lim.size('test', '') == 4


def test_other_errors_do_not_shrink_it():
    lim = Limiter(object(), 100, FakeClock(), threading.Event())
    for code in (404, 409, 500):
        with pytest.raises(Exception):
            with lim.hold('test', '', 0, CALL):
                raise http_error(code)
    assert lim.size('test', '') == limiter.INITIAL_LIMIT


def test_the_limit_never_passes_the_ceiling_nor_falls_below_one():
    limit = used_limit(ceiling=6)
    for _ in range(5):
        window(limit, 0.2)
    assert limit.size == 6
    assert AdaptiveLimit(2).size == 2  # starts below --parallel too
    for _ in range(10):
        limit.overloaded(limit.window)
        window(limit, 10.0, in_flight=1)
        assert limit.size >= 1
    # halved at each 429, and one call in flight at a time queues nothing
    # in the service: it grows back by one per window
    assert limit.size == 2
    limit.overloaded(limit.window)
    assert limit.size == 1


def test_the_limiter_measures_the_call_not_the_wait_for_its_turn():
    # one call a second, each answered in 0.2 s of fake time: spaced by
    # the rate, every answer is as fast as the first and nothing shrinks
    clock = FakeClock()
    lim = Limiter(
        Conn(rate_limit={'test': 1.0}), 100, clock, threading.Event()
    )
    for _ in range(1 + 2 * limiter.MIN_WINDOW):
        with lim.hold('test', '', 0, CALL):
            clock.sleep(0.2)
    assert clock.now() - clock.start == pytest.approx(10.2)
    assert lim.size('test', '') == limiter.INITIAL_LIMIT
    # what it is told: the answer's time, not the wait for its turn,
    # and the calls in flight with it
    adaptive = lim._service('test', '').adaptive
    with mock.patch.object(adaptive, 'answered') as answered:
        with lim.hold('test', '', 0, CALL):
            clock.sleep(0.7)
    answered.assert_called_once_with(
        CALL, pytest.approx(0.7), 1, adaptive.window
    )


def test_a_service_whose_calls_wait_in_it_gets_fewer_slots():
    # through hold, as the executor calls: sixteen calls at once, each ten
    # times slower than the first, alone: 0.9 to 14.4 of them waited in
    # the service (median 7.65, 3.65 too many), and its slots shrink
    clock = FakeClock()
    lim = Limiter(object(), 100, clock, threading.Event())
    with lim.hold('test', '', 0, CALL):
        clock.sleep(0.2)
    service = lim._service('test', '')
    service.adaptive.limit = 16.0
    service.slots.resize(16)
    with contextlib.ExitStack() as calls:
        for _ in range(16):
            calls.enter_context(lim.hold('test', '', 0, CALL))
        clock.sleep(2.0)
    assert lim.size('test', '') == 12
    assert lim.limits()['test']['shrunk'] == 1


def test_a_saturated_service_holds_no_slot_of_another():
    # two slots in all; compute may have one: its second call waits for
    # compute's slot, not for one of the ceiling, and network's goes
    lim = Limiter(
        Conn(concurrency={'compute': 1}), 2, FakeClock(), threading.Event()
    )
    release = threading.Event()
    network_done = threading.Event()

    def compute_call():
        with lim.hold('compute', '', 0, CALL):
            release.wait(10)

    first = threading.Thread(target=compute_call)
    first.start()
    assert wait_until(lambda: lim._service('compute', '').slots.held == 1)
    second = threading.Thread(target=compute_call)
    second.start()
    assert wait_until(lambda: lim.waiting == 1)

    def network_call():
        with lim.hold('network', '', 0, CALL):
            network_done.set()

    threading.Thread(target=network_call).start()
    assert network_done.wait(10)
    release.set()
    first.join(10)
    second.join(10)


def test_the_ceiling_bounds_every_service_together():
    lim = Limiter(object(), 3, FakeClock(), threading.Event())
    state = {'now': 0, 'max': 0}
    lock = threading.Condition()

    def call(service):
        with lim.hold(service, '', 0, CALL):
            with lock:
                state['now'] += 1
                state['max'] = max(state['max'], state['now'])
                lock.wait_for(lambda: state['now'] >= 3, timeout=0.2)
                state['now'] -= 1

    threads = [
        threading.Thread(target=call, args=(s,))
        for s in ('compute', 'network', 'image') * 3
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert state['max'] == 3


def test_a_saturated_service_leaves_the_executor_threads_to_others():
    # compute may have one call at once (clouds.yaml) and its first call
    # hangs until network's step is done; compute has twenty steps ready
    # on longer chains than network's, more than the executor's threads:
    # they may hold only their share of them, and network's step runs
    release = threading.Event()

    network = FakeKind('test.network', on_call=lambda what, key: release.set())
    network.service_type = 'network'
    released = []
    compute = FakeKind(
        on_call=lambda what, key: released.append(release.wait(10))
    )
    compute.service_type = 'compute'
    heads = [f'c{i:02d}' for i in range(20)]
    plan = make_plan(
        [
            *heads,
            *(f'd{i:02d}' for i in range(20)),
            delete(ref('n', 'test.network')),
        ],
        [(f'c{i:02d}', f'd{i:02d}') for i in range(20)],
    )
    ex = Executor(
        Conn(concurrency={'compute': 1}),
        {KIND: compute, 'test.network': network},
        parallel=2,
        clock=FakeClock(),
    )
    result = ex.run(plan)
    assert result.ok
    # the first compute call was let go by network's, not by its timeout
    assert released[0] is True
    assert network.deleted() == ['n']


def test_clouds_yaml_values_of_hyphenated_service_types_are_found():
    # openstacksdk's loader turns clouds.yaml's 'object-store' into
    # 'object_store', then never finds it for 'object-store'
    conn = Conn(
        concurrency={'object_store': '5'},
        rate_limit={'object_store': '2', 'volumev3': 3.0},
    )
    assert conn.config.get_concurrency('object-store') is None
    assert limiter.configured(conn, 'concurrency', 'object-store') == 5
    assert limiter.rate_limit(conn, 'object-store') == 2.0
    assert limiter.rate_limit(conn, 'block-storage') == 3.0
    assert limiter.rate_limit(conn, 'compute') is None
    lim = Limiter(conn, 10, FakeClock(), threading.Event())
    assert lim.size('object-store', 'RegionOne') == 5
    assert lim.limits() == {
        'object-store@RegionOne': {
            'slots': 5,
            'adaptive': False,
            'rate_limit': 2.0,
        }
    }


def test_limit_rate_keeps_a_lower_configured_rate():
    conn = Conn(rate_limit={'compute': 1.0, 'image': 50.0})
    limits = limiter.limit_rate(conn, 5.0, ['compute', 'network', 'image'])
    assert limits == {'compute': 1.0, 'network': 5.0, 'image': 5.0}
    assert limiter.rate_limit(conn, 'network') == 5.0
    assert conn.config.get_rate_limit('network') == 5.0


def limited_connection(cloud):
    """A connection to the fake cloud made as openstacksdk's loader makes
    one from clouds.yaml, with per-service limits."""
    from openstack import connection

    return connection.Connection(
        auth=cloud.connection().config.config['auth'],
        region_name='RegionOne',
        identity_api_version='3',
        concurrency={'compute': 2, 'object-store': 3},
        rate_limit={'network': 400},
    )


def test_clouds_yaml_limits_are_repaired_for_openstacksdk(cloud):
    # openstacksdk's loader hands them over as strings, hyphenated types
    # spelt with underscores: keystoneauth fails every call of the
    # service, and never gets the object-store's
    broken = limited_connection(cloud)
    assert broken.config.config['concurrency'] == {
        'compute': '2',
        'object_store': '3',
    }
    with pytest.raises(TypeError):
        list(broken.compute.servers())
    conn = limited_connection(cloud)
    limiter.repair_limits(conn)
    assert conn.config.get_concurrency('compute') == 2
    assert conn.config.get_concurrency('object-store') == 3
    assert conn.config.get_rate_limit('network') == 400.0
    assert list(conn.compute.servers()) == []
    assert list(conn.network.networks()) == []
    limiter.repair_limits(object())  # no config: nothing to repair


def test_a_service_with_few_slots_still_waits_for_its_deletes_together():
    # one slot for the service, twenty asynchronous deletes that finish
    # only once all twenty were asked: each waits for its own without a
    # slot, side by side, not eight at a time (the threads of one slot)
    class Slow(FakeKind):
        def status(self, conn, ref_):
            if len(self.deleted()) < 20:
                # a real pause: the fake clock's sleeps are instant, and
                # spinning pollers starved the thread still asking (and
                # ran the clock past the timeout on a loaded machine)
                time.sleep(0.001)
                return 'deleting'
            return GONE

    kind = Slow(synchronous=False)
    steps = [delete(ref(f'r{i:02d}', project_id='')) for i in range(20)]
    result = Executor(
        Conn(concurrency={'test': 1}),
        {KIND: kind},
        parallel=4,
        clock=FakeClock(),
        # every thread's polls move the one fake clock: a long timeout
        timeout=100000,
    ).run(make_plan(steps))
    assert result.ok
    assert len(kind.deleted()) == 20


def test_the_sessions_pools_keep_as_many_connections_as_calls():
    from keystoneauth1 import session as ks_session

    conn = mock.Mock(session=ks_session.Session())
    before = dict(conn.session.session.adapters)
    limiter.size_pools(conn, 20)  # --parallel 20: 40 calls at once
    after = conn.session.session.adapters
    assert set(after) == set(before)
    for prefix, adapter in after.items():
        # keystoneauth's own adapter (TCP keepalive), with larger pools
        assert type(adapter) is type(before[prefix])
        assert adapter._pool_maxsize == 40
        assert adapter.max_retries is before[prefix].max_retries
    kept = dict(after)
    limiter.size_pools(conn, 10)  # never smaller
    assert conn.session.session.adapters == kept
