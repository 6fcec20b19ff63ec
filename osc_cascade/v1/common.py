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
from collections.abc import Callable, Iterable, Iterator, Sequence
import contextlib
import functools
import logging
import re
import signal
import sys
import textwrap
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


#: the units a duration may end with, in seconds
_DURATION_UNITS = {'': 1, 's': 1, 'm': 60, 'h': 3600, 'd': 86400}
_DURATION = re.compile(r'\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*')


def duration(text: str) -> float:
    """A duration such as ``300`` (seconds), ``90s``, ``5m``, ``2h`` or
    ``7d``, in seconds: the one spelling of every option that takes a
    time (metavar ``<duration>``)."""
    m = _DURATION.fullmatch(text.lower())
    if not m:
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a duration such as 300, 90s, 5m, 2h or 7d'
        )
    return float(m.group(1)) * _DURATION_UNITS[m.group(2)]


def positive_duration(text: str) -> float:
    value = duration(text)
    if value <= 0:
        raise argparse.ArgumentTypeError('must be greater than 0')
    return value


#: the name the options used before durations had one spelling
age = duration


#: the title of the group of options that most runs leave alone
TUNING = 'tuning (osc-cascade; rarely needed)'


def add_tuning_group(parser: argparse.ArgumentParser) -> Any:
    """The group of the options most runs leave alone; in the usage line
    they are one ``[tuning options]``."""
    return UsageGroup(parser.add_argument_group(TUNING), 'tuning options')


class UsageGroup:
    """An argument group whose options the usage line names as one
    ``[<label>]`` (``HelpFormatter``); ``--help`` lists each."""

    def __init__(self, group: Any, label: str) -> None:
        self.group = group
        self.label = label

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = self.group.add_argument(*args, **kwargs)
        action.usage_label = self.label  # type: ignore[attr-defined]
        return action

    def __getattr__(self, name: str) -> Any:
        return getattr(self.group, name)


def add_force_stuck_option(group: Any) -> None:
    """``--force-stuck``: of the commands that delete a project's
    resources (``project delete --cascade``, ``orphan purge``)."""
    group.add_argument(
        '--force-stuck',
        action='store_true',
        help='Reset what is stuck (admin), then delete it',
    )


def add_region_option(group: Any) -> None:
    """``--region`` of a cascade (project's, user's): the regions it works
    in, all by default."""
    group.add_argument(
        '--region',
        metavar='<region>',
        dest='cascade_regions',
        action='append',
        default=[],
        help='Only in this region (repeat for more; default: all)',
    )


def add_execution_options(group: Any, tuning: Any = None) -> None:
    """Options of every command that runs a plan: --dry-run and --yes in
    ``group``, the others in ``tuning`` (default: ``group``)."""
    group.add_argument(
        '--dry-run',
        action='store_true',
        help='Show the plan and change nothing',
    )
    group.add_argument(
        '--yes',
        action='store_true',
        help='Do not prompt for confirmation',
    )
    tuning = group if tuning is None else tuning
    tuning.add_argument(
        '--parallel',
        metavar='<n>',
        type=positive_int,
        default=10,
        help='Make at most <n> API calls at once (default: 10)',
    )
    tuning.add_argument(
        '--timeout',
        metavar='<duration>',
        type=positive_duration,
        default=600,
        help='Give up on one resource after this (default: 10m)',
    )
    add_rate_limit_option(tuning)
    tuning.add_argument(
        '--progress',
        choices=('human', 'json'),
        default='human',
        metavar='<style>',
        help='Progress on stderr: human (default) or json',
    )
    add_record_options(tuning)


def add_record_options(group: Any) -> None:
    group.add_argument(
        '--report-file',
        metavar='<file>',
        help="Where to write the run's record (--no-report: nowhere)",
    )
    # named in --report-file's line: one line for the two
    group.add_argument(
        '--no-report', action='store_true', help=argparse.SUPPRESS
    )


def add_rate_limit_option(group: Any) -> None:
    # named after clouds.yaml's rate_limit, which openstacksdk reads
    group.add_argument(
        '--rate-limit',
        metavar='<n>',
        type=positive_float,
        help='At most <n> API calls a second per service',
    )


#: seconds one API call may take when neither --api-timeout nor the
#: cloud's api_timeout (clouds.yaml) says: a hung call must not hang a run
DEFAULT_API_TIMEOUT = 120.0


def add_api_timeout_option(group: Any) -> None:
    group.add_argument(
        '--api-timeout',
        metavar='<duration>',
        type=positive_duration,
        help="One API call's limit (default: clouds.yaml, else 2m)",
    )


