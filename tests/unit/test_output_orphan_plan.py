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

"""``orphan purge --dry-run`` shows the plan as the cascade's dry run does:
the same table, the whole graph in -f json and yaml, and -f dot."""

import json

import pytest

from osc_cascade.v1.constants import CASCADE_PLAN_COLUMNS
from tests.unit import scenarios


@pytest.fixture
def gone(cloud, external):
    """A project deleted with plain `project delete`: its resources stay."""
    project = scenarios.full_project(cloud, 'gone', external)
    cloud.db['projects'].pop(project['project']['id'])
    return project


def test_the_table_is_the_cascades(cloud, gone, osc):
    result = osc('orphan', 'purge', '--dry-run', '-f', 'csv')
    assert result.code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header == ','.join(
        f'"{c}"' for c in CASCADE_PLAN_COLUMNS if c != 'Project'
    )
    stages = [int(row.split(',')[0]) for row in rows]
    assert stages == sorted(stages) and stages[0] == 1
    # the region of each, and After a count
    server = next(r for r in rows if '"compute.server"' in r)
    assert '"RegionOne"' in server
    assert all(
        r.split(',')[6].strip('"').isdigit() or r.split(',')[6] == '""'
        for r in rows
    )
    assert cloud.changes == []


def test_json_has_the_whole_graph_and_the_owner(cloud, gone, osc):
    result = osc('orphan', 'purge', '--dry-run', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert set(rows[0]) == set(CASCADE_PLAN_COLUMNS)
    assert {r['Project'] for r in rows} == {gone['project']['id']}
    # After: the step ids each waits for
    assert any(r['After'] for r in rows)
    assert all(isinstance(r['After'], list) for r in rows)
    assert {r['Kind'] for r in rows} >= {'compute.server', 'network.network'}


def test_dot_is_the_plans_graph(cloud, gone, osc):
    result = osc('orphan', 'purge', '--dry-run', '-f', 'dot')
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == 'digraph cascade {' and lines[-1] == '}'
    assert '  subgraph cluster_RegionOne {' in lines
    assert any('->' in line for line in lines)
    assert cloud.changes == []


def test_dot_needs_the_dry_run(cloud, gone, osc):
    result = osc('orphan', 'purge', '--yes', '-f', 'dot')
    assert result.code == 1
    assert '-f dot needs --dry-run' in result.stderr
    assert cloud.changes == []


def test_notes_come_after_the_result_folded(cloud, gone, osc):
    result = osc('orphan', 'purge', '--dry-run', '--progress', 'json')
    assert result.code == 0, result.stderr
    [note] = [json.loads(line) for line in result.stderr.splitlines()]
    assert note['event'] == 'note'
    assert note['message'].startswith('not in the catalog: ')
    listed = osc('orphan', 'list')
    assert listed.code == 0, listed.stderr
    assert listed.stderr.startswith('note: not in the catalog: ')


def test_no_note_before_an_error(cloud, gone, osc):
    # refused after the search (its notes are there): the error alone
    result = osc('orphan', 'purge')  # no terminal, no --yes
    assert result.code == 1
    assert '--yes' in result.stderr
    assert 'note:' not in result.stderr
