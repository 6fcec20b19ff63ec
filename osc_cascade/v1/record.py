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

"""The durable record of every real run (``engine.report``): where it
goes (``--report-file``, ``--no-report``, else a new file in the user's
state directory), what it says of the run, and the line on stderr that
says where it is. A dry run writes none."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
import contextlib
import os
from typing import Any

from osc_cascade.engine import report
from osc_cascade.engine.errors import one_line
from osc_cascade.engine.retry import Clock


class RunRecord:
    """The record of one run of ``command``; ``path`` is '' when none is
    to be written (a dry run, ``--no-report``)."""

    def __init__(self, parsed_args: argparse.Namespace, command: str):
        self.command = command
        self.started = report.utcnow()
        #: the clock reading the steps' starts are counted from
        self.origin = Clock().now()
        # a command without --dry-run or --report-file (project sweep)
        # has no such attribute
        if getattr(parsed_args, 'dry_run', False) or parsed_args.no_report:
            self.path = ''
        else:
            self.path = getattr(
                parsed_args, 'report_file', None
            ) or report.default_path(command, self.started)

    def context(self, conn: Any, regions: Sequence[str]) -> dict[str, Any]:
        return report.context(conn, self.command, regions, self.started)

    def of_plan(
        self,
        conn: Any,
        regions: Sequence[str],
        plan: Any,
        runs: Sequence[Any],
        *,
        parallel: int,
        error: str = '',
    ) -> dict[str, Any]:
        """The record of a plan run by an executor (its runs)."""
        return report.build(
            plan,
            runs,
            parallel=parallel,
            phases={'execute': Clock().now() - self.origin},
            origin=self.origin,
            error=error,
            context=self.context(conn, regions),
        )

    def of_rows(
        self,
        conn: Any,
        regions: Sequence[str],
        planned: tuple[Sequence[str], Sequence[Sequence[Any]]],
        outcome: tuple[Sequence[str], Sequence[Sequence[Any]]],
        *,
        ok: bool,
        error: str = '',
    ) -> dict[str, Any]:
        """The record of a run shown as tables: what was planned, what
        became of it."""
        return report.build_rows(
            planned,
            outcome,
            ok=ok,
            error=error,
            context=self.context(conn, regions),
        )

    @contextlib.contextmanager
    def recording(
        self,
        build: Callable[[str], dict[str, Any]],
        say: Callable[[str], None],
    ) -> Iterator[None]:
        """Write the record when the block ends, however it ends (a
        failure, a signal): ``build(error)`` makes it, ``error`` being ''
        or what ended the block."""
        error = ''
        try:
            yield
        except BaseException as exc:
            error = one_line(exc)
            raise
        finally:
            if self.path:
                self.write(build(error), say)

    def write(
        self, record: dict[str, Any], say: Callable[[str], None]
    ) -> None:
        """Write it and ``say`` where (or why not)."""
        if self.path:
            self.announce(report.write(self.path, record), say)

    def announce(self, unwritten: str, say: Callable[[str], None]) -> None:
        """One line on stderr: where the record is, or why it is not; none
        if the run ended before it had anything to record (a project the
        sweep skipped)."""
        if self.path and (unwritten or os.path.exists(self.path)):
            say(
                f'note: {unwritten}'
                if unwritten
                else f'note: the record of the run: {self.path}'
            )
