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

"""Progress on stderr: a live bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

from osc_cascade.engine import executor


class Progress:
    """Receives executor events; knows the total from the plan sizes."""

    def __init__(
        self, stream: TextIO | None = None, *, tty: bool | None = None
    ):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = 0
        self.finished = 0
        self.failed = 0
        self.running: dict[str, str] = {}
        #: set once writing failed: the run goes on without progress
        self.silenced = False

    def add_total(self, steps: int) -> None:
        self.total += steps

    def __call__(self, event: executor.Event) -> None:
        step = event.step
        if event.kind == 'started':
            self.running[step.id] = step.describe()
        elif event.kind == 'retry':
            if not self.tty:
                self._line(f'retry: {step.describe()}: {event.message}')
        else:
            self.running.pop(step.id, None)
            self.finished += 1
            if event.kind == executor.FAILED:
                self.failed += 1
            if not self.tty or event.kind == executor.FAILED:
                self._line(self._final_line(event))
        if self.tty:
            self._bar()

    def _final_line(self, event: executor.Event) -> str:
        result = event.result
        text = f'{event.kind}: {event.step.describe()}'
        if result is not None and result.outcome == executor.DONE:
            text += f' ({result.seconds:.1f}s)'
        if event.message:
            text += f': {event.message}'
        return f'[{self.finished}/{self.total}] {text}'

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
        done = int(width * self.finished / self.total) if self.total else 0
        current = next(iter(self.running.values()), '')
        text = (
            f'[{"#" * done}{"." * (width - done)}] '
            f'{self.finished}/{self.total}'
            + (f', {self.failed} failed' if self.failed else '')
            + (f' | {current}' if current else '')
        )
        self._write('\r\033[K' + text[:150])

    def close(self) -> None:
        if self.tty:
            self._write('\r\033[K')

    def note(self, text: str) -> None:
        self._line(text)
