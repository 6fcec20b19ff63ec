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

"""v1.table: a table printed character for character as cliff's table
formatter prints it, whatever its cells; only the plain ones faster."""

import argparse
import io
from unittest import mock

from cliff import columns as cliff_columns
from cliff.formatters import table as cliff_table
from hypothesis import given, settings
from hypothesis import strategies as st
import prettytable
import pytest

from osc_cascade.v1 import table


class Made(cliff_columns.FormattableColumn):
    def human_readable(self):
        return f'{self._value} (2 OS::Nova::Server)'


def args(**over):
    return argparse.Namespace(
        **{'max_width': 0, 'fit_width': False, 'print_empty': False, **over}
    )


def both(columns, rows, parsed_args=None):
    parsed_args = parsed_args or args()
    theirs, ours = io.StringIO(), io.StringIO()
    formatter = cliff_table.TableFormatter()
    formatter.emit_list(columns, rows, theirs, parsed_args)
    table.emit_list(formatter, columns, rows, ours, parsed_args)
    return theirs.getvalue(), ours.getvalue()


def test_a_plans_rows_print_as_cliff_prints_them():
    columns = ['Stage', 'Region', 'Action', 'Kind', 'ID', 'Name', 'After']
    rows = [
        (1, 'RegionOne', 'delete', 'network.port', 'p1', 'port-0', ''),
        (12, '', 'keep', 'identity.project', 'a' * 40, Made('stk'), '3'),
        (3, 'RegionTwo', 'remove_router_interface', 'x', 'y', '', '1'),
    ]
    theirs, ours = both(columns, rows)
    assert ours == theirs
    assert '|     1 | RegionOne |' in ours  # numbers right, text left


def test_rows_are_justified_here_not_by_prettytable():
    rows = [(i, f'name-{i}') for i in range(50)]
    added = []
    real = prettytable.PrettyTable.add_row

    def counted(self, row, **kwargs):
        added.append(list(row))
        return real(self, row, **kwargs)

    out = io.StringIO()
    with mock.patch.object(prettytable.PrettyTable, 'add_row', counted):
        table.emit_list(
            cliff_table.TableFormatter(), ['N', 'Name'], rows, out, args()
        )
    # one row for the frame: the widest cell of each column
    assert added == [['10', 'name-10']]
    assert out.getvalue() == both(['N', 'Name'], rows)[0]


@pytest.mark.parametrize(
    ('cell', 'why'),
    [
        ('two\nlines', 'a cell of several lines'),
        ('t\tab', 'a tab'),
        ('caf\u00e9', 'not ASCII'),
        ('\u6f22\u5b57', 'wide characters'),
        ('\x1b[31mred\x1b[0m', 'an escape sequence'),
        ('cr\rlf', 'a carriage return'),
    ],
)
def test_other_cells_are_cliffs_to_print(cell, why):
    formatter = mock.Mock(wraps=cliff_table.TableFormatter())
    formatter.ALIGNMENTS = cliff_table.TableFormatter.ALIGNMENTS
    out = io.StringIO()
    rows = [('plain', 1), (cell, 2)]
    table.emit_list(formatter, ['A', 'B'], rows, out, args())
    assert formatter.emit_list.called, why
    theirs, ours = both(['A', 'B'], rows)
    assert ours == theirs


@pytest.mark.parametrize(
    'parsed_args',
    [args(max_width=30), args(fit_width=True), args(print_empty=True)],
)
def test_a_fitted_or_empty_table_is_cliffs_to_print(parsed_args):
    rows = [('a' * 40, 'b' * 40)]
    theirs, ours = both(['A', 'B'], rows, parsed_args)
    assert ours == theirs
    theirs, ours = both(['A', 'B'], [], parsed_args)
    assert ours == theirs


def test_on_a_terminal_the_table_is_cliffs_to_fit():
    formatter = mock.Mock(wraps=cliff_table.TableFormatter())
    with mock.patch('sys.stdout.isatty', return_value=True):
        table.emit_list(formatter, ['A'], [('x',)], io.StringIO(), args())
    assert formatter.emit_list.called


def test_a_row_of_the_wrong_length_is_refused_as_cliff_refuses_it():
    with pytest.raises(ValueError):
        both(['A', 'B'], [('x',)])


printable = st.text(
    st.characters(min_codepoint=32, max_codepoint=126), max_size=12
)
anything = st.text(max_size=6)
cell = st.one_of(
    printable,
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.none(),
    st.booleans(),
    anything,
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.text(
                    st.characters(min_codepoint=65, max_codepoint=90),
                    min_size=1,
                    max_size=8,
                ),
                min_size=n,
                max_size=n,
                unique=True,
            ),
            st.lists(
                st.lists(cell, min_size=n, max_size=n), min_size=1, max_size=8
            ),
        )
    )
)
def test_any_table_prints_as_cliff_prints_it(table_data):
    columns, rows = table_data
    theirs, ours = both(columns, rows)
    assert ours == theirs
