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

"""What the commands of this plugin share: the options of every command
that runs a plan, the confirmation prompt and the counts it shows, the one
place where the engine's errors become osc-lib's, and what a hook hands
to the OSC command it extends.

Every command fails the same way: it prints what it did, then raises
``CommandError`` with one line (OSC's "N of M failed"), which OSC prints
and turns into exit code 1."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
import contextlib
import logging
import signal
import sys
from typing import Any, NoReturn

from cliff import _argparse
from osc_lib import exceptions

from osc_cascade.engine.errors import CascadeError, Interrupted, one_line


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError('must be at least 1')
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError('must be greater than 0')
    return value


def age(text: str) -> float:
    """An age such as ``90s``, ``30m``, ``24h`` or ``7d``, in seconds."""
    from osc_cascade.workflows.clusters.stuck import parse_age

    try:
        return parse_age(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_force_stuck_option(group: Any) -> None:
    """``--force-stuck``: of the commands that delete a project's
    resources (``project delete --cascade``, ``orphan purge``)."""
    group.add_argument(
        '--force-stuck',
        action='store_true',
        help='As an admin, reset the state of what its service will not '
        'delete from (a volume, snapshot or backup stuck in '
        'error_deleting, creating, attaching, ...) before deleting it; '
        'only what the project owns and nothing else uses',
    )


def add_execution_options(group: Any) -> None:
    """Options of every command that runs a plan."""
    group.add_argument(
        '--dry-run',
        action='store_true',
        help='Show the plan and change nothing',
    )
    group.add_argument(
        '--yes',
        action='store_true',
        help='Do not ask for confirmation (needed without a terminal)',
    )
    group.add_argument(
        '--parallel',
        metavar='<n>',
        type=positive_int,
        default=10,
        help='Make at most <n> API calls at once (default: 10): in all '
        'while deleting, and to each service while listing; a deletion '
        'waiting for the service to finish holds none',
    )
    group.add_argument(
        '--timeout',
        metavar='<seconds>',
        type=positive_float,
        default=600,
        help='Give up on one resource after <seconds> (default: 600)',
    )
    add_rate_limit_option(group)
    group.add_argument(
        '--progress',
        choices=('human', 'json'),
        default='human',
        help='How to show progress on stderr: human (default: a bar on a '
        'terminal, a line per step otherwise) or json (one JSON object '
        'per event, for machines)',
    )
    add_record_options(group)


def add_record_options(group: Any) -> None:
    group.add_argument(
        '--report-file',
        metavar='<file>',
        help='Write the record of the run to <file> as JSON: who (the '
        "token's user and project), when, the cloud and its regions, "
        "the plan, and each step's outcome, seconds and attempts "
        '(default: a new file named after the time and the command in '
        '$XDG_STATE_HOME/osc-cascade/, else ~/.local/state/osc-cascade/; '
        'a dry run writes none)',
    )
    group.add_argument(
        '--no-report',
        action='store_true',
        help='Write no record of the run',
    )


def add_rate_limit_option(group: Any) -> None:
    # named after clouds.yaml's rate_limit, which openstacksdk reads
    group.add_argument(
        '--rate-limit',
        metavar='<calls/s>',
        type=positive_float,
        help='Make at most <calls/s> API calls per second to each service, '
        "status checks included (default: the cloud's rate_limit in "
        'clouds.yaml, if any; a lower one there stays)',
    )


#: seconds one API call may take when neither --api-timeout nor the
#: cloud's api_timeout (clouds.yaml) says: a hung call must not hang a run
DEFAULT_API_TIMEOUT = 120.0


def add_api_timeout_option(group: Any) -> None:
    group.add_argument(
        '--api-timeout',
        metavar='<seconds>',
        type=positive_float,
        help='Give up on one API call after <seconds> (default: the '
        "cloud's api_timeout in clouds.yaml, else "
        f'{DEFAULT_API_TIMEOUT:g}); a call that timed out is retried like '
        'any that may pass',
    )


def connection(app: Any, parsed_args: argparse.Namespace) -> Any:
    """The SDK connection of OSC's client manager, with every API call
    bounded in time (keystoneauth's session timeout), clouds.yaml's
    per-service limits repaired, its HTTP pools sized to ``--parallel``,
    ``--rate-limit`` set as its per-service ``rate_limit``, as the reaper
    sets its own, and the log records no handler prints dropped
    (``drop_unprinted_records``)."""
    conn = app.client_manager.sdk_connection
    timeout = getattr(parsed_args, 'api_timeout', None)
    if timeout is not None:
        conn.session.timeout = timeout
    elif conn.session.timeout is None:
        conn.session.timeout = DEFAULT_API_TIMEOUT
    from osc_cascade.engine import limiter

    limiter.repair_limits(conn)
    drop_unprinted_records()
    parallel = getattr(parsed_args, 'parallel', None)
    if parallel:
        limiter.size_pools(conn, parallel)
    per_second = getattr(parsed_args, 'rate_limit', None)
    if per_second is not None:
        from osc_cascade.kinds.registry import CLASSES

        limiter.limit_rate(
            conn, per_second, {c.service_type for c in CLASSES.values()}
        )
    return conn


def drop_unprinted_records() -> None:
    """Raise the root logger's level to the lowest level that one of the
    handlers would print. OSC sets it to DEBUG and lets its handlers choose
    (the console's is at WARNING without ``-v`` or ``--debug``), so
    keystoneauth formatted every request and answer, bodies included, for
    nobody: 8.6 % of the client's CPU in a cascade of 10,000 resources.
    What is printed stays the same: a logger with a level of its own keeps
    it, and a handler at any level (or at none) anywhere counts."""
    root = logging.getLogger()
    loggers = [root] + [
        lg
        for lg in logging.Logger.manager.loggerDict.values()
        if isinstance(lg, logging.Logger)
    ]
    levels = [
        h.level
        for lg in loggers
        for h in lg.handlers
        if not isinstance(h, logging.NullHandler)
    ]
    if levels and min(levels) > root.level:
        root.setLevel(min(levels))


def confirm(question: str, assume_yes: bool) -> None:
    """Ask on the terminal; refuse without one unless --yes was given."""
    if assume_yes:
        return
    if not sys.stdin.isatty():
        raise exceptions.CommandError(
            'Refusing to delete without confirmation: standard input is '
            'not a terminal. Pass --yes to confirm.'
        )
    sys.stderr.write(question + ' [y/N]: ')
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ('y', 'yes'):
        raise exceptions.CommandError('Aborted: nothing was deleted.')


def counts_text(plan: Any) -> str:
    lines = []
    for kind, per_action in sorted(plan.counts().items()):
        parts = ', '.join(
            f'{n} {action}' for action, n in sorted(per_action.items())
        )
        lines.append(f'  {kind}: {parts}')
    return '\n'.join(lines)


def refuse_stray_options(
    parsed_args: argparse.Namespace, options: tuple[str, ...], needed: str
) -> None:
    """A hook's options mean nothing without its switch: say so rather than
    let OSC's own command run as if they were not given."""
    given = [o for o in options if getattr(parsed_args, o, None)]
    if given:
        raise exceptions.CommandError(
            '--' + given[0].replace('_', '-') + f' needs {needed}'
        )


@contextlib.contextmanager
def engine_errors() -> Iterator[None]:
    """The engine and the workflows raise their own errors; a command
    shows them as osc-lib's, one line each (``--debug`` has the
    traceback)."""
    try:
        yield
    except CascadeError as exc:
        raise exceptions.CommandError(one_line(exc)) from exc


def hand_to_osc(
    parsed_args: argparse.Namespace, dest: str, ids: list[str]
) -> argparse.Namespace:
    """What the OSC command a hook extends deletes after the hook.

    A cliff hook runs before the command's ``take_action`` and cannot skip
    it, and ``take_action`` deletes what its positional argument names. So
    the hook hands it only what the workflow emptied and verified, by ID:
    nothing after a dry run, a refusal or a failure."""
    setattr(parsed_args, dest, list(ids))
    return parsed_args


@contextlib.contextmanager
def stoppable(stop: Callable[[int], None]) -> Iterator[None]:
    """SIGINT and SIGTERM call ``stop(signum)`` while the block runs, so
    that the workflow finishes what is in flight, writes its report and
    says what remains; a second signal ends the command at once."""

    def handler(signum: int, frame: Any) -> None:
        for s in SIGNALS:
            signal.signal(s, signal.SIG_DFL)  # the next one is not polite
        stop(signum)

    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


#: the signals a run stops for, politely
SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: exit statuses (``EXIT_STATUS_TABLE``): 0 done, 1 failed or refused
#: (OSC's for a CommandError), 2 argparse's usage error, 128 + the signal
#: for a run stopped by SIGINT or SIGTERM, and ``orphan list
#: --exit-code``'s own two
EXIT_ORPHANS_FOUND = 3
EXIT_OWNERS_UNCONFIRMED = 4

#: the exit statuses of every command, at the end of its ``--help`` (and so
#: of its page in the command reference: an RST table); README.rst has it
#: too, word for word (a unit test checks)
EXIT_STATUS_TABLE = """\
======  ==================================================================
status  meaning
======  ==================================================================
0       everything asked was done; a dry run whose real run would run
1       something failed or was refused (also a dry run whose real run
        would refuse), with one line on stderr saying what
2       argparse's usage error (an unknown option, a missing argument),
        never anything else
3       ``orphan list --exit-code``: orphans found
4       ``orphan list --exit-code``: none found, but some owners could not
        be confirmed gone (the report is incomplete)
130     a run stopped by SIGINT (Ctrl-C); 143 by SIGTERM
======  ==================================================================
"""


class HelpFormatter(_argparse.SmartHelpFormatter):
    """cliff's (the one its commands use), except that a paragraph of
    the epilog that is a table (it begins with ``=``) is printed as it
    is, not filled into one line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return '\n\n'.join(
            paragraph
            if paragraph.startswith('=')
            else super(HelpFormatter, self)._fill_text(
                paragraph, width, indent
            )
            for paragraph in text.strip().split('\n\n')
        )


def add_exit_status(parser: argparse.ArgumentParser) -> None:
    """The exit statuses at the end of ``--help``: commands
    (``ExitStatusHelp``) and hooks (in their ``get_parser``)."""
    parser.epilog = '\n\n'.join(
        filter(None, [parser.epilog, 'Exit status:', EXIT_STATUS_TABLE])
    )
    parser.formatter_class = HelpFormatter


class ExitStatusHelp:
    """A command's ``--help`` ends with the exit statuses (put it before
    the osc-lib base class)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)  # type: ignore[misc]
        add_exit_status(parser)
        return parser


def exit_interrupted(exc: Interrupted) -> NoReturn:
    """128 + the signal, as a shell reports a command a signal ended."""
    sys.stderr.write(f'{exc}\n')
    raise SystemExit(128 + exc.signum)
