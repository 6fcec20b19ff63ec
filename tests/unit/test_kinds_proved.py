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

"""The table of the kinds proved on real services
(doc/source/contributor/kinds-proved.yaml) holds true: a row for every
registered kind, only functional tests that exist, 2024.1 only where tox's
``functional-older`` runs one of the row's tests, "newest" only where a
functional tox environment does, and CI's column as CI's markers select;
and CI brings up every optional service whose tests it selects.
"""

import ast
import configparser
import pathlib
import re
import tomllib

import pytest
import yaml

from osc_cascade.kinds import registry

ROOT = pathlib.Path(__file__).parents[2]
TABLE = ROOT / 'doc/source/contributor/kinds-proved.yaml'
FUNCTIONAL = ROOT / 'tests/functional'
OLDER = '2024.1'


def rows():
    return yaml.safe_load(TABLE.read_text())


def tox_envs():
    """{env: (marker expression, default files, deselected)} of tox's
    functional environments."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(ROOT / 'tox.ini')
    envs = {}
    for section in parser.sections():
        if not section.startswith('testenv:functional'):
            continue
        command = parser[section]['commands'].replace('\\\n', ' ')
        # an environment of several pytest calls selects what any selects
        expr = ' or '.join(
            f'({e})' for e in re.findall(r'-m "([^"]+)"', command)
        )
        posargs = re.search(r'\{posargs:([^}]*)\}', command)
        files = posargs[1].split() if posargs else ['tests/functional']
        deselected = set(re.findall(r'--deselect (\S+)', command))
        envs[section.split(':', 1)[1]] = (expr, files, deselected)
    return envs


def selects(expr, markers):
    """pytest's -m: ``expr`` (and, or, not, names) over ``markers``."""
    words = re.sub(
        r'[A-Za-z_]\w*',
        lambda m: (
            m[0] if m[0] in ('and', 'or', 'not') else str(m[0] in markers)
        ),
        expr,
    )
    return eval(words, {'__builtins__': {}})  # only True/False/and/or/not


def _marks(decorators):
    """The names of ``pytest.mark.NAME`` (called or not) in ``decorators``."""
    found = set()
    for node in decorators:
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Attribute)
                and sub.value.attr == 'mark'
            ):
                found.add(sub.attr)
    return found


def functional_tests():
    """{'FILE::TEST': markers} of every test of tests/functional."""
    tests = {}
    for path in sorted(FUNCTIONAL.glob('test_*.py')):
        tree = ast.parse(path.read_text())
        module = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                getattr(t, 'id', None) == 'pytestmark' for t in node.targets
            ):
                module |= _marks([node.value])
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith(
                'test_'
            ):
                marks = module | _marks(node.decorator_list)
                tests[f'{path.name}::{node.name}'] = marks
    return tests


def params(test_id):
    """A test ID without its parameters, and them ('' for none)."""
    name, _, rest = test_id.partition('[')
    return name, rest.rstrip(']')


def runs_in(env, test_id, tests, envs):
    expr, files, deselected = envs[env]
    name, _ = params(test_id)
    path = f'tests/functional/{name.split("::")[0]}'
    in_files = any(path == f or path.startswith(f + '/') for f in files)
    return (
        in_files
        and f'tests/functional/{name}' not in deselected
        and f'tests/functional/{test_id}' not in deselected
        and selects(expr, tests[name])
    )


def test_every_registered_kind_has_one_row():
    kinds = [r['kind'] for r in rows()]
    assert len(kinds) == len(set(kinds)), 'a kind has two rows'
    assert set(kinds) == set(registry.CLASSES), (
        'rows without a kind: '
        f'{sorted(set(kinds) - set(registry.CLASSES))}; '
        f'kinds without a row: {sorted(set(registry.CLASSES) - set(kinds))}'
    )
    assert kinds == sorted(kinds), 'keep the rows in the order of the kinds'


def test_every_row_names_tests_that_exist():
    tests = functional_tests()
    for row in rows():
        for test_id in row['tests']:
            name, param = params(test_id)
            assert name in tests, f'{row["kind"]}: no test {test_id}'
            if param:
                source = (FUNCTIONAL / name.split('::')[0]).read_text()
                assert f"'{param}'" in source, (row['kind'], test_id)


