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
import os
import re
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any, TextIO

from cliff import columns as cliff_columns
from osc_lib import exceptions
import stevedore

from osc_cascade.engine.heap import with_few_collections
from osc_cascade.v1.constants import CASCADE_PLAN_COLUMNS, VERBS

if TYPE_CHECKING:  # the commands import this module at start-up
    from osc_cascade.engine.planner import Plan
    from osc_cascade.engine.resource import Step

DOT = 'dot'
#: the formats whose rows carry the whole plan (every predecessor's id)
MACHINE_FORMATS = ('json', 'yaml')
#: what ``--graph FILE`` renders, by the file's extension
GRAPH_FORMATS = ('svg', 'png', 'pdf')


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
    if with_dot:
        group.add_argument(
            '--graph',
            metavar='<file>',
            help='Also draw the plan into <file>: .'
            + ', .'.join(GRAPH_FORMATS),
        )
    for ext in formatters:
        ext.obj.add_argument_group(parser)


def add_dot_format(parser: argparse.ArgumentParser) -> None:
    """``-f dot`` beside cliff's formatters, for a command whose plan
    ``run_or_dot`` prints as a graph (cliff has no formatter of it)."""
    for action in parser._actions:
        if action.dest == 'formatter' and action.choices is not None:
            action.choices = [*action.choices, DOT]


def run_or_dot(
    parsed_args: argparse.Namespace,
    stdout: TextIO,
    run: Any,
    plan_of: Any,
) -> int:
    """cliff's ``run()``; with ``-f dot`` (and --dry-run alone), the plan
    ``plan_of()`` makes, as a Graphviz graph."""
    if parsed_args.formatter != DOT:
        return run()
    if not parsed_args.dry_run:
        raise exceptions.CommandError('-f dot needs --dry-run')
    stdout.write(plan_dot(plan_of()))
    return 0


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


@with_few_collections  # a plan's table: a row of cells per step
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
    if parsed_args.formatter not in MACHINE_FORMATS:
        rows = [
            [', '.join(map(str, v)) if isinstance(v, list) else v for v in row]
            for row in rows
        ]
    if parsed_args.formatter == 'table':
        from osc_cascade.v1 import table
        from osc_cascade.v1.common import table_cells

        table.emit_list(
            formatter, list(columns), table_cells(rows), stdout, parsed_args
        )
        return
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


def plan_dot(plan: Plan) -> str:
    """The plan as a Graphviz graph, the steps of each region in a box of
    their own (``subgraph cluster_<region>``); what is global (Keystone's)
    stays outside."""
    lines = [
        'digraph cascade {',
        '  rankdir=LR;',
        '  node [shape=box, fontsize=10];',
    ]
    by_region: dict[str, list[str]] = {}
    for step_id in plan.order():
        region = plan.steps[step_id].target.region
        by_region.setdefault(region, []).append(step_id)
    for step_id in by_region.pop('', []):
        lines.append('  ' + _dot_node(plan, step_id))
    for region, step_ids in sorted(by_region.items()):
        lines.append(f'  subgraph {_cluster_id(region)} {{')
        lines.append(f'    label="{_dot_text(region)}";')
        lines.append('    style=rounded;')
        lines.extend('    ' + _dot_node(plan, s) for s in step_ids)
        lines.append('  }')
    for first, then in sorted(plan.edges):
        lines.append(f'  "{first}" -> "{then}";')
    lines.append('}')
    return '\n'.join(lines) + '\n'


def _dot_text(text: str) -> str:
    return text.replace('"', "'")


def _dot_node(plan: Plan, step_id: str) -> str:
    step = plan.steps[step_id]
    style = {'delete': '', 'keep': ', style=dashed'}.get(
        step.action,
        ', shape=ellipse, style=filled, fillcolor=lightyellow',
    )
    label = step_text(step)
    if not step.is_break_action and step.target.attrs.get('made'):
        # what goes with it, one line each
        label += ''.join(
            f'\\n{r["type"]} {r["id"] or "-"}'
            + (f' ({r["name"]})' if r['name'] else '')
            for r in step.target.attrs['made']
        )
    return f'"{step_id}" [label="{_dot_text(label)}"{style}];'


