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

"""The executor, with a fake clock and scripted kinds: nothing sleeps."""

import concurrent.futures
import threading
import time

from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc
from openstack.config import cloud_region
import pytest

from osc_cascade.engine import executor, resource, retry
from osc_cascade.engine.executor import (
    DONE,
    FAILED,
    KEPT,
    SKIPPED,
    Executor,
    RunResult,
    StepResult,
)
from osc_cascade.engine.resource import Step
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.engine.slots import Slots
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.kinds import (
    KIND,
    FakeKind,
    chain_plan,
    conflict,
    http_error,
    make_plan,
    not_found,
    ref,
    sdk_error,
)


def d(id_):
    return f'delete:{KIND}:{id_}'


class Conn:
    """What the executor reads of a connection: its config (clouds.yaml's
    per-service ``concurrency`` and ``rate_limit``)."""

    def __init__(self, **config):
        self.config = cloud_region.CloudRegion(config=config)


def run(
    plan,
    kind=None,
    *,
    parallel=4,
    timeout=600.0,
    retry=None,
    clock=None,
    events=None,
    conn=None,
):
    kind = kind or FakeKind()
    clock = clock or FakeClock()
    ex = Executor(
        conn or object(),
        {KIND: kind},
        parallel=parallel,
        timeout=timeout,
        retry=retry or RetryPolicy(),
        clock=clock,
        on_event=(events.append if events is not None else None),
    )
    return ex.run(plan)


def outcomes(result):
    return {k: r.outcome for k, r in result.results.items()}


# -- scheduling ------------------------------------------------------------


def test_runs_everything_in_dependency_order():
    kind = FakeKind()
    plan = make_plan(
        ['a', 'b', 'c', 'd'], [('a', 'b'), ('b', 'd'), ('c', 'd')]
    )
    result = run(plan, kind, parallel=1)
    assert result.ok
    assert set(outcomes(result).values()) == {DONE}
    order = kind.deleted()
    assert order.index('a') < order.index('b') < order.index('d')
    assert order.index('c') < order.index('d')


def test_a_step_starts_as_soon_as_its_own_dependencies_are_done():
    # a -> b, and c (independent) finishes only once b has run: in waves,
    # b would wait for c and this would never finish
    b_ran = threading.Event()
    c_saw_b = []

    def on_call(what, key):
        if key == 'b':
            b_ran.set()
        if key == 'c':
            c_saw_b.append(b_ran.wait(timeout=10))

    kind = FakeKind(on_call=on_call)
    result = run(make_plan(['a', 'b', 'c'], [('a', 'b')]), kind, parallel=2)
    assert result.ok
    assert c_saw_b == [True]


@pytest.mark.parametrize('parallel', [1, 3, 5])
def test_never_more_than_parallel_steps_at_once(parallel, monkeypatch):
    n = 12
    pools = []

    class RecordingPool(concurrent.futures.ThreadPoolExecutor):
        def __init__(self, max_workers=None, **kw):
            pools.append(max_workers)
            super().__init__(max_workers, **kw)

    monkeypatch.setattr(
        concurrent.futures, 'ThreadPoolExecutor', RecordingPool
    )
    threads = set()
    lock = threading.Condition()
    state = {'now': 0, 'max': 0, 'started': 0}

    def on_call(what, key):
        with lock:
            threads.add(threading.current_thread().name)
            state['now'] += 1
            state['started'] += 1
            state['max'] = max(state['max'], state['now'])
            lock.notify_all()
            # hold the slot until the bound is reached (or nothing more
            # can start), so that an executor that ignores it shows
            lock.wait_for(
                lambda: state['now'] >= parallel or state['started'] == n,
                timeout=10,
            )
            state['now'] -= 1

    kind = FakeKind(on_call=on_call)
    # the service's own slots fixed above the ceiling (clouds.yaml's
    # concurrency), so that the ceiling is what binds from the start
    result = run(
        make_plan([f's{i:02d}' for i in range(n)]),
        kind,
        parallel=parallel,
        conn=Conn(concurrency={'test': 100}),
    )
    assert result.ok
    # the bound is reached, and never passed: no more calls than that
    # (threads may wait for a delete to finish without holding a slot)
    assert state['max'] == parallel
    # threads for the steps awake, and for those asleep between polls
    assert pools == [
        parallel * executor.THREADS_PER_SLOT + executor.SLEEPING_THREADS
    ]
    assert len(threads) <= parallel * executor.THREADS_PER_SLOT


