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

"""tools/check-structure: the package's shape, held as tox -e pep8 holds
it, and each rule shown to fail on a tree that breaks it."""

import importlib.machinery
import importlib.util
import pathlib

import pytest

TOOLS = pathlib.Path(__file__).parents[2] / 'tools'


def _load():
    loader = importlib.machinery.SourceFileLoader(
        'check_structure', str(TOOLS / 'check-structure')
    )
    spec = importlib.util.spec_from_loader('check_structure', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


structure = _load()

DOC = '"""What it is for."""\n'


def _tree(tmp_path, files):
    root = tmp_path / 'osc_cascade'
    base = {
        '__init__.py': DOC,
        'api/__init__.py': DOC,
        'engine/__init__.py': DOC,
        'kinds/__init__.py': DOC,
        'workflows/__init__.py': DOC,
        'v1/__init__.py': DOC,
        'reaper/__init__.py': DOC,
    }
    for name, text in {**base, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_this_checkout_has_its_shape():
    assert structure.check(TOOLS.parent / 'osc_cascade') == []


def test_a_clean_tree_passes(tmp_path):
    root = _tree(
        tmp_path,
        {
            'engine/resource.py': 'X = 1\n',
            'engine/errors.py': 'X = 1\n',
            'api/keystone.py': 'from osc_cascade.engine import errors\n',
            'kinds/base.py': 'from osc_cascade.engine.resource import X\n',
            'engine/executor.py': 'from osc_cascade.kinds import base\n',
            'workflows/cascade.py': 'from osc_cascade.api import keystone\n',
            'v1/project.py': 'from osc_cascade.workflows import cascade\n',
        },
    )
    assert structure.check(root) == []


def test_a_module_over_600_lines_fails(tmp_path):
    root = _tree(tmp_path, {'kinds/network.py': 'x = 1\n' * 601})
    assert structure.check(root) == [
        'osc_cascade/kinds/network.py: 601 lines, over 600: it holds more '
        'than one concern; split it'
    ]


def test_600_lines_pass(tmp_path):
    root = _tree(tmp_path, {'kinds/network.py': 'x = 1\n' * 600})
    assert structure.check(root) == []


def test_a_package_without_its_docstring_fails(tmp_path):
    root = _tree(tmp_path, {'kinds/network/__init__.py': '# licence\n'})
    assert structure.check(root) == [
        'osc_cascade/kinds/network/__init__.py: a package says in its '
        '__init__ docstring what it is for and what it may import'
    ]


@pytest.mark.parametrize(
    'importer,code,layer,target',
    [
        (
            'kinds/compute.py',
            'from osc_cascade.engine import executor\n',
            'kinds',
            'osc_cascade.engine.executor',
        ),
        (
            'engine/resource.py',
            'from osc_cascade.kinds import base\n',
            'model',
            'osc_cascade.kinds',
        ),
        (
            'workflows/actor.py',
            'def hold():\n    from osc_cascade.reaper import lock\n',
            'workflows',
            'osc_cascade.reaper.lock',
        ),
        (
            'api/http.py',
            'import osc_cascade.workflows.cascade\n',
            'api',
            'osc_cascade.workflows.cascade',
        ),
    ],
)
def test_a_lower_layer_importing_a_higher_one_fails(
    tmp_path, importer, code, layer, target
):
    files = {
        importer: code,
        'reaper/lock.py': 'X = 1\n',
        'engine/executor.py': 'X = 1\n',
    }
    problems = structure.check(_tree(tmp_path, files))
    line = code.count('\n')
    assert problems == [
        f'osc_cascade/{importer}:{line}: {layer} imports {target} of a '
        f'higher layer ({structure.layer_of(target)[1]})'
    ]


def test_a_command_calling_the_api_layer_fails(tmp_path):
    root = _tree(
        tmp_path,
        {
            'api/keystone.py': 'X = 1\n',
            'v1/project_drain.py': 'from osc_cascade.api import keystone\n',
        },
    )
    assert structure.check(root) == [
        'osc_cascade/v1/project_drain.py:1: osc_cascade.v1.project_drain '
        'may not import osc_cascade.api.keystone'
    ]


def test_relative_imports_are_resolved(tmp_path):
    root = _tree(
        tmp_path,
        {
            'workflows/x.py': 'X = 1\n',
            'kinds/compute.py': 'from ..workflows import x\n',
        },
    )
    assert structure.check(root) == [
        'osc_cascade/kinds/compute.py:1: kinds imports '
        'osc_cascade.workflows.x of a higher layer (workflows)'
    ]


def test_the_command_exits_non_zero_on_a_problem(tmp_path, capsys):
    root = _tree(tmp_path, {'v1/__init__.py': ''})
    assert structure.main([str(root)]) == 1
    assert 'osc_cascade/v1/__init__.py' in capsys.readouterr().out
    assert structure.main([str(_tree(tmp_path / 'ok', {}))]) == 0
