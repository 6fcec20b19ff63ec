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

"""Progress on stderr: log lines without a terminal, a bar with one."""

import dataclasses
import io
import json

from osc_cascade.engine import executor
from osc_cascade.engine.executor import Event, StepResult
from osc_cascade.engine.resource import Step
from osc_cascade.v1.progress import Progress, fold_notes
from tests.unit.fakes.kinds import ref


class Terminal(io.StringIO):
    def isatty(self):
        return True


def step(id_, name=''):
    return Step('delete', ref(id_, name=name or id_))


def final(kind, s, seconds=0.0, error=''):
    return Event(kind, s, error, StepResult(s, kind, seconds, 1, error))


def test_log_lines_without_a_terminal():
    out = io.StringIO()
    progress = Progress(out)
    assert progress.tty is False
    progress.add_total(2)
    progress.add_total(1)
    a, b = step('a'), step('b')
    progress(Event('started', a))
    assert out.getvalue() == ''
    assert progress.running == {a.id: a.describe()}
    progress(Event('retry', a, 'attempt 1 failed (busy); retrying in 1s'))
    progress(final(executor.DONE, a, 2.25))
    progress(final(executor.FAILED, b, 1.0, 'boom'))
    progress(Event(executor.SKIPPED, step('c'), 'after b, which was failed'))
    assert out.getvalue().splitlines() == [
        'retry: delete test.thing a (a): attempt 1 failed (busy); '
        'retrying in 1s',
        '[1/3] done: delete test.thing a (a) (2.2s)',
        '[2/3] failed: delete test.thing b (b): boom',
        '[3/3] skipped: delete test.thing c (c): after b, which was failed',
    ]
    assert progress.running == {}
    assert (progress.finished, progress.failed) == (3, 1)


def test_no_escape_codes_without_a_terminal():
    out = io.StringIO()
    progress = Progress(out)
    progress.add_total(1)
    progress(Event('started', step('a')))
    progress(final(executor.DONE, step('a')))
    progress.note('note: something')
    progress.close()
    assert '\033' not in out.getvalue() and '\r' not in out.getvalue()
    assert out.getvalue().endswith('note: something\n')


def test_a_bar_on_a_terminal():
    out = Terminal()
    progress = Progress(out)
    assert progress.tty is True
    progress.add_total(4)
    a = step('a', 'alpha')
    progress(Event('started', a))
    assert out.getvalue().endswith(
        '\r\033[K[' + '.' * 30 + '] 0/4 | delete test.thing alpha (a)'
    )
    progress(final(executor.DONE, a))
    # done steps move the bar, they print no line
    assert out.getvalue().endswith('\r\033[K[' + '#' * 7 + '.' * 23 + '] 1/4')
    assert '\n' not in out.getvalue()
    progress(Event('retry', step('b'), 'retrying'))
    assert 'retry:' not in out.getvalue()


def test_failures_are_printed_on_a_terminal_too():
    out = Terminal()
    progress = Progress(out)
    progress.add_total(2)
    progress(final(executor.FAILED, step('a'), error='409 in use'))
    lines = out.getvalue().split('\n')
    assert lines[0] == (
        '\r\033[K[1/2] failed: delete test.thing a (a): 409 in use'
    )
    assert lines[1].endswith('] 1/2, 1 failed')
    progress.close()
    assert out.getvalue().endswith('\r\033[K')


def test_the_bar_stays_short_and_survives_an_unknown_total():
    out = Terminal()
    progress = Progress(out, tty=True)
    progress(Event('started', step('a', 'x' * 500)))
    last = out.getvalue().split('\r\033[K')[-1]
    assert len(last) == 150
    assert last.startswith('[' + '.' * 30 + '] 0/0')


def test_tty_can_be_forced():
    assert Progress(Terminal(), tty=False).tty is False
    assert Progress(io.StringIO(), tty=True).tty is True


def test_a_broken_stderr_silences_progress_and_crashes_nothing():
    class BrokenPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, 'Broken pipe')

    progress = Progress(BrokenPipe(), tty=False)
    progress.add_total(2)
    a = step('a')
    progress(Event('started', a))
    progress(Event('done', a, result=StepResult(a, 'done', 1.0)))
    progress.note('note: still fine')
    progress.close()
    assert progress.silenced
    assert progress.finished == 1


def run_event(kind, s, run, planned, **kw):
    event = final(kind, s, **kw) if kind != 'started' else Event(kind, s)
    event.run, event.planned = run, planned
    return event


def test_the_total_grows_with_each_round_and_never_falls_behind():
    out = io.StringIO()
    progress = Progress(out, rounds='verification round')
    progress.add_total(2)
    a, b, c = step('a'), step('b'), step('c')
    progress(run_event(executor.DONE, a, 1, 2))
    progress(run_event(executor.DONE, b, 1, 2))
    # a second round: one more step that the command did not count
    progress(run_event('started', c, 2, 1))
    progress(run_event(executor.DONE, c, 2, 1))
    assert out.getvalue().splitlines() == [
        '[1/2] done: delete test.thing a (a) (0.0s)',
        '[2/2] done: delete test.thing b (b) (0.0s)',
        'verification round 1: 1 more step(s)',
        '[3/3] done: delete test.thing c (c) (0.0s)',
    ]