def connection(app: Any, parsed_args: argparse.Namespace) -> Any:
    """The SDK connection of OSC's client manager, with every API call
    bounded in time (keystoneauth's session timeout), clouds.yaml's
    per-service limits repaired, its HTTP pools sized to ``--parallel``,
    ``--rate-limit`` set as its per-service ``rate_limit``, as the reaper
    sets its own, and the log records no handler prints dropped
    (``drop_unprinted_records``)."""
    conn = app.client_manager.sdk_connection
    if not hasattr(conn.session.auth, 'get_access'):
        # --os-auth-type none (or admin_token): no token, so no catalog
        # to find the services in, nor a user to record
        raise exceptions.CommandError(
            'osc-cascade needs a token: an auth type with a catalog (e.g. '
            f'password), not {auth_type(conn)}'
        )
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


def auth_type(conn: Any) -> str:
    """The cloud's auth type, as clouds.yaml or --os-auth-type says."""
    config = getattr(getattr(conn, 'config', None), 'config', None) or {}
    return repr(config.get('auth_type') or type(conn.session.auth).__name__)


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


def identity_v3_only(command: Any, v3_class: type) -> None:
    """A hook's --cascade works on OSC's Identity v3 command alone (the
    hook group covers every API version of the command)."""
    if not isinstance(command, v3_class):
        raise exceptions.CommandError(
            '--cascade needs the Identity API v3 (--os-identity-api-version 3)'
        )


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

#: exit statuses: 0 done, 1 failed or refused (OSC's for a CommandError),
#: 2 argparse's usage error, 128 + the signal for a run stopped by SIGINT
#: or SIGTERM, and ``orphan list --exit-code``'s own two
EXIT_ORPHANS_FOUND = 3
EXIT_OWNERS_UNCONFIRMED = 4

#: what each exit status means, as ``--help`` says it (plain text, one
#: line each); README.rst and doc/source/user/exit-codes.rst say more
EXIT_STATUSES = {
    0: 'done',
    1: 'failed or refused; the last line on stderr says why',
    2: 'usage error (an unknown option, a missing argument)',
    EXIT_ORPHANS_FOUND: 'with --exit-code: orphans found',
    EXIT_OWNERS_UNCONFIRMED: 'with --exit-code: none found, but some '
    'owners not confirmed gone',
    130: 'stopped by Ctrl-C (143: by SIGTERM)',
}
#: the statuses of every command that runs a plan (it stops politely on
#: a signal); doc/source/user/exit-codes.rst has each command's
COMMON_EXIT_STATUSES = (0, 1, 2, 130)
#: those of a command that only reads, or that a signal ends at once
READ_EXIT_STATUSES = (0, 1, 2)


#: what 0 means after a dry run
DRY_RUN_DONE = 'done (with --dry-run: the real run would go ahead)'

#: the output options (cliff's formatters' and ours) in one short line
#: each, by option: (metavar or None, help); the options past -f and -c
#: are one ``[output options]`` in the usage line
OUTPUT_OPTIONS = {
    '-c': ('<column>', 'A column to show; repeat for more (default: all)'),
    '--sort-column': ('<column>', 'Sort by this column; repeat for more'),
    '--sort-ascending': (None, 'Sort in ascending order (default)'),
    '--sort-descending': (None, 'Sort in descending order'),
    '--quote': ('<when>', None),
    '--noindent': (None, None),
    '--max-width': ('<n>', None),
    '--fit-width': (None, None),
    '--print-empty': (None, None),
}
#: the options of one formatter each (help None above), named in one line
#: as every openstack command has them, not five
FORMATTER_OPTIONS = (
    'csv --quote, json --noindent, table --max-width/--fit-width/--print-empty'
)
_OUTPUT_TITLES = ('output formatters', 'output formatters (osc-cascade)')


def tidy_output_options(parser: argparse.ArgumentParser) -> None:
    """cliff's output options in one group, one short line each: its
    formatters each add a titled group, and its texts fill 40 lines."""
    groups = parser._action_groups
    output = next((g for g in groups if g.title in _OUTPUT_TITLES), None)
    if output is None:
        return
    output.description = None
    output.title = 'output' + output.title[len('output formatters') :]
    for group in list(groups):
        actions = group._group_actions
        if (
            group is not output
            and actions
            and all(
                a.option_strings and a.option_strings[0] in OUTPUT_OPTIONS
                for a in actions
            )
        ):
            output._group_actions.extend(actions)
            groups.remove(group)
    for action in output._group_actions:
        first = action.option_strings[0] if action.option_strings else ''
        if first == '-f' and action.choices:
            action.metavar = '<format>'
            names = list(action.choices)
            action.help = (
                ', '.join(names[:-1]) + f' or {names[-1]} (default: table)'
            )
        elif first in OUTPUT_OPTIONS:
            metavar, action.help = OUTPUT_OPTIONS[first]
            if action.help is None:
                action.help = argparse.SUPPRESS
                output.description = FORMATTER_OPTIONS
            if metavar and action.nargs != 0:
                action.metavar = metavar
            if first not in ('-c',):
                action.usage_label = 'output options'  # type: ignore


