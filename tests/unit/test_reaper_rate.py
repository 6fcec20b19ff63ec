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

"""The executor's rate limit: at most ``rate_limit`` calls per second per
service (clouds.yaml's, or the reaper's), polls included, counted on a
fake clock."""

from openstack.config import cloud_region
import pytest

from osc_cascade.engine import resource
from osc_cascade.engine.executor import Executor
from osc_cascade.engine.limiter import rate_limit
from osc_cascade.engine.planner import Plan
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.kinds import KIND, FakeKind, make_plan, ref


class Conn:
    """What the executor reads of a connection: its config."""

    def __init__(self, limits=None):
        config = {} if limits is None else {'rate_limit': limits}
        self.config = cloud_region.CloudRegion(config=config)


class Timed(FakeKind):
    """Records the fake clock's time of every call, status polls too."""

    def __init__(self, clock, **kwargs):
        super().__init__(**kwargs)
        self.clock = clock
        self.times = []

    def _do(self, what, key):
        self.times.append(self.clock.now())
        super()._do(what, key)

    def status(self, conn, ref_):
        self.times.append(self.clock.now())
        return super().status(conn, ref_)


def most_in_a_second(times):
    return max(sum(1 for t in times if s <= t < s + 1) for s in times)


def run(conn, kind, plan, parallel=1, clock=None):
    return Executor(
        conn, {kind.name: kind}, parallel=parallel, clock=clock
    ).run(plan)


def test_calls_are_spaced_to_the_services_rate():
    clock = FakeClock()
    kind = Timed(clock)
    result = run(
        Conn({'test': 2.0}),
        kind,
        make_plan([f'r{i}' for i in range(10)]),
        clock=clock,
    )
    assert result.ok
    assert len(kind.times) == 10
    assert most_in_a_second(kind.times) == 2
    assert kind.times[-1] - kind.times[0] == pytest.approx(4.5)


def test_parallel_calls_share_the_services_rate():
    clock = FakeClock()
    kind = Timed(clock)
    start = clock.now()
    run(
        Conn({'test': 4.0}),
        kind,
        make_plan([f'r{i}' for i in range(12)]),
        parallel=4,
        clock=clock,
    )
    # the k-th call starts no sooner than k/4 s after the first
    for k, at in enumerate(sorted(kind.times)):
        assert at >= start + k / 4


def test_polls_count_as_calls():
    clock = FakeClock()
    gone_later = {f'r{i}': ['deleting', 'deleting'] for i in range(3)}
    kind = Timed(clock, synchronous=False, statuses=gone_later)
    steps = {}
    for i in range(3):
        # no project: polled one by one, not through a shared listing
        step = resource.delete(ref(f'r{i}', project_id=''))
        steps[step.id] = step
    result = run(
        Conn({'test': 1.0}),
        kind,
        Plan([{'id': 'p', 'name': 'p'}], steps, set()),
        parallel=3,
        clock=clock,
    )
    assert result.ok
    assert len(kind.times) == 3 * 4  # a delete, three polls
    assert most_in_a_second(kind.times) == 1


def test_one_number_limits_every_service():
    clock = FakeClock()
    kind = Timed(clock)
    run(Conn(5.0), kind, make_plan(['a', 'b', 'c']), clock=clock)
    assert kind.times[-1] - kind.times[0] == pytest.approx(0.4)
    assert rate_limit(Conn(5.0), 'compute') == 5.0


def test_no_limit_without_one_for_the_service():
    for conn in (Conn({'compute': 1.0}), Conn(), object(), None):
        clock = FakeClock()
        kind = Timed(clock)
        run(conn, kind, make_plan(['a', 'b', 'c']), clock=clock)
        assert clock.sleeps == []
        assert kind.deleted() == ['a', 'b', 'c']


def test_a_service_types_alias_has_its_limit():
    assert rate_limit(Conn({'volumev3': 2.0}), 'block-storage') == 2.0
    assert rate_limit(Conn({'compute': 2.0}), 'network') is None


def test_a_step_of_an_unknown_kind_has_no_limit():
    clock = FakeClock()
    kind = Timed(clock)
    plan = make_plan(['a'], kind='test.other')
    result = Executor(Conn(1.0), {KIND: kind}, parallel=1, clock=clock).run(
        plan
    )
    assert not result.ok
    assert clock.sleeps == []