def test_a_row_is_proved_by_its_tests_or_says_why_not():
    for row in rows():
        assert set(row['releases']) <= {'newest', OLDER}, row['kind']
        if row['releases']:
            assert row['tests'], f'{row["kind"]}: a release without a test'
            assert 'newest' in row['releases'], row['kind']
            assert 'reason' not in row, row['kind']
        else:
            assert row.get('reason', '').strip(), (
                f'{row["kind"]} is not proved and says not why'
            )


def test_releases_and_ci_are_what_tox_runs():
    tests, envs = functional_tests(), tox_envs()
    newest = [e for e in envs if e != 'functional-older']
    for row in rows():
        ran = {
            env
            for env in envs
            for test_id in row['tests']
            if runs_in(env, test_id, tests, envs)
        }
        if OLDER in row['releases']:
            assert 'functional-older' in ran, (
                f'{row["kind"]} claims {OLDER}, which tox -e '
                f'functional-older runs for none of {row["tests"]}'
            )
        if 'newest' in row['releases']:
            assert ran & set(newest), (
                f'{row["kind"]}: no functional tox environment runs '
                f'{row["tests"]}'
            )
        # CI runs tox's default functional environment and functional-older
        assert row['ci'] == bool(ran & {'functional', 'functional-older'}), (
            row['kind']
        )


@pytest.mark.parametrize(
    ('claim', 'test_id'),
    [
        (OLDER, 'test_project_cascade.py::test_unknown_project'),
        (
            OLDER,
            'test_real_barbican.py::'
            'test_a_members_cascade_deletes_its_projects_barbican_resources',
        ),
        (
            OLDER,
            'test_real_designate.py::'
            'test_a_served_zone_goes_with_its_project_and_its_offer',
        ),
    ],
    ids=['not-in-its-files', 'deselected', 'marked-designate'],
)
def test_the_older_check_refuses_what_functional_older_does_not_run(
    claim, test_id
):
    # the three ways tox.ini leaves a test out of the 2024.1 run
    assert not runs_in(
        'functional-older', test_id, functional_tests(), tox_envs()
    )


def test_the_checks_see_what_functional_older_runs():
    assert runs_in(
        'functional-older',
        'test_cascade_all_services.py::'
        'test_the_cascade_takes_every_service_and_nothing_of_the_twin',
        functional_tests(),
        tox_envs(),
    )
    assert not runs_in(
        'functional-magnum',
        'test_real_mistral.py::test_a_projects_workflows_and_triggers_go',
        functional_tests(),
        tox_envs(),
    )
    assert not runs_in(
        'functional-older',
        'test_real_manila.py::'
        'test_a_projects_shares_and_what_holds_them_go_with_it',
        functional_tests(),
        tox_envs(),
    )


def test_ci_brings_up_every_optional_service_its_tests_need():
    """A service's marker (pyproject's) names it; .ci/run's MINICLOUD_WITH
    must bring up each one tox's functional environment selects, or CI
    fails its tests (CI is set: they never skip)."""
    markers = tomllib.loads((ROOT / 'pyproject.toml').read_text())['tool'][
        'pytest'
    ]['ini_options']['markers']
    services = {m.split(':')[0] for m in markers} - {
        'functional',
        'disturbs_cloud',
    }
    [brought] = re.findall(
        r'^export MINICLOUD_WITH=(\S+)$',
        (ROOT / '.ci/run').read_text(),
        re.MULTILINE,
    )
    expr = tox_envs()['functional'][0]
    selected = {s for s in services if selects(expr, {'functional', s})}
    assert selected == services, 'tox -e functional leaves some out'
    assert brought == 'all' or selected <= set(brought.split(',')), brought


def test_the_services_releases_are_those_the_minicloud_installs():
    """A row's "Nova 34" is the major version (Swift's: major.minor) that
    tools/minicloud-constraints.txt pins: the table follows the cloud."""
    pins = dict(
        line.split('==', 1)
        for line in (ROOT / 'tools/minicloud-constraints.txt')
        .read_text()
        .split()
        if '==' in line
    )
    for row in rows():
        for name, version in re.findall(
            r'([A-Za-z][\w-]*) (\d+(?:\.\d+)?)', row['service']
        ):
            pin = pins.get(name.lower()) or pins[f'openstack-{name.lower()}']
            parts = len(version.split('.'))
            assert '.'.join(pin.split('.')[:parts]) == version, (
                f'{row["kind"]}: {name} {version}, the minicloud runs {pin}'
            )