@pytest.mark.parametrize('threads_per_slot', [1, 8])
def test_waiting_for_a_delete_does_not_hold_a_slot(
    threads_per_slot, monkeypatch
):
    # one slot: while a waits for its asynchronous delete, b's delete goes;
    # with one thread per slot too, a asleep holds none of them
    monkeypatch.setattr(executor, 'THREADS_PER_SLOT', threads_per_slot)
    b_deleted = threading.Event()
    seen = []

    class Clock(FakeClock):
        def sleep(self, seconds):
            seen.append(b_deleted.wait(timeout=10))
            super().sleep(seconds)

    def on_call(what, key):
        if key == 'b' and what == 'delete':
            b_deleted.set()

    kind = FakeKind(
        synchronous=False, statuses={'a': ['deleting']}, on_call=on_call
    )
    result = run(make_plan(['a', 'b']), kind, parallel=1, clock=Clock())
    assert result.ok
    assert seen == [True]


def test_parallel_must_be_positive():
    with pytest.raises(ValueError):
        Executor(None, {}, parallel=0)


def test_an_empty_plan_is_ok():
    result = run(make_plan([]))
    assert result.ok and result.results == {}


def test_a_long_chain_runs_and_a_failure_at_its_head_skips_it_all():
    n = 3000
    ids = [f'n{i:05d}' for i in range(n)]
    kind = FakeKind(script={ids[0]: [ValueError('broken')]})
    result = run(chain_plan(ids), kind)
    assert result.results[d(ids[0])].outcome == FAILED
    assert len(result.by_outcome(SKIPPED)) == n - 1
    assert kind.deleted() == [ids[0]]


# -- retries ---------------------------------------------------------------


@pytest.mark.parametrize(
    'error',
    [
        conflict(),
        http_error(429),
        http_error(500),
        http_error(503),
        ks_exc.ConnectFailure('connection refused'),
        ks_exc.ConnectTimeout('timed out'),
    ],
    ids=['409', '429', '500', '503', 'connect-failure', 'connect-timeout'],
)
def test_transient_errors_are_retried_with_exponential_backoff(error):
    clock = FakeClock()
    kind = FakeKind(script={'a': [error, error, error]})
    events = []
    result = run(
        make_plan(['a']),
        kind,
        clock=clock,
        events=events,
        retry=RetryPolicy(base_delay=1, max_delay=30),
    )
    step = result.results[d('a')]
    assert step.outcome == DONE
    assert step.attempts == 4
    assert clock.sleeps == [1, 2, 4]
    assert step.seconds == 7
    retries = [e for e in events if e.kind == 'retry']
    assert [e.message.split(' (')[0] for e in retries] == [
        'attempt 1 failed',
        'attempt 2 failed',
        'attempt 3 failed',
    ]
    assert retries[2].message.endswith('retrying in 4s')


def test_backoff_is_capped_by_max_delay():
    clock = FakeClock()
    kind = FakeKind(script={'a': [conflict()] * 6})
    run(
        make_plan(['a']),
        kind,
        clock=clock,
        retry=RetryPolicy(max_attempts=10, base_delay=2, max_delay=10),
    )
    assert clock.sleeps == [2, 4, 8, 10, 10, 10]


def test_retry_policy_delays():
    policy = RetryPolicy(base_delay=0.5, max_delay=3)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1, 2, 3, 3]


