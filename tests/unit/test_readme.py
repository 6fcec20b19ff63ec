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

"""README.rst is the front door: short, its links lead somewhere, and the
test command it gives is the one CI runs."""

import configparser
import pathlib
import re

ROOT = pathlib.Path(__file__).parents[2]
README = (ROOT / 'README.rst').read_text()


def _section(title):
    return README.split(f'\n{title}\n{"=" * len(title)}\n', 1)[1].split(
        '\n=====', 1
    )[0]


def test_the_readme_is_short():
    assert len(README.splitlines()) < 200


def test_every_link_of_the_readme_leads_to_a_file():
    targets = re.findall(r'<([\w./-]+\.rst)>`_', README)
    assert len(targets) >= 10
    missing = [t for t in targets if not (ROOT / t).is_file()]
    assert not missing


def test_ci_runs_the_test_command_the_readme_gives():
    """The README's ``tox``: CI runs it, or its envlist in order over
    several ``tox -e`` calls (the minicloud's bring-up under the first)."""
    block = _section('Run the tests').split('::\n', 1)[1]
    command = block.strip().splitlines()[0].strip()
    assert command == 'tox'
    ci = [line.strip() for line in (ROOT / '.ci/run').read_text().splitlines()]
    if command in ci:
        return
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / 'tox.ini')
    envlist = config['tox']['envlist'].split(',')
    ran = [
        env
        for line in ci
        if line.startswith('tox -e ')
        for env in line.split()[2].split(',')
    ]
    assert ran[: len(envlist)] == envlist


def test_the_readme_installs_under_the_constraints_try_cascade_uses():
    install = _section('Install')
    assert 'pip install -c tools/upper-constraints.txt .' in install
    assert '-c tools/upper-constraints.txt' in (
        (ROOT / 'tools/try-cascade').read_text()
    )