def test_a_phase_names_its_run_not_a_verification_round():
    """The domain cascade's users run after the projects' rounds: their
    run is announced under its own name, in lines and in JSON."""
    from osc_cascade.engine.events import PHASE, ROUND

    out = io.StringIO()
    progress = Progress(out, rounds='verification round')
    progress.add_total(1)
    a, k = step('a'), step('k')
    progress(run_event(executor.DONE, a, 1, 1))
    progress(Event(ROUND, None, planned=0))
    progress(Event(PHASE, None, "the users' keypairs", planned=1))
    progress(run_event(executor.DONE, k, 2, 1))
    assert out.getvalue().splitlines() == [
        '[1/1] done: delete test.thing a (a) (0.0s)',
        'verification round 1: nothing left',
        "the users' keypairs: 1 step(s)",
        '[2/2] done: delete test.thing k (k) (0.0s)',
    ]
    out = io.StringIO()
    progress = Progress(out, fmt='json', rounds='verification round')
    progress(run_event(executor.DONE, a, 1, 1))
    progress(Event(PHASE, None, 'users', planned=1))
    progress(run_event(executor.DONE, k, 2, 1))
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[2] == {
        'event': 'phase',
        'phase': 'users',
        'round': 2,
        'steps': 1,
        'total': 2,
    }
    assert [e['event'] for e in events].count('round') == 1
    assert events[-1]['round'] == 2


def test_a_workflows_own_final_event_counts_too():
    progress = Progress(io.StringIO())
    progress.add_total(1)
    progress(run_event(executor.KEPT, step('a'), 0, 0))
    progress(run_event(executor.DONE, step('b'), 1, 1))
    assert (progress.finished, progress.total) == (2, 2)


def test_a_kept_step_says_its_reason_once():
    out = io.StringIO()
    progress = Progress(out)
    s = Step('keep', ref('a'), {'reason': 'not the project\'s'})
    progress(final(executor.KEPT, s, error="not the project's"))
    assert out.getvalue().splitlines() == [
        "[1/1] kept: keep test.thing a (a): not the project's"
    ]


def test_progress_says_remove_for_an_allocation_as_the_plan_does():
    out = io.StringIO()
    progress = Progress(out)
    s = Step('delete', ref('c1', kind='placement.allocation'))
    progress(final(executor.DONE, s))
    assert 'done: remove placement.allocation c1' in out.getvalue()


def test_json_progress_is_one_object_per_event():
    out = Terminal()  # no bar and no escape codes, even on a terminal
    progress = Progress(out, fmt='json')
    assert progress.tty is False
    progress.add_total(1)
    s = Step(
        'delete',
        ref('v1', kind='block_storage.volume', name='data'),
    )
    s = Step('delete', dataclasses.replace(s.target, region='RegionTwo'))
    progress(run_event('started', s, 7, 1))
    retry = Event('retry', s, 'attempt 1 failed (409); retrying in 1s')
    retry.run, retry.planned, retry.attempt = 7, 1, 1
    progress(retry)
    progress(run_event(executor.DONE, s, 7, 1, seconds=2.5))
    progress.note('note: something')
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r['event'] for r in records] == [
        'round',
        'started',
        'retried',
        'done',
        'note',
    ]
    assert records[0] == {'event': 'round', 'round': 1, 'steps': 1, 'total': 1}
    done = records[3]
    assert done == {
        'event': 'done',
        'step': 'delete:block_storage.volume:v1@RegionTwo',
        'action': 'delete',
        'kind': 'block_storage.volume',
        'region': 'RegionTwo',
        'id': 'v1',
        'name': 'data',
        'round': 1,
        'outcome': 'done',
        'attempt': 1,
        'seconds': 2.5,
        'done': 1,
        'total': 1,
    }
    assert records[2]['attempt'] == 1
    assert records[4] == {'event': 'note', 'message': 'something'}


def test_notes_not_in_the_catalog_are_folded_into_one_line():
    notes = [
        'service dns is not in the catalog: skipped dns.zone',
        'not listed: x.y: why',
        'service alarming is not in the catalog: skipped alarming.alarm',
        'not listed: x.y: why',
    ]
    assert fold_notes(notes) == [
        'not in the catalog: alarming, dns (their kinds are skipped)',
        'not listed: x.y: why',
    ]
    assert fold_notes(['a']) == ['a']


def test_notes_wait_for_the_result_and_are_printed_once():
    out = io.StringIO()
    progress = Progress(out)
    progress.add_notes(['service dns is not in the catalog: skipped dns.zone'])
    assert out.getvalue() == ''
    progress.flush_notes()
    progress.flush_notes()
    assert out.getvalue() == (
        'note: not in the catalog: dns (their kinds are skipped)\n'
    )