def test_gives_up_after_max_attempts():
    clock = FakeClock()
    kind = FakeKind(script={'a': [http_error(503, 'unavailable')] * 10})
    result = run(
        make_plan(['a', 'b'], [('a', 'b')]),
        kind,
        clock=clock,
        retry=RetryPolicy(max_attempts=3),
    )
    failed = result.results[d('a')]
    assert failed.outcome == FAILED
    assert failed.error == 'gave up after 3 attempts: unavailable'
    assert failed.attempts == 3
    assert kind.deleted() == ['a'] * 3
    assert clock.sleeps == [1, 2]
    assert result.results[d('b')].outcome == SKIPPED
    assert not result.ok


@pytest.mark.parametrize(
    'error',
    [
        http_error(400, 'bad request'),
        http_error(403, 'forbidden'),
        ValueError('a bug'),
    ],
    ids=['400', '403', 'bug'],
)
def test_other_errors_fail_at_once(error):
    clock = FakeClock()
    kind = FakeKind(script={'a': [error]})
    result = run(make_plan(['a']), kind, clock=clock)
    step = result.results[d('a')]
    assert step.outcome == FAILED
    assert clock.sleeps == []
    assert kind.deleted() == ['a']
    assert step.attempts == 1
    assert str(error).split()[0] in step.error


def test_in_use_is_what_the_kind_says():
    # a kind that knows its own "in use" answer (cinder's 400)
    bad = sdk_error(
        sdk_exc.BadRequestException, 400, 'Invalid volume: attached'
    )
    kind = FakeKind(script={'a': [bad]}, in_use=(sdk_exc.BadRequestException,))
    clock = FakeClock()
    result = run(make_plan(['a']), kind, clock=clock)
    assert result.ok
    assert clock.sleeps == [1]


def test_retries_stop_at_the_step_timeout():
    clock = FakeClock()
    kind = FakeKind(script={'a': [conflict('still in use')] * 20})
    result = run(
        make_plan(['a']),
        kind,
        clock=clock,
        timeout=10,
        retry=RetryPolicy(max_attempts=20),
    )
    step = result.results[d('a')]
    assert step.outcome == FAILED
    assert step.error == 'timed out after 10s: still in use'
    assert step.attempts == 4
    # 1 + 2 + 4 = 7; the next 8 would pass the deadline
    assert clock.sleeps == [1, 2, 4]


def test_a_404_on_delete_counts_as_done():
    kind = FakeKind(
        synchronous=False,
        script={'a': [not_found()]},
        statuses={'a': [ValueError('must not be asked')]},
    )
    result = run(make_plan(['a']), kind)
    step = result.results[d('a')]
    assert step.outcome == DONE
    assert step.attempts == 0
    assert result.ok


def test_keystone_404_counts_as_done_too():
    kind = FakeKind(script={'a': [ks_exc.NotFound()]})
    assert run(make_plan(['a']), kind).ok


# -- waiting for asynchronous deletes -------------------------------------


def test_waits_until_the_resource_is_gone_backing_off():
    clock = FakeClock()
    kind = FakeKind(synchronous=False, statuses={'a': ['deleting'] * 6})
    result = run(
        make_plan(['a', 'b'], [('a', 'b')]),
        kind,
        clock=clock,
        retry=RetryPolicy(poll_min=0.5, poll_max=4),
    )
    assert result.ok
    assert clock.sleeps == [0.5, 1, 2, 4, 4, 4]
    # b only starts once a is really gone
    assert kind.deleted() == ['a', 'b']
    assert result.results[d('a')].seconds == 15.5


def test_a_404_while_waiting_means_gone():
    kind = FakeKind(
        synchronous=False, statuses={'a': ['deleting', not_found()]}
    )
    assert run(make_plan(['a']), kind).ok


def test_an_error_status_while_waiting_fails_the_step():
    kind = FakeKind(
        synchronous=False, statuses={'a': ['deleting', 'error_deleting']}
    )
    result = run(make_plan(['a', 'b'], [('a', 'b')]), kind)
    assert result.results[d('a')].outcome == FAILED
    assert result.results[d('a')].error == (
        'delete failed: status is error_deleting'
    )
    assert result.results[d('a')].attempts == 1  # the delete call
    assert result.results[d('b')].outcome == SKIPPED
    assert kind.deleted() == ['a']


