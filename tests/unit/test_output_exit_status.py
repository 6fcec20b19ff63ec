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
the guide (doc/source/user/exit-codes.rst)."""

import pathlib
import re

import pytest

from osc_cascade.v1.common import (
    COMMON_EXIT_STATUSES,
    EXIT_ORPHANS_FOUND,
    EXIT_OWNERS_UNCONFIRMED,
    READ_EXIT_STATUSES,
    exit_status_text,
)

#: each command and its statuses, as doc/source/user/exit-codes.rst has
#: them: those that stop politely on a signal exit 130 or 143
COMMANDS = {
    ('project', 'delete'): COMMON_EXIT_STATUSES,
    ('compute', 'service', 'delete'): COMMON_EXIT_STATUSES,
    ('cluster', 'force-delete'): COMMON_EXIT_STATUSES,
    ('cluster', 'stuck', 'list'): READ_EXIT_STATUSES,
    ('cluster', 'leftovers', 'delete'): COMMON_EXIT_STATUSES,
    ('orphan', 'purge'): COMMON_EXIT_STATUSES,
    ('project', 'drain'): READ_EXIT_STATUSES,
    ('project', 'restore'): READ_EXIT_STATUSES,
    ('project', 'sweep'): COMMON_EXIT_STATUSES,
}
#: what the terminal would show of reStructuredText
_MARKUP = re.compile(r'``|={4,}|:\w+:`')


@pytest.mark.parametrize('command', COMMANDS, ids=' '.join)
def test_every_commands_help_ends_with_its_own_statuses(osc, command):
    result = osc('help', *command)
    assert result.code == 0, result.stderr
    dry_run = '--dry-run' in result.stdout
    # printed line for line, not filled into one paragraph
    assert result.stdout.rstrip().endswith(
        exit_status_text(COMMANDS[command], dry_run)
    )
    # the statuses of orphan list --exit-code are its own
    assert '--exit-code' not in result.stdout
    assert not re.search(r'^  [34] ', result.stdout, re.M)


def test_orphan_list_help_has_its_exit_code_statuses(osc):
    result = osc('help', 'orphan', 'list')
    assert result.stdout.rstrip().endswith(
        exit_status_text(
            (0, 1, 2, EXIT_ORPHANS_FOUND, EXIT_OWNERS_UNCONFIRMED)
        )
    )


@pytest.mark.parametrize(
    'command', [*COMMANDS, ('orphan', 'list')], ids=' '.join
)
def test_help_is_plain_text(osc, command):
    text = osc('help', *command).stdout
    # a hook's part: OSC's own help of compute service delete has ``
    hook = command in (('project', 'delete'), ('compute', 'service', 'delete'))
    ours = text[text.index('(osc-cascade)') :] if hook else text
    assert not _MARKUP.search(ours), _MARKUP.search(ours)
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_guide_has_every_status():
    # the guide's first table (README.rst links to it)
    page = pathlib.Path(__file__).parents[2] / 'doc/source/user/exit-codes.rst'
    table = page.read_text().split('\nstatus  meaning\n', 1)[1]
    table = table.split('\nPer command:\n', 1)[0]
    rows = {
        line.split()[0] for line in table.splitlines() if line[:1].isdigit()
    }
    assert rows == {
        '0',
        '1',
        '2',
        str(EXIT_ORPHANS_FOUND),
        str(EXIT_OWNERS_UNCONFIRMED),
        '130',
    }


@pytest.mark.parametrize(
    'command', [*COMMANDS, ('orphan', 'list')], ids=' '.join
)
def test_help_fits_a_screen(osc, monkeypatch, command):
    # issue #32: project delete's help was 164 lines at 80 columns
    monkeypatch.setenv('COLUMNS', '80')
    assert len(osc('help', *command).stdout.splitlines()) <= 70
