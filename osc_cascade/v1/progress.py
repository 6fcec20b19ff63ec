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

"""Progress on stderr: a live bar on a terminal, plain log lines otherwise,
or one JSON object per event (``--progress json``) for machines."""

from __future__ import annotations

from collections.abc import Iterable
import json
import logging
import re
import sys
from typing import Any, TextIO

from osc_cascade.engine import events
from osc_cascade.engine.events import DRAIN
from osc_cascade.v1.output import step_text, verb

LOG = logging.getLogger(__name__)

HUMAN = 'human'
JSON = 'json'
#: the choices of ``--progress``
FORMATS = (HUMAN, JSON)

_NOT_IN_CATALOG = re.compile(
    r'^service (?P<service>\S+) is not in the catalog: skipped .*$'
)


def fold_notes(notes: Iterable[str]) -> list[str]:
    """The notes to print: every "service X is not in the catalog" note
    folded into one line, where the first of them was; the others as
    they are, each once."""
    folded: list[str] = []
    missing: list[str] = []
    for note in notes:
        match = _NOT_IN_CATALOG.match(note)
        if match:
            if not missing:
                folded.append('')  # its place
            missing.append(match['service'])
        elif note not in folded:
            folded.append(note)
    if missing:
        folded[folded.index('')] = (
            f'not in the catalog: {", ".join(sorted(set(missing)))} '
            '(their kinds are skipped)'
        )
    return folded