def test_the_timeout_applies_while_waiting():
    clock = FakeClock()
    kind = FakeKind(synchronous=False, statuses={'a': ['deleting'] * 100})
    result = run(
        make_plan(['a']),
        kind,
        clock=clock,
        timeout=20,
        retry=RetryPolicy(poll_min=1, poll_max=8),
    )
    step = result.results[d('a')]
    assert step.outcome == FAILED
    assert 'timed out after 20s waiting for the delete' in step.error
    assert '(status deleting)' in step.error
    assert sum(clock.sleeps) <= 20
    assert clock.sleeps == [1, 2, 4, 8]


def test_transient_status_errors_are_tolerated_a_few_times():
    kind = FakeKind(
        synchronous=False,
        statuses={'a': [http_error(503), 'deleting', http_error(502)]},
    )
    assert run(make_plan(['a']), kind).ok


def test_status_checks_that_keep_failing_fail_the_step():
    kind = FakeKind(
        synchronous=False, statuses={'a': [http_error(503, 'down')] * 10}
    )
    result = run(make_plan(['a']), kind, retry=RetryPolicy(max_attempts=3))
    assert result.results[d('a')].error == ('status checks kept failing: down')


def test_a_status_error_that_is_not_transient_fails_the_step():
    kind = FakeKind(
        synchronous=False, statuses={'a': [http_error(403, 'forbidden')]}
    )
    result = run(make_plan(['a']), kind)
    assert result.results[d('a')].outcome == FAILED
    assert result.results[d('a')].error == 'forbidden'


# -- failures and what they skip ------------------------------------------


def test_a_failed_step_skips_its_dependents_but_not_independent_steps():
    # a -> b -> c, a -> d; e independent, f after e
    kind = FakeKind(script={'a': [ValueError('no')]})
    plan = make_plan(
        ['a', 'b', 'c', 'd', 'e', 'f'],
        [('a', 'b'), ('b', 'c'), ('a', 'd'), ('e', 'f')],
    )
    result = run(plan, kind)
    assert outcomes(result) == {
        d('a'): FAILED,
        d('b'): SKIPPED,
        d('c'): SKIPPED,
        d('d'): SKIPPED,
        d('e'): DONE,
        d('f'): DONE,
    }
    assert sorted(kind.deleted()) == ['a', 'e', 'f']
    assert result.results[d('b')].error == (
        f'after delete {KIND} a (a), which was failed'
    )
    assert result.results[d('c')].error == (
        f'after delete {KIND} b (b), which was skipped'
    )


def test_a_step_with_one_failed_and_one_done_predecessor_is_skipped():
    kind = FakeKind(script={'a': [ValueError('no')]})
    plan = make_plan(['a', 'b', 'c'], [('a', 'c'), ('b', 'c')])
    result = run(plan, kind, parallel=1)
    assert outcomes(result)[d('c')] == SKIPPED
    assert 'c' not in kind.deleted()
    assert len(result.results) == 3


def test_a_soft_edge_orders_but_does_not_skip():
    # b waits for a, and runs even though a failed (a resource a stack
    # created is deleted directly when the stack delete fails); c needs a
    kind = FakeKind(script={'a': [ValueError('stack delete failed')]})
    plan = make_plan(['a', 'b', 'c'], [('a', 'b'), ('a', 'c')])
    plan.soft_edges = {(d('a'), d('b'))}
    result = run(plan, kind, parallel=1)
    assert outcomes(result) == {d('a'): FAILED, d('b'): DONE, d('c'): SKIPPED}
    assert kind.deleted() == ['a', 'b']


