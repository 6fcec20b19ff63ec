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

"""`compute service delete --purge-allocations` stopped by SIGINT or
SIGTERM: what is in flight finishes, the service it disabled and did not
delete is enabled again (as after a refusal), exit 130/143, and a re-run
finishes the job."""

import os
import signal

import pytest

from osc_cascade.engine import retry
from osc_cascade.engine.errors import Interrupted
from osc_cascade.engine.executor import DONE
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds import placement
from osc_cascade.workflows.service_purge import DISABLED_REASON, ServicePurge
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakePlacementCloud
from tests.unit.scenarios import evacuation


@pytest.fixture
def cloud():
    with FakePlacementCloud() as c:
        yield c


def purge_of(cloud, events=None, notes=None):
    return ServicePurge(
        cloud.connection(),
        clock=FakeClock(),
        retry=RetryPolicy(base_delay=0, max_delay=0),
        on_event=events,
        notify=notes,
    )


def enabled_evacuation(cloud):
    s = evacuation(cloud)
    s.a.update(status='enabled', disabled_reason=None)
    return s


def statuses(cloud):
    return [
        r.json()['status']
        for r in cloud.mocker.request_history
        if r.method == 'PUT' and '/os-services/' in r.url
    ]


def test_a_signal_after_the_allocations_enables_the_service_again(cloud):
    s = enabled_evacuation(cloud)
    box = {}

    def on_event(event):
        if event.kind == DONE and event.step.target.kind == (
            placement.Allocation.name
        ):
            box['purge'].interrupt(signal.SIGTERM)

    p = box['purge'] = purge_of(cloud, on_event)
    plan = p.plan(p.resolve(['compute-a']))

    with pytest.raises(Interrupted) as err:
        p.execute(plan)

    assert err.value.signum == signal.SIGTERM
    message = str(err.value)
    assert message.startswith('Interrupted (SIGTERM): 1 step(s) done; ')
    assert (
        f'compute service compute-a ({s.a["id"]}) was enabled again: the '
        f'purge did not delete it.'
    ) in message
    assert message.endswith(
        'Run the command again to finish: what is done stays done.'
    )
    # the allocation went, the service and its provider did not
    assert not cloud.allocations_of(s.vm['id']).get(s.rp_a)
    assert cloud.exists('services', s.a['id'])
    assert (s.a['status'], s.a['disabled_reason']) == ('enabled', None)
    assert statuses(cloud) == ['disabled', 'enabled']
    outcomes = {
        r.step.target.kind: r.outcome for r in p.result.results.values()
    }
    assert outcomes[placement.Allocation.name] == DONE
    assert outcomes[placement.ComputeService.name] != DONE

    # a re-run finishes the job
    again = purge_of(cloud)
    result = again.execute(again.plan(again.resolve(['compute-a'])))
    assert result.ok
    assert not cloud.exists('services', s.a['id'])


def test_a_signal_while_the_plan_is_read_again_removes_nothing(cloud):
    s = enabled_evacuation(cloud)
    box = {}

    def on_note(text):
        if text.startswith('disabled compute service'):
            box['purge'].interrupt(signal.SIGINT)

    p = box['purge'] = purge_of(cloud, notes=on_note)
    plan = p.plan(p.resolve(['compute-a']))

    with pytest.raises(Interrupted) as err:
        p.execute(plan)

    assert str(err.value).startswith(
        'Interrupted (SIGINT): nothing was removed.'
    )
    assert 'was enabled again' in str(err.value)
    assert p.result is None  # nothing ran
    assert cloud.allocations_of(s.vm['id']).get(s.rp_a)
    assert (s.a['status'], s.a['disabled_reason']) == ('enabled', None)


def test_a_signal_on_a_disabled_service_leaves_it_disabled(cloud):
    s = evacuation(cloud)  # disabled by someone else already
    reason = s.a['disabled_reason']
    box = {}

    def on_event(event):
        if event.kind == DONE:
            box['purge'].interrupt(signal.SIGINT)

    p = box['purge'] = purge_of(cloud, on_event)
    with pytest.raises(Interrupted, match=r'^Interrupted \(SIGINT\): 1 step'):
        p.execute(p.plan(p.resolve(['compute-a'])))
    assert statuses(cloud) == []
    assert (s.a['status'], s.a['disabled_reason']) == ('disabled', reason)
    assert DISABLED_REASON != reason


@pytest.mark.parametrize(
    ('signum', 'code'), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_the_command_exits_with_the_signal_and_restores_the_service(
    cloud, osc, monkeypatch, signum, code, shell_signal_handlers
):
    monkeypatch.setattr(retry.Clock, 'sleep', lambda self, seconds: None)
    s = enabled_evacuation(cloud)
    real = placement.Allocation.delete

    def delete_then_signal(self, conn, ref):
        real(self, conn, ref)
        os.kill(os.getpid(), signum)  # as if Ctrl-C (or kill) came now

    monkeypatch.setattr(placement.Allocation, 'delete', delete_then_signal)
    with pytest.raises(SystemExit) as exit_:
        osc(
            'compute',
            'service',
            'delete',
            '--purge-allocations',
            '--yes',
            'compute-a',
        )
    assert exit_.value.code == code
    assert (
        signal.getsignal(signal.SIGINT) is shell_signal_handlers[signal.SIGINT]
    )
    assert cloud.exists('services', s.a['id'])
    assert (s.a['status'], s.a['disabled_reason']) == ('enabled', None)