class Progress:
    """Receives executor events. The total is what the commands add
    (``add_total``) and grows with each run of an executor that they did
    not count (a cascade's verification rounds): it never falls behind
    what is finished."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        fmt: str | None = None,
        rounds: str = '',
    ):
        self.stream = stream or sys.stderr
        self.json = fmt == JSON
        self.tty = (
            False
            if self.json
            else (self.stream.isatty() if tty is None else tty)
        )
        #: what the commands counted
        self.added = 0
        #: per executor run seen, its size
        self.runs: dict[int, int] = {}
        #: final events from no run (a workflow's "kept, not in the run")
        self.outside = 0
        #: rounds announced so far (runs, and verification rounds that
        #: found nothing to run); ``announced``: the next run's round was
        #: announced by its workflow
        self.round = 0
        self.verifications = 0
        self.announced = False
        self.finished = 0
        self.failed = 0
        self.running: dict[str, str] = {}
        #: what a run after the first is called in a line ("verification
        #: round"); empty: no line
        self.rounds = rounds
        #: notes printed with the result (``add_notes``, ``flush_notes``)
        self.notes: list[str] = []
        #: set once writing failed: the run goes on without progress
        self.silenced = False

    @property
    def total(self) -> int:
        return max(self.added, sum(self.runs.values()) + self.outside)

    def add_total(self, steps: int) -> None:
        self.added += steps

    def __call__(self, event: events.Event) -> None:
        if event.kind in _WORKFLOW_EVENTS:
            _WORKFLOW_EVENTS[event.kind](self, event)
            return
        step = event.step
        if event.run and event.run not in self.runs:
            self._new_run(event)
        if event.kind == 'started':
            self.running[step.id] = step_text(step)
            if self.json:
                self._json(event)
        elif event.kind == 'retry':
            if self.json:
                self._json(event)
            elif not self.tty:
                self._line(f'retry: {step_text(step)}: {event.message}')
        else:
            self.running.pop(step.id, None)
            self.finished += 1
            if not event.run:
                self.outside += 1
            if event.kind in (events.FAILED, events.STUCK):
                self.failed += 1
            if self.json:
                self._json(event)
            elif not self.tty or event.kind in (events.FAILED, events.STUCK):
                self._line(self._final_line(event))
        if self.tty:
            self._bar()

    def _new_run(self, event: events.Event) -> None:
        self.runs[event.run] = event.planned
        if self.announced:  # its workflow said so already (``_round``)
            self.announced = False
            return
        self.round += 1
        if self.json:
            self._write_json(
                {
                    'event': 'round',
                    'round': self.round,
                    'steps': event.planned,
                    'total': self.total,
                }
            )
        elif self.rounds and self.round > 1 and not self.tty:
            self._line(
                f'{self.rounds} {self.round - 1}: {event.planned} more step(s)'
            )

    def _round(self, event: events.Event) -> None:
        """A verification round looked again: what it found (``planned``)
        runs next, in the round announced here; nothing found, it says
        so."""
        self.round += 1
        self.verifications += 1
        self.announced = event.planned > 0
        if self.json:
            self._write_json(
                {
                    'event': events.ROUND,
                    'round': self.round,
                    'verification': self.verifications,
                    'steps': event.planned,
                    'total': self.total + event.planned,
                }
            )
        elif not self.tty:
            found = (
                f'{event.planned} more step(s)'
                if event.planned
                else 'nothing left'
            )
            self._line(
                f'{self.rounds or "verification round"} '
                f'{self.verifications}: {found}'
            )

    def _phase(self, event: events.Event) -> None:
        """A workflow's next part begins: its first run (``planned``
        steps) is announced under its own name."""
        self.round += 1
        self.announced = event.planned > 0
        if self.json:
            self._write_json(
                {
                    'event': events.PHASE,
                    'phase': event.message,
                    'round': self.round,
                    'steps': event.planned,
                    'total': self.total + event.planned,
                }
            )
        elif not self.tty:
            self._line(f'{event.message}: {event.planned} step(s)')

    def _milestone(self, event: events.Event) -> None:
        """A project drained, or deleted (or not): a line of its own,
        outside the count of steps."""
        step, result = event.step, event.result
        outcome = result.outcome if result else events.DONE
        # the drain is timed by its workflow; a project's delete is OSC's
        seconds = result.seconds if result and event.kind == DRAIN else None
        if self.json:
            record: dict[str, Any] = {
                'event': event.kind,
                'action': verb(step),
                'kind': step.target.kind,
                'region': step.target.region,
                'id': step.target.id,
                'name': step.target.name,
                'outcome': outcome,
            }
            if seconds is not None:
                record['seconds'] = round(seconds, 3)
            if event.message:
                record['message'] = event.message
            self._write_json(record)
            return
        if self.tty and outcome != events.FAILED:
            return  # the bar goes on; the summary says it
        text = f'{event.kind}: {verb(step)} {step.target.label()}'
        if seconds is not None and outcome == events.DONE:
            text += f' ({seconds:.1f}s)'
        self._line(text + (f': {event.message}' if event.message else ''))

    def _final_line(self, event: events.Event) -> str:
        result = event.result
        text = f'{event.kind}: {step_text(event.step)}'
        if event.kind == events.STUCK and event.step.is_delete:
            # found at its delete: "stuck: <label> is '<state>' since ..."
            text = f'{event.kind}: {event.step.target.label()}'
            return f'[{self.finished}/{self.total}] {text} {event.message}'
        if result is not None and result.outcome == events.DONE:
            text += f' ({result.seconds:.1f}s)'
        # a keep's description already ends with its reason, the message
        if event.message and not text.endswith(event.message):
            text += f': {event.message}'
        return f'[{self.finished}/{self.total}] {text}'

    def _json(self, event: events.Event) -> None:
        step, result = event.step, event.result
        final = event.kind not in ('started', 'retry')
        record: dict[str, Any] = {
            'event': event.kind,
            'step': step.id,
            'action': verb(step),
            'kind': step.target.kind,
            'region': step.target.region,
            'id': step.target.id,
            'name': step.target.name,
            'round': self.round if event.run else None,
        }
        if event.kind == 'retry':
            record['event'] = 'retried'  # what happened, as the others say
            record['attempt'] = event.attempt
        if final:
            record['outcome'] = event.kind
            record['attempt'] = result.attempts if result else 0
            record['seconds'] = round(result.seconds, 3) if result else 0.0
            record['done'] = self.finished
            record['total'] = self.total
        if event.message:
            record['message'] = event.message
        self._write_json(record)

    def _write_json(self, record: dict[str, Any]) -> None:
        self._write(json.dumps(record, sort_keys=True) + '\n')

    def _line(self, text: str) -> None:
        self._write(('\r\033[K' if self.tty else '') + text + '\n')

    def _write(self, text: str) -> None:
        """Progress is a courtesy: a closed or broken stderr (a pipe to a
        `head` that exited) must not crash the run; it goes silent."""
        if self.silenced:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # ValueError: a closed file
            self.silenced = True

    def _bar(self) -> None:
        width = 30
        total = self.total
        done = int(width * self.finished / total) if total else 0
        current = next(iter(self.running.values()), '')
        text = (
            f'[{"#" * done}{"." * (width - done)}] '
            f'{self.finished}/{total}'
            + (f', {self.failed} failed' if self.failed else '')
            + (f' | {current}' if current else '')
        )
        self._write('\r\033[K' + text[:150])

    def close(self) -> None:
        if self.tty:
            self._write('\r\033[K')

    def note(self, text: str) -> None:
        """A line now (what a workflow says while it runs)."""
        if self.json:
            self._write_json(
                {'event': 'note', 'message': text.removeprefix('note: ')}
            )
        else:
            self._line(text)

    def add_notes(self, notes: Iterable[str]) -> None:
        """Notes to print with the result (``flush_notes``), folded, once;
        a command that fails before its result prints none (``--debug``
        logs them)."""
        for note in notes:
            LOG.debug('note: %s', note)
            self.notes.append(note)

    def flush_notes(self) -> None:
        notes, self.notes = self.notes, []
        for note in fold_notes(notes):
            self.note(f'note: {note}')


#: how a workflow's own events are shown
_WORKFLOW_EVENTS = {
    events.ROUND: Progress._round,
    events.PHASE: Progress._phase,
    events.DRAIN: Progress._milestone,
    events.PROJECT: Progress._milestone,
}