def test_keep_steps_are_kept_and_their_dependents_skipped():
    kept = resource.keep(ref('img'), 'public image')
    plan = make_plan([kept, 'proj', 'other'], [(kept.id, 'proj')])
    kind = FakeKind()
    result = run(plan, kind)
    assert result.results[kept.id].outcome == KEPT
    assert result.results[kept.id].error == 'public image'
    assert result.results[d('proj')].outcome == SKIPPED
    assert 'which was kept' in result.results[d('proj')].error
    assert kind.deleted() == ['other']
    # kept is fine, the skipped project is not
    assert not result.ok


def test_break_actions_are_applied_through_the_kind():
    action = Step('cut_reference', ref('a'), {'to': 'b'})
    kind = FakeKind(script={'a': [conflict()]})  # one retry, then fine
    plan = make_plan([action, 'b'], [(action.id, 'b')])
    clock = FakeClock()
    result = run(plan, kind, clock=clock)
    assert result.ok
    assert kind.calls == [
        ('cut_reference', 'a'),
        ('cut_reference', 'a'),
        ('delete', 'b'),
    ]
    assert result.results[action.id].attempts == 2


def test_a_step_of_an_unknown_kind_fails_alone():
    other = resource.delete(ref('x', kind='test.unknown'))
    plan = make_plan([other, 'a', 'b'], [(other.id, 'b')])
    result = run(plan)
    assert result.results[other.id].outcome == FAILED
    assert 'no resource kind test.unknown' in result.results[other.id].error
    assert result.results[d('a')].outcome == DONE
    assert result.results[d('b')].outcome == SKIPPED


# -- events ------------------------------------------------------------------


def test_events_are_emitted_in_order():
    events = []
    kind = FakeKind(script={'a': [conflict('busy')], 'b': [ValueError('x')]})
    plan = make_plan(['a', 'b', 'c'], [('a', 'b'), ('b', 'c')])
    run(plan, kind, parallel=1, events=events)
    assert [(e.kind, e.step.target.id) for e in events] == [
        ('started', 'a'),
        ('retry', 'a'),
        ('done', 'a'),
        ('started', 'b'),
        ('failed', 'b'),
        ('skipped', 'c'),
    ]
    final = events[-2]
    assert final.result.outcome == FAILED and final.message == 'x'
    assert events[1].message == ('attempt 1 failed (busy); retrying in 1s')


def test_every_step_gets_exactly_one_final_event():
    events = []
    kind = FakeKind(script={'n03': [ValueError('x')]})
    ids = [f'n{i:02d}' for i in range(20)]
    edges = [(ids[i], ids[i + 3]) for i in range(17)]
    run(make_plan(ids, edges), kind, events=events)
    finals = [
        e.step.id for e in events if e.kind in (DONE, FAILED, SKIPPED, KEPT)
    ]
    assert sorted(finals) == sorted(d(i) for i in ids)
    started = [e.step.id for e in events if e.kind == 'started']
    assert all(started.count(s) == 1 for s in started)


# -- results -------------------------------------------------------------


def sr(id_, outcome, kind=KIND, action='delete'):
    return StepResult(Step(action, ref(id_, kind)), outcome)


def test_run_result_ok_and_by_outcome():
    ok = RunResult({'a': sr('a', DONE), 'k': sr('k', KEPT)})
    assert ok.ok
    bad = RunResult({'a': sr('a', DONE), 'b': sr('b', SKIPPED)})
    assert not bad.ok
    assert [r.step.target.id for r in bad.by_outcome(SKIPPED)] == ['b']
    assert bad.by_outcome(FAILED) == []


def test_run_result_summary_counts_per_kind():
    result = RunResult(
        {
            '1': sr('a', DONE),
            '2': sr('b', FAILED),
            '3': sr('c', SKIPPED),
            '4': sr('d', KEPT),
            '5': sr('r', DONE, 'network.router'),
            '6': sr('r', DONE, 'network.router', 'clear_router_gateway'),
        }
    )
    # (kind, region, deleted, actions, kept, failed, skipped): the
    # router's gateway cleared is an action, not a second deletion
    assert result.summary() == [
        ('network.router', '', 1, 1, 0, 0, 0),
        (KIND, '', 1, 0, 1, 1, 1),
    ]