def exit_status_text(
    statuses: tuple[int, ...] = COMMON_EXIT_STATUSES, dry_run: bool = False
) -> str:
    """The end of a command's ``--help``: its own exit statuses, one line
    each, indented (``HelpFormatter`` prints them as they are)."""
    meanings = {**EXIT_STATUSES, 0: DRY_RUN_DONE} if dry_run else EXIT_STATUSES
    return 'Exit status:\n' + '\n'.join(
        f'  {code:<4} {meanings[code]}' for code in statuses
    )


class _UsagePlaceholder(argparse.Action):
    """``[<label>]`` in the usage line, for the options of a group."""

    def __init__(self, label: str) -> None:
        super().__init__(
            option_strings=[f'[{label}]'], dest=label, nargs=0, required=True
        )


class HelpFormatter(_argparse.SmartHelpFormatter):
    """cliff's (the one its commands use), except that:

    * a paragraph of the epilog whose lines after the first are indented
      (the exit statuses) is printed as it is, not filled into one line;
    * the options of a ``UsageGroup`` are one ``[<label>]`` in the usage
      line, which would otherwise fill half a screen."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return '\n\n'.join(
            paragraph
            if all(line.startswith(' ') for line in paragraph.splitlines()[1:])
            and '\n' in paragraph
            else super(HelpFormatter, self)._fill_text(
                paragraph, width, indent
            )
            for paragraph in text.strip().split('\n\n')
        )

    def _format_usage(
        self, usage: Any, actions: Any, groups: Any, prefix: Any
    ) -> str:
        if usage is None:
            shown, labels = [], set()
            for action in actions:
                label = getattr(action, 'usage_label', None)
                if label is None:
                    shown.append(action)
                elif label not in labels:
                    labels.add(label)
                    shown.append(_UsagePlaceholder(label))
            actions = shown
        return super()._format_usage(usage, actions, groups, prefix)


def add_exit_status(
    parser: argparse.ArgumentParser,
    statuses: tuple[int, ...] = COMMON_EXIT_STATUSES,
) -> None:
    """The exit statuses at the end of ``--help``: commands
    (``ExitStatusHelp``) and hooks (in their ``get_parser``)."""
    dry_run = '--dry-run' in parser._option_string_actions
    parser.epilog = '\n\n'.join(
        filter(None, [parser.epilog, exit_status_text(statuses, dry_run)])
    )
    tidy_output_options(parser)
    parser.formatter_class = HelpFormatter


class ExitStatusHelp:
    """A command's ``--help`` ends with its exit statuses (put it before
    the osc-lib base class; ``exit_statuses`` says which), once the
    command's own ``get_parser`` added its options; and its table has no
    cell wider than ``MAX_CELL``."""

    exit_statuses: tuple[int, ...] = COMMON_EXIT_STATUSES

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get('get_parser')
        if own is None:
            return

        @functools.wraps(own)
        def get_parser(self: Any, prog_name: str) -> argparse.ArgumentParser:
            parser = own(self, prog_name)
            if not getattr(parser, 'exit_status_added', False):
                add_exit_status(parser, self.exit_statuses)
                parser.exit_status_added = True  # type: ignore
            return parser

        cls.get_parser = get_parser  # type: ignore[method-assign]

    def produce_output(
        self, parsed_args: argparse.Namespace, column_names: Any, data: Any
    ) -> Any:
        """cliff's, with no table cell wider than ``MAX_CELL``."""
        if getattr(parsed_args, 'formatter', None) == 'table':
            data = table_cells(data)
        return super().produce_output(  # type: ignore[misc]
            parsed_args, column_names, data
        )


#: the widest cell of a table: a longer one is wrapped into lines of at
#: most this (-f json, yaml, csv and value keep it whole)
MAX_CELL = 100


def table_cells(rows: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """``rows`` with every cell longer than ``MAX_CELL`` characters (a
    failure's reason, a manifest's path) wrapped into lines, for
    ``-f table``."""
    from cliff import columns

    def cell(value: Any) -> Any:
        text = (
            value.human_readable()
            if isinstance(value, columns.FormattableColumn)
            else value
        )
        if not isinstance(text, str) or len(text) <= MAX_CELL:
            return value
        return '\n'.join(
            textwrap.fill(line, MAX_CELL, break_on_hyphens=False)
            for line in text.splitlines()
        )

    return [[cell(v) for v in row] for row in rows]


def exit_interrupted(exc: Interrupted) -> NoReturn:
    """128 + the signal, as a shell reports a command a signal ended."""
    sys.stderr.write(f'{exc}\n')
    raise SystemExit(128 + exc.signum)