def verb(step: Step) -> str:
    """The word a person reads for a step's action, the same in the plan,
    the progress and the summary (``remove`` for an allocation)."""
    if step.params.get('stuck') and step.action == 'keep':
        return 'stuck'
    return VERBS.get((step.target.kind, step.action), step.action)


def step_text(step: Step) -> str:
    """``step.describe()`` with the verb a person reads."""
    text = step.describe()
    word = verb(step)
    if word != step.action and text.startswith(step.action):
        text = word + text[len(step.action) :]
    return text


def after_text(step_ids: Sequence[str]) -> str:
    """A table's After column: how many steps must finish first (which
    ones: ``-f json``, ``-f dot``)."""
    return str(len(step_ids)) if step_ids else ''


@with_few_collections
def plan_table(
    plan: Plan, *, full: bool = False
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The plan a person reads (``CASCADE_PLAN_COLUMNS``): one row per step
    sorted by stage, then region, kind and name; the region of each; After
    a count and no Project column (``full``, for ``-f json`` and ``-f
    yaml``: every predecessor's step id, and the project's ID); the reason
    of a keep."""
    stages = plan.stages()
    preds = plan.predecessors()

    def key(step_id: str) -> tuple[Any, ...]:
        ref = plan.steps[step_id].target
        return (stages[step_id], ref.region, ref.kind, ref.name, ref.id)

    rows = []
    for step_id in sorted(plan.steps, key=lambda s: (*key(s), s)):
        step = plan.steps[step_id]
        ref = step.target
        made = ref.attrs.get('made')
        after = sorted(preds[step_id])
        rows.append(
            (
                stages[step_id],
                ref.region,
                verb(step),
                ref.kind,
                ref.id,
                RemovesToo(ref.name, made)
                if made and not step.is_break_action
                else ref.name,
                ref.project_id,
                after if full else after_text(after),
                step.params.get('reason', '') if step.action == 'keep' else '',
            )
        )
    columns = list(CASCADE_PLAN_COLUMNS)
    if not full:  # one project or a few: its ID is 32 columns of table
        drop = columns.index('Project')
        del columns[drop]
        rows = [row[:drop] + row[drop + 1 :] for row in rows]
    return columns, rows


def _cluster_id(region: str) -> str:
    return 'cluster_' + (re.sub(r'[^A-Za-z0-9_]', '_', region) or 'global')


def graph_format(path: str) -> str:
    """The format ``--graph <path>`` renders, from its extension."""
    ext = os.path.splitext(path)[1].lstrip('.').lower()
    if ext not in GRAPH_FORMATS:
        raise exceptions.CommandError(
            f'--graph {path}: the file name must end in '
            + ', '.join(f'.{f}' for f in GRAPH_FORMATS)
            + ' (the format to draw the plan in)'
        )
    return ext


def render_graph(dot: str, path: str) -> None:
    """Draw ``dot`` into ``path`` with Graphviz's ``dot``; one line if it
    is not installed or fails."""
    fmt = graph_format(path)
    program = shutil.which('dot')
    if program is None:
        raise exceptions.CommandError(
            "--graph needs Graphviz's dot command, which is not installed "
            '(apt install graphviz, dnf install graphviz, brew install '
            'graphviz); -f dot prints the graph as text instead'
        )
    try:
        subprocess.run(  # noqa: S603 - a fixed program, no shell
            [program, f'-T{fmt}', '-o', path],
            input=dot.encode(),
            capture_output=True,
            check=True,
            timeout=120,
        )
    except subprocess.CalledProcessError as exc:
        why = ' '.join(exc.stderr.decode(errors='replace').split())
        raise exceptions.CommandError(
            f'--graph {path}: dot failed (exit {exc.returncode}): {why}'
        ) from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise exceptions.CommandError(
            f'--graph {path}: dot failed: {" ".join(str(exc).split())}'
        ) from exc


def summary_rows(runs: Sequence[Any], *done: tuple[str, int]) -> list[Any]:
    """The runs' summary, then a row per kind deleted outside the plan
    (by OSC's own delete, after it): (kind, how many)."""
    from osc_cascade.engine.executor import RunResult

    rows = list(RunResult.merge(runs).summary())
    rows.extend((kind, '', count, 0, 0, 0, 0) for kind, count in done)
    return rows
