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

"""The table of every resource kind and the real service it was proved on
(issue 31), from ``doc/source/contributor/kinds-proved.yaml``: the
``kinds-proved`` directive renders it, with its totals, where a page
says::

    .. kinds-proved:: kinds-proved.yaml

The rows are the data; tests/unit/test_kinds_proved.py holds them true to
the registry, the functional tests and tox's ``functional-older``.
"""

from __future__ import annotations

import os
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from osc_cascade_docs import plain_text
from sphinx.util.nodes import nested_parse_with_titles
import yaml

#: the release CI's older run is at (tox.ini, functional-older)
OLDER = '2024.1'


def load(path: str) -> list[dict[str, Any]]:
    with open(path, encoding='utf-8') as f:
        return yaml.safe_load(f)


def totals(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many kinds, proved on a real service, on the older release
    too, and not proved."""
    proved = [r for r in rows if r['releases']]
    return {
        'kinds': len(rows),
        'proved': len(proved),
        'older': sum(OLDER in r['releases'] for r in proved),
        'not proved': len(rows) - len(proved),
    }


def _cell(lines: list[str]) -> list[str]:
    """A list-table cell: its first line after the bullet, the others
    indented under it."""
    lines = lines or ['']
    return [lines[0], *(f'  {line}' if line else '' for line in lines[1:])]


def render(rows: list[dict[str, Any]]) -> list[str]:
    """The totals and the table, as reStructuredText lines."""
    count = totals(rows)
    out = [
        f'{count["kinds"]} kinds: {count["proved"]} proved on a real '
        f'service ({count["older"]} of them on {OLDER} too), '
        f'{count["not proved"]} not proved, each with its reason.',
        '',
        '.. list-table::',
        '   :header-rows: 1',
        '   :widths: 16 16 30 8 5 25',
        '',
    ]
    header = [
        'Kind',
        'Service, backend',
        'Functional tests (tests/functional)',
        'Releases',
        'CI',
        'What the real service showed that the fake did not; or why not '
        'proved',
    ]
    table = [[[h] for h in header]]
    for row in rows:
        if row['releases']:
            note = plain_text(row.get('showed') or '') or '-'
        else:
            note = 'Not proved: ' + plain_text(row['reason'])
        table.append(
            [
                [f'``{row["kind"]}``'],
                [plain_text(f'{row["service"]}; {row["backend"]}')],
                [f'``{t}``' for t in row['tests']] or ['-'],
                [', '.join(row['releases']) or 'none'],
                ['yes' if row['ci'] else 'no'],
                [note],
            ]
        )
    for cells in table:
        for i, cell in enumerate(cells):
            lead = '   * - ' if i == 0 else '     - '
            first, *rest = _cell(
                [f'| {line}' for line in cell] if len(cell) > 1 else cell
            )
            out.append(lead + first)
            out.extend(f'       {line}' for line in rest)
    return out


class KindsProved(Directive):
    """``.. kinds-proved:: FILE``: FILE's table, relative to the page."""

    required_arguments = 1

    def run(self) -> list[Any]:
        env = self.state.document.settings.env
        source = os.path.join(
            os.path.dirname(env.doc2path(env.docname)), self.arguments[0]
        )
        env.note_dependency(source)
        content = StringList(render(load(source)), source=source)
        holder = nodes.section()
        holder.document = self.state.document
        nested_parse_with_titles(self.state, content, holder)
        return holder.children


def setup(app: Any) -> dict[str, Any]:
    app.add_directive('kinds-proved', KindsProved)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
