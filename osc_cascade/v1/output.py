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

"""OSC output formats (``-f table|json|yaml|value|csv``, plus ``dot`` for a
plan) for commands whose own class has none, such as ``project delete``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import sys
from typing import TYPE_CHECKING, Any, TextIO

from cliff import columns as cliff_columns
from osc_lib import exceptions
import stevedore

from osc_cascade.v1.constants import PLAN_COLUMNS

if TYPE_CHECKING:  # the commands import this module at start-up
    from osc_cascade.engine.planner import Plan

DOT = 'dot'


def _formatters() -> stevedore.ExtensionManager:
    return stevedore.ExtensionManager(
        'cliff.formatter.list', invoke_on_load=True
    )


def add_format_options(
    parser: argparse.ArgumentParser, *, with_dot: bool = False
) -> None:
    formatters = _formatters()
    group = parser.add_argument_group(
        'output formatters (osc-cascade)',
        'format of the plan (with --dry-run) or of the summary',
    )
    choices = sorted(formatters.names()) + ([DOT] if with_dot else [])
    group.add_argument(
        '-f',
        '--format',
        dest='formatter',
        choices=choices,
        default='table',
        help='the output format, defaults to table'
        + ('; dot is a Graphviz graph of the plan' if with_dot else ''),
    )
    group.add_argument(
        '-c',
        '--column',
        dest='column',
        action='append',
        default=[],
        metavar='COLUMN',
        help='a column to include; repeat it for more (default: all)',
    )
    for ext in formatters:
        ext.obj.add_argument_group(parser)


def chosen_columns(
    parsed_args: argparse.Namespace, columns: Sequence[str]
) -> list[int]:
    """The indexes of the columns ``-c`` asked for, as cliff's listers
    choose them: in the table's order, unknown names ignored, but at least
    one known. Commands check this before they change anything."""
    wanted = getattr(parsed_args, 'column', None)
    if not wanted:
        return list(range(len(columns)))
    keep = [i for i, c in enumerate(columns) if c in wanted]
    if not keep:
        raise exceptions.CommandError(
            f'No recognized column names in '
            f'{", ".join(wanted)}. Recognized columns are '
            f'{", ".join(columns)}.'
        )
    return keep


def emit(
    parsed_args: argparse.Namespace,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    stdout: TextIO | None = None,
) -> None:
    stdout = stdout or sys.stdout
    formatter = _formatters()[parsed_args.formatter].obj
    keep = chosen_columns(parsed_args, columns)
    columns = [columns[i] for i in keep]
    rows = [[row[i] for i in keep] for row in rows]
    # the table and value formatters print lists poorly: join them
    if parsed_args.formatter not in ('json', 'yaml'):
        rows = [
            [', '.join(map(str, v)) if isinstance(v, list) else v for v in row]
            for row in rows
        ]
    formatter.emit_list(list(columns), rows, stdout, parsed_args)


class RemovesToo(cliff_columns.FormattableColumn):
    """The Name of a step whose delete removes more than its resource (a
    Heat stack and everything it made): in a table the name and how many
    resources of each type go with it, ``mystack (3 OS::Nova::Server, 1
    OS::Neutron::Net)``; in JSON and YAML the name and every resource, with
    its type, id and name."""

    def __init__(self, name: str, made: list[dict[str, str]]):
        super().__init__((name, made))

    def human_readable(self) -> str:
        name, made = self._value
        return f'{name} ({removes_counts(made)})'

    def machine_readable(self) -> dict[str, Any]:
        name, made = self._value
        return {'name': name, 'removes': [dict(r) for r in made]}


def removes_counts(made: list[dict[str, str]]) -> str:
    """How many resources of each type, the most frequent first."""
    counts: dict[str, int] = {}
    for res in made:
        counts[res['type']] = counts.get(res['type'], 0) + 1
    return ', '.join(
        f'{n} {type_}'
        for type_, n in sorted(counts.items(), key=lambda c: (-c[1], c[0]))
    )


def plan_rows(plan: Plan) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The plan as a table: one row per step, in execution order. A step
    whose delete takes more along (``made`` in its resource's attributes:
    a stack) says what in its Name (``RemovesToo``)."""
    columns = list(PLAN_COLUMNS)
    stages = plan.stages()
    preds = plan.predecessors()
    rows = []
    for step_id in plan.order():
        step = plan.steps[step_id]
        after = sorted(preds[step_id])
        made = step.target.attrs.get('made')
        rows.append(
            (
                stages[step_id],
                step.action,
                step.target.kind,
                step.target.id,
                RemovesToo(step.target.name, made)
                if made and not step.is_break_action
                else step.target.name,
                step.target.project_id,
                after,
            )
        )
    return columns, rows


def plan_dot(plan: Plan) -> str:
    """The plan as a Graphviz graph."""
    lines = [
        'digraph cascade {',
        '  rankdir=LR;',
        '  node [shape=box, fontsize=10];',
    ]
    for step_id in plan.order():
        step = plan.steps[step_id]
        style = {'delete': '', 'keep': ', style=dashed'}.get(
            step.action,
            ', shape=ellipse, style=filled, fillcolor=lightyellow',
        )
        label = step.describe()
        if not step.is_break_action and step.target.attrs.get('made'):
            # what goes with it, one line each
            label += ''.join(
                f'\\n{r["type"]} {r["id"] or "-"}'
                + (f' ({r["name"]})' if r['name'] else '')
                for r in step.target.attrs['made']
            )
        label = label.replace('"', "'")
        lines.append(f'  "{step_id}" [label="{label}"{style}];')
    for first, then in sorted(plan.edges):
        lines.append(f'  "{first}" -> "{then}";')
    lines.append('}')
    return '\n'.join(lines) + '\n'