def test_merge_keeps_the_last_word_on_each_step():
    first = RunResult({'a': sr('a', FAILED), 'b': sr('b', DONE)})
    second = RunResult({'a': sr('a', DONE), 'c': sr('c', DONE)})
    merged = RunResult.merge([first, second])
    assert outcomes(merged) == {'a': DONE, 'b': DONE, 'c': DONE}
    assert merged.ok
    assert not RunResult.merge([second, first]).ok


# -- classification --------------------------------------------------------


def test_is_transient_and_is_gone():
    assert retry.is_transient(http_error(429))
    assert retry.is_transient(http_error(504))
    assert retry.is_transient(ks_exc.ConnectFailure())
    assert retry.is_transient(ks_exc.http.ServiceUnavailable())
    assert not retry.is_transient(http_error(409))
    assert not retry.is_transient(http_error(404))
    assert not retry.is_transient(ValueError())
    assert retry.is_gone(not_found())
    assert retry.is_gone(ks_exc.NotFound())
    assert not retry.is_gone(http_error(410))


def test_real_clock_measures_monotonic_time():
    clock = retry.Clock()
    first = clock.now()
    assert clock.now() >= first > 0


def test_results_record_when_each_step_started():
    clock = FakeClock(start=50.0)
    kind = FakeKind(script={'a': [conflict()], 'b': [ValueError('no')]})
    plan = make_plan(['a', 'b', 'c'], [('a', 'b'), ('b', 'c')])
    result = run(plan, kind, parallel=1, clock=clock)
    assert result.results[d('a')].started == 50.0
    # a waited 1s before its second attempt: b started after that
    assert result.results[d('b')].started == 51.0
    assert result.results[d('c')].started is None  # skipped, never ran


def test_results_record_how_long_a_step_waited_for_a_slot():
    # one slot, two steps: the one that gets it holds it for 7 s (fake
    # time) once the other is queued; the other's 7 s are queue time,
    # which the benchmark's bound must not count as the cloud's
    clock = FakeClock()
    first = []

    def on_call(what, key):
        if not first:
            first.append(key)
            assert wait_until(lambda: ex.limiter.waiting == 1)
            clock.sleep(7)

    ex = Executor(
        object(), {KIND: FakeKind(on_call=on_call)}, parallel=1, clock=clock
    )
    result = ex.run(make_plan(['a', 'b']))
    assert result.ok
    second = 'b' if first == ['a'] else 'a'
    assert result.results[d(first[0])].queued == 0
    assert result.results[d(first[0])].seconds == 7
    assert result.results[d(second)].queued == 7
    assert result.results[d(second)].seconds == 7


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_a_free_slot_goes_to_the_highest_priority_then_first_come():
    slots = Slots(1)
    served = []

    def want(priority, name):
        with slots.hold(priority):
            served.append(name)

    with slots.hold(0):
        threads = []
        for priority, name in ((1, 'low'), (5, 'high'), (1, 'low-later')):
            threads.append(
                threading.Thread(target=want, args=(priority, name))
            )
            threads[-1].start()
            assert wait_until(lambda: slots.waiting == len(threads))
    for t in threads:
        t.join(10)
    assert served == ['high', 'low', 'low-later']


def test_slots_grown_go_to_the_waiters_and_shrunk_take_nothing_back():
    slots = Slots(1)
    counts, entered, leave = [], threading.Semaphore(0), threading.Event()

    def want():
        with slots.hold(0) as holders:
            counts.append(holders)
            entered.release()
            assert leave.wait(10)

    threads = [threading.Thread(target=want) for _ in range(3)]
    for t in threads:
        t.start()
    assert entered.acquire(timeout=10)
    assert wait_until(lambda: slots.waiting == 2)
    slots.resize(3)  # both waiters get a slot at once
    assert entered.acquire(timeout=10) and entered.acquire(timeout=10)
    assert (slots.held, slots.waiting, sorted(counts)) == (3, 0, [1, 2, 3])
    slots.resize(1)  # the three holding finish; then one at a time
    assert slots.held == 3
    leave.set()
    for t in threads:
        t.join(10)
    assert slots.held == 0
    with slots.hold(0) as holders:
        assert holders == 1


