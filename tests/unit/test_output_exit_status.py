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

"""One exit-status table: at the end of every command's --help, and in
README.rst word for word."""

import pathlib

import pytest

from osc_cascade.v1.common import (
    EXIT_ORPHANS_FOUND,
    EXIT_OWNERS_UNCONFIRMED,
    EXIT_STATUS_TABLE,
)

COMMANDS = [
    ('project', 'delete'),
    ('compute', 'service', 'delete'),
    ('cluster', 'force-delete'),
    ('cluster', 'stuck', 'list'),
    ('orphan', 'list'),
    ('orphan', 'purge'),
    ('project', 'drain'),
    ('project', 'restore'),
    ('project', 'sweep'),
]


@pytest.mark.parametrize('command', COMMANDS, ids=' '.join)
def test_every_commands_help_ends_with_the_table_as_it_is(osc, command):
    result = osc('help', *command)
    assert result.code == 0, result.stderr
    # printed line for line, not filled into one paragraph
    assert result.stdout.rstrip().endswith(
        'Exit status:\n\n' + EXIT_STATUS_TABLE.rstrip()
    )


def test_the_readme_has_the_same_table():
    readme = pathlib.Path(__file__).parents[2] / 'README.rst'
    assert EXIT_STATUS_TABLE in readme.read_text()


def test_the_table_has_the_codes_the_commands_return():
    rows = {
        line.split()[0]
        for line in EXIT_STATUS_TABLE.splitlines()
        if line[:1].isdigit()
    }
    assert rows == {
        '0',
        '1',
        '2',
        str(EXIT_ORPHANS_FOUND),
        str(EXIT_OWNERS_UNCONFIRMED),
        '130',
    }
