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

"""OSC output formats for commands without their own."""

import argparse
import io
import json

from osc_lib import exceptions
import pytest
import yaml

from osc_cascade.v1 import output

COLUMNS = ['Stage', 'Kind', 'After']
ROWS = [(1, 'compute.server', []), (2, 'network.port', ['a', 'b'])]


def parser(with_dot=False):
    p = argparse.ArgumentParser()
    output.add_format_options(p, with_dot=with_dot)
    return p


def emit(*argv):
    args = parser(with_dot=True).parse_args(list(argv))
    out = io.StringIO()
    output.emit(args, COLUMNS, ROWS, out)
    return out.getvalue()


def test_formats_offered():
    choices = parser()._option_string_actions['-f'].choices
    assert {'table', 'json', 'yaml', 'value', 'csv'} <= set(choices)
    assert output.DOT not in choices
    assert (
        output.DOT
        in parser(with_dot=True)._option_string_actions['--format'].choices
    )
    assert parser().parse_args([]).formatter == 'table'


def test_unknown_format_is_refused():
    with pytest.raises(SystemExit):
        parser().parse_args(['-f', 'dot'])


def test_json_keeps_lists():
    assert json.loads(emit('-f', 'json')) == [
        {'Stage': 1, 'Kind': 'compute.server', 'After': []},
        {'Stage': 2, 'Kind': 'network.port', 'After': ['a', 'b']},
    ]


def test_yaml_keeps_lists():
    assert yaml.safe_load(emit('-f', 'yaml'))[1]['After'] == ['a', 'b']


def test_value_and_table_join_lists():
    assert emit('-f', 'value').splitlines() == [
        '1 compute.server ',
        '2 network.port a, b',
    ]
    table = emit()
    assert '| a, b ' in table and "['a'" not in table


def test_csv_columns():
    text = emit('-f', 'csv')
    assert text.splitlines()[0] == '"Stage","Kind","After"'
    assert '"a, b"' in text


def test_formatter_options_are_added():
    # the formatters' own options: --noindent of json, --quote of csv
    args = parser().parse_args(['-f', 'json', '--noindent'])
    out = io.StringIO()
    output.emit(args, COLUMNS, ROWS, out)
    assert json.loads(out.getvalue())[0]['Kind'] == 'compute.server'
    assert len(out.getvalue().strip().splitlines()) == 1
    assert emit('-f', 'csv', '--quote', 'none').splitlines()[0] == (
        'Stage,Kind,After'
    )


def test_columns_are_chosen_as_cliff_does():
    # the table's order, not the order asked; unknown names ignored
    assert emit(
        '-f', 'value', '-c', 'Kind', '-c', 'Stage', '-c', 'Nope'
    ).splitlines() == ['1 compute.server', '2 network.port']
    assert json.loads(emit('-f', 'json', '--column', 'After')) == [
        {'After': []},
        {'After': ['a', 'b']},
    ]


def test_no_known_column_is_a_clear_error():
    with pytest.raises(
        exceptions.CommandError,
        match="Recognized columns are Stage, Kind, After",
    ):
        emit('-c', 'Nope')


def test_a_stack_name_is_counted_in_a_table_and_listed_for_machines():
    made = [
        {'type': 'OS::Nova::Server', 'id': 's-1', 'name': 'vm'},
        {'type': 'OS::Neutron::Net', 'id': 'n-1', 'name': 'net'},
    ]
    rows = [(1, output.RemovesToo('app', made), [])]

    def emitted(*argv):
        args = parser().parse_args(list(argv))
        out = io.StringIO()
        output.emit(args, ['Stage', 'Name', 'After'], rows, out)
        return out.getvalue()

    assert '| app (1 OS::Neutron::Net, 1 OS::Nova::Server) |' in emitted()
    removes = {'name': 'app', 'removes': made}
    assert json.loads(emitted('-f', 'json'))[0]['Name'] == removes
    assert yaml.safe_load(emitted('-f', 'yaml'))[0]['Name'] == removes