def test_ready_steps_start_with_the_longest_chain():
    # one slot: y heads a chain of three, x stands alone and comes first
    # in the plan's own order; y goes first
    kind = FakeKind()
    plan = make_plan(['x', 'y', 'y2', 'y3'], [('y', 'y2'), ('y2', 'y3')])
    assert run(plan, kind, parallel=1).ok
    assert kind.deleted()[0] == 'y'


def test_priorities_weigh_asynchronous_deletes():
    plan = make_plan(['a', 'b'], [('a', 'b')])
    assert executor.priorities(plan, {KIND: FakeKind(synchronous=False)}) == {
        d('a'): 2 * executor.ASYNC_WEIGHT,
        d('b'): executor.ASYNC_WEIGHT,
    }
    assert executor.priorities(plan, {KIND: FakeKind(synchronous=True)}) == {
        d('a'): 2,
        d('b'): 1,
    }


class ListedKind(FakeKind):
    """Lists the statuses of all its resources at once: ``listings`` are
    the successive answers (the last one repeats)."""

    def __init__(self, listings, **kw):
        super().__init__(synchronous=False, **kw)
        self.listings = list(listings)
        self.listed = []

    def list_statuses(self, conn, project_id):
        with self._lock:
            self.listed.append(project_id)
            return dict(
                self.listings[0]
                if len(self.listings) == 1
                else self.listings.pop(0)
            )

    def status(self, conn, ref_):
        raise AssertionError('polled one by one although it lists')


def test_waiting_deletes_of_a_kind_share_one_listing():
    # a's listing is under way when b and c are deleted: b lists again
    # once it is done, and that listing answers c (and a) too
    deleted = {'b': threading.Event(), 'c': threading.Event()}

    class Kind(ListedKind):
        def list_statuses(self, conn, project_id):
            self.listed.append(project_id)
            if len(self.listed) == 1:
                assert all(e.wait(10) for e in deleted.values())
                return dict.fromkeys('abc', 'deleting')
            return {}

        def delete(self, conn, ref_):
            super().delete(conn, ref_)
            if ref_.id in deleted:
                deleted[ref_.id].set()

    kind = Kind([])
    assert run(make_plan(['a', 'b', 'c']), kind, parallel=3).ok
    # without sharing: at least one listing per step and poll, 4 or more
    assert len(kind.listed) <= 3
    assert set(kind.listed) == {'p1'}


