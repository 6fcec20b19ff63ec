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

"""A table of many rows, printed as cliff's table formatter prints it.

cliff hands every cell to prettytable, which measures its width on the
screen (wcwidth) and justifies it: a plan of 100,000 resources has 90,001
rows, and printing them took 4.2 s. Where each cell is one line of
printable ASCII (its width is its length) and the table is not fit to a
terminal, the rows are justified here, and prettytable draws the frame and
the header of a table of one row, the widest cell of each column: the same
characters. Any other table is cliff's to print.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import sys
from typing import Any, TextIO

from cliff import columns as cliff_columns
import prettytable


def emit_list(
    formatter: Any,
    column_names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    stdout: TextIO,
    parsed_args: argparse.Namespace,
) -> None:
    """``formatter.emit_list`` (cliff's ``TableFormatter``), the same
    output."""
    texts = (
        _plain(rows, len(column_names))
        if rows and not _fitted(parsed_args)
        else None
    )
    if texts is None:
        formatter.emit_list(column_names, rows, stdout, parsed_args)
        return
    # cliff aligns a column by the type of its value in the first row
    aligns = [formatter.ALIGNMENTS.get(type(v), 'l') for v in rows[0]]
    widest = [max((t[i] for t in texts), key=len) for i in range(len(aligns))]
    frame = prettytable.PrettyTable(
        column_names, print_empty=parsed_args.print_empty
    )
    frame.padding_width = 1
    for name, align in zip(column_names, aligns):
        frame.align[name] = align
    frame.add_row(widest)
    top, header, rule, _widest, bottom = frame.get_string().split('\n')
    widths = [len(cell) - 2 for cell in rule.split('+')[1:-1]]
    lines = [top, header, rule]
    for row in texts:
        lines.append(
            '| '
            + ' | '.join(
                text.ljust(width) if align == 'l' else text.rjust(width)
                for text, width, align in zip(row, widths, aligns)
            )
            + ' |'
        )
    lines.append(bottom)
    stdout.write('\n'.join(lines))
    stdout.write('\n')


def _fitted(parsed_args: argparse.Namespace) -> bool:
    """Whether cliff fits the table to a width (``--max-width``,
    ``--fit-width``, or a terminal), which wraps cells."""
    return (
        int(parsed_args.max_width) > 0
        or bool(parsed_args.fit_width)
        or sys.stdout.isatty()
    )


def _plain(
    rows: Sequence[Sequence[Any]], columns: int
) -> list[list[str]] | None:
    """Each cell's text as cliff gives it to prettytable, where every one
    is a line of printable ASCII and each row has ``columns`` cells; else
    None."""
    texts = []
    for row in rows:
        if len(row) != columns:
            return None  # prettytable's to refuse
        line = []
        for value in row:
            if isinstance(value, cliff_columns.FormattableColumn):
                value = value.human_readable()
            text = value if isinstance(value, str) else str(value)
            if not (text.isascii() and text.isprintable()):
                return None
            line.append(text)
        texts.append(line)
    return texts
