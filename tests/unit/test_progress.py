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

import io

from osc_cascade.engine import executor
from osc_cascade.engine.executor import Event, StepResult
from osc_cascade.engine.resource import Step
from osc_cascade.v1.progress import Progress
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
