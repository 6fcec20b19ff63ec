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

"""The docs build as this project's: a neutral theme, and every library
of the docs' builds pinned as the tests' are."""

import pathlib
import re

ROOT = pathlib.Path(__file__).parents[2]
CONFS = ['doc/source/conf.py', 'releasenotes/source/conf.py']


def _names(path):
    names = set()
    for line in (ROOT / path).read_text().splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            names.add(re.split(r'[<>=!~\[ ]', line, 1)[0].lower())
    return names


def test_no_openstack_org_dress():
    for conf in CONFS:
        text = (ROOT / conf).read_text()
        assert "html_theme = 'alabaster'" in text, conf
        assert 'openstackdocs' not in text, conf
    assert 'openstackdocstheme' not in _names('doc/requirements.txt')


def test_the_docs_libraries_are_pinned():
    pinned = {
        line.split('==', 1)[0].lower()
        for line in (ROOT / 'tools/upper-constraints.txt').read_text().split()
        if '==' in line
    }
    assert _names('doc/requirements.txt') <= pinned


def test_the_reaper_options_are_generated_from_the_code():
    page = (ROOT / 'doc/source/reaper.rst').read_text()
    assert '\n.. show-options:: osc_cascade.reaper\n' in page
    assert 'oslo_config.sphinxext' in (ROOT / CONFS[0]).read_text()
    # the namespace the directive loads is the entry point the package has
    setup = (ROOT / 'setup.cfg').read_text()
    group = setup.split('\noslo.config.opts =\n', 1)[1].split('\n\n', 1)[0]
    assert 'osc_cascade.reaper = osc_cascade.reaper.config:list_opts' in group
    # no hand-written list left beside it
    assert '``grace_period`` (300)' not in page