def test_listed_polls_back_off_to_a_shorter_cap():
    kind = ListedKind([{'a': 'deleting'}] * 6 + [{}])
    clock = FakeClock()
    assert run(make_plan(['a']), kind, clock=clock).ok
    assert clock.sleeps == [0.5, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert len(kind.listed) == 7  # alone, each poll lists


def test_an_error_status_in_the_listing_fails_the_step():
    kind = ListedKind([{'a': 'error_deleting'}])
    result = run(make_plan(['a']), kind)
    assert outcomes(result) == {d('a'): FAILED}
    assert 'status is error_deleting' in result.results[d('a')].error


def test_a_listing_that_fails_for_a_while_is_retried():
    kind = ListedKind([{}])
    failures = [http_error(503)]

    def list_statuses(conn, project_id):
        if failures:
            raise failures.pop()
        return {}

    kind.list_statuses = list_statuses
    assert run(make_plan(['a']), kind).ok


def test_a_listing_made_before_the_delete_does_not_answer_for_it():
    # b's delete ends after a's first listing, which shows b as it was
    # before its delete (in error): b must wait for a newer listing
    listed, b_deleted = threading.Event(), threading.Event()
    order = []

    class Kind(ListedKind):
        def list_statuses(self, conn, project_id):
            order.append('list')
            listed.set()
            return (
                {}
                if b_deleted.is_set()
                else {'a': 'deleting', 'b': 'error_deleting'}
            )

        def delete(self, conn, ref_):
            if ref_.id == 'b':
                assert listed.wait(10)
                b_deleted.set()
            order.append(f'delete {ref_.id}')

    class Clock(FakeClock):
        def sleep(self, seconds):  # a polls again only after b's delete
            assert b_deleted.wait(10)
            super().sleep(seconds)

    result = run(make_plan(['a', 'b']), Kind([]), parallel=2, clock=Clock())
    assert outcomes(result) == {d('a'): DONE, d('b'): DONE}
    assert order[:4] == ['delete a', 'list', 'delete b', 'list']
    assert set(order[4:]) <= {'list'}


def test_a_step_that_becomes_ready_late_overtakes_queued_ones(monkeypatch):
    # one thread: x heads a chain and goes first; its successor, ready
    # only then, must get the thread before the fillers that were ready
    # from the start (in the pool's own queue it would come after them)
    monkeypatch.setattr(executor, 'THREADS_PER_SLOT', 1)
    fillers = [f'f{i:02d}' for i in range(12)]
    kind = FakeKind()
    plan = make_plan(
        ['x', 'late', 'late2', 'late3', *fillers],
        [('x', 'late'), ('late', 'late2'), ('late2', 'late3')],
    )
    assert run(plan, kind, parallel=1).ok
    # (late3, of no more weight than a filler, takes its turn by plan
    # order)
    assert kind.deleted()[:3] == ['x', 'late', 'late2']


# -- stopping (SIGINT, SIGTERM) ----------------------------------------------


def test_a_stopped_run_starts_nothing_more_and_says_so():
    ex_box = {}

    def on_call(what, key):
        if what == 'delete' and key == 'b':
            ex_box['ex'].stop()

    kind = FakeKind(on_call=on_call)
    ex = Executor(object(), {KIND: kind}, parallel=1, clock=FakeClock())
    ex_box['ex'] = ex
    result = ex.run(chain_plan(['a', 'b', 'c', 'd']))
    by_id = {r.step.target.id: r for r in result.results.values()}
    # a and b were done (b was in flight when the stop came)
    assert (by_id['a'].outcome, by_id['b'].outcome) == (DONE, DONE)
    assert by_id['c'].outcome == SKIPPED
    assert by_id['c'].error == executor.INTERRUPTED
    assert by_id['d'].outcome == SKIPPED
    assert [c for c in kind.calls if c[0] == 'delete'] == [
        ('delete', 'a'),
        ('delete', 'b'),
    ]


def test_a_stop_ends_a_retry_and_a_wait_at_once():
    clock = FakeClock()
    busy = sdk_error(sdk_exc.ConflictException, 409, 'busy')
    box = {}

    def on_call(what, key):
        box['ex'].stop()  # the signal comes while the call is in flight

    kind = FakeKind(
        synchronous=False,
        on_call=on_call,
        script={'a': [busy, busy, None]},
        statuses={'b': ['deleting'] * 50},
    )
    for id_, expected in [
        ('a', 'interrupted before it could be retried'),
        ('b', 'interrupted while the delete was under way'),
    ]:
        box['ex'] = Executor(object(), {KIND: kind}, parallel=2, clock=clock)
        result = box['ex'].run_step(
            make_plan([id_]).steps[f'delete:{KIND}:{id_}']
        )
        assert result.outcome == FAILED
        assert result.error.startswith(expected), result.error
    assert clock.sleeps == []  # no backoff, no poll interval waited


def test_a_step_waiting_for_a_slot_when_stopped_makes_no_call():
    kind = FakeKind()
    ex = Executor(object(), {KIND: kind}, parallel=1, clock=FakeClock())
    ex.stop()
    result = ex.run_step(make_plan(['a']).steps[f'delete:{KIND}:a'])
    assert (result.outcome, result.error) == (
        FAILED,
        'interrupted before its call',
    )
    assert kind.calls == []
