"""OSC output formats (``-f table|json|yaml|value|csv``, plus ``dot`` for a
plan) for commands whose own class has none, such as ``project delete``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import stevedore

DOT = 'dot'


def _formatters() -> stevedore.ExtensionManager:
    return stevedore.ExtensionManager('cliff.formatter.list',
                                      invoke_on_load=True)


def add_format_options(parser: argparse.ArgumentParser, *,
                       with_dot: bool = False) -> None:
    formatters = _formatters()
    group = parser.add_argument_group(
        'output formatters (osc-cascade)',
        'format of the plan (with --dry-run) or of the summary')
    choices = sorted(formatters.names()) + ([DOT] if with_dot else [])
    group.add_argument('-f', '--format', dest='formatter', choices=choices,
                       default='table',
                       help='the output format, defaults to table'
                       + ('; dot is a Graphviz graph of the plan'
                          if with_dot else ''))
    for ext in formatters:
        ext.obj.add_argument_group(parser)


def emit(parsed_args: argparse.Namespace, columns: Sequence[str],
         rows: Sequence[Sequence[Any]], stdout: TextIO | None = None) -> None:
    stdout = stdout or sys.stdout
    formatter = _formatters()[parsed_args.formatter].obj
    # the table and value formatters print lists poorly: join them
    if parsed_args.formatter not in ('json', 'yaml'):
        rows = [[', '.join(map(str, v)) if isinstance(v, list) else v
                 for v in row] for row in rows]
    formatter.emit_list(list(columns), rows, stdout, parsed_args)
