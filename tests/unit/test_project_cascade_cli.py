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

"""`openstack project delete --cascade` through the real OSC shell."""

import json

from tests.unit import scenarios


def test_help_shows_cascade_options(osc):
    result = osc('help', 'project', 'delete')
    assert result.code == 0
    for option in (
        '--cascade',
        '--dry-run',
        '--yes',
        '--parallel',
        '--timeout',
        '--recursive',
        '--plan-file',
        '--delete-shared',
        '--format',
    ):
        assert option in result.stdout


def test_dry_run_prints_plan_as_json_and_changes_nothing(cloud, external, osc):
    a = scenarios.full_project(cloud, 'A', external)
    result = osc(
        'project', 'delete', '--cascade', '--dry-run', 'A', '-f', 'json'
    )
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    planned = {(r['Kind'], r['ID']) for r in rows}
    assert ('identity.project', a['project']['id']) in planned
    assert ('compute.server', a['server']['id']) in planned
    assert ('block_storage.backup', a['incremental']['id']) in planned
    # nothing changed: only GETs (and the token POST) were sent
    assert cloud.changes == []
    assert cloud.exists('projects', a['project']['id'])


def test_cascade_deletes_in_dependency_order_and_keeps_external(
    cloud, external, osc
):
    a = scenarios.full_project(cloud, 'A', external)
    b = scenarios.full_project(cloud, 'B', external)
    before_b = cloud.owned_by(b['project']['id'])

    result = osc('project', 'delete', '--cascade', '--yes', 'A')

    assert result.code == 0, result.stderr
    assert cloud.owned_by(a['project']['id']) == []
    assert not cloud.exists('projects', a['project']['id'])
    # the twin and the shared external network are untouched
    assert cloud.owned_by(b['project']['id']) == before_b
    assert cloud.exists('networks', external['id'])
    # orders the fake cloud cannot enforce by itself
    order = cloud.index_of_delete
    assert order('/backups', a['incremental']['id']) < order(
        '/backups', a['full_backup']['id']
    )
    assert order('/servers', a['server']['id']) < order(
        '/volumes', a['volume']['id']
    )
    assert order('/snapshots', a['snapshot']['id']) < order(
        '/volumes', a['volume']['id']
    )


def test_columns_of_the_summary(cloud, external, osc):
    scenarios.full_project(cloud, 'A', external)
    result = osc(
        'project',
        'delete',
        '--cascade',
        '--yes',
        'A',
        '-f',
        'value',
        '-c',
        'Kind',
        '-c',
        'Failed',
    )
    assert result.code == 0, result.stderr
    assert 'compute.server 0' in result.stdout.splitlines()


def test_unknown_columns_are_refused_before_anything_changes(
    cloud, external, osc
):
    a = scenarios.full_project(cloud, 'A', external)
    result = osc('project', 'delete', '--cascade', '--yes', 'A', '-c', 'Stage')
    assert result.code != 0
    assert 'No recognized column names in Stage' in result.stderr
    assert cloud.changes == []
    assert cloud.exists('projects', a['project']['id'])


def test_column_needs_cascade(cloud, osc):
    result = osc('project', 'delete', 'A', '-c', 'Kind')
    assert result.code != 0
    assert '--column needs --cascade' in result.stderr
    assert cloud.changes == []


def test_the_dry_run_table_is_in_execution_order_and_fits_160_columns(
    cloud, external, osc
):
    scenarios.full_project(cloud, 'A', external)
    result = osc('project', 'delete', '--cascade', '--dry-run', 'A')
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 160, result.stdout
    header = [c.strip() for c in lines[1].strip('|').split('|')]
    assert header == [
        'Stage',
        'Region',
        'Action',
        'Kind',
        'ID',
        'Name',
        'After',
        'Reason',
    ]
    rows = [
        [c.strip() for c in line.strip('|').split('|')] for line in lines[3:-1]
    ]
    keys = [(int(r[0]), r[1], r[3], r[5]) for r in rows]
    assert keys == sorted(keys)
    project = rows[-1]
    assert project[3] == 'identity.project' and project[1] == ''
    assert int(project[6]) > 10  # a count: which ones is in -f json


def test_the_json_plan_keeps_the_whole_graph(cloud, external, osc):
    a = scenarios.full_project(cloud, 'A', external)
    result = osc(
        'project', 'delete', '--cascade', '--dry-run', 'A', '-f', 'json'
    )
    rows = json.loads(result.stdout)
    [project] = [r for r in rows if r['Kind'] == 'identity.project']
    assert project['Project'] == a['project']['id']
    assert len(project['After']) > 10
    assert all(':' in s for s in project['After'])  # step ids
    assert {r['Region'] for r in rows} == {'', 'RegionOne'}
    assert all(
        r['Region']
        == ('' if r['Kind'].startswith('identity.') else 'RegionOne')
        for r in rows
    )


def test_notes_are_one_line_after_the_result(cloud, external, osc):
    scenarios.full_project(cloud, 'A', external)
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()
    notes = [n for n in lines if 'not in the catalog' in n]
    assert len(notes) == 1
    assert notes[0].startswith('note: not in the catalog: ')
    assert notes[0].endswith('(their kinds are skipped)')
    # after the progress, with the result
    assert lines.index(notes[0]) > max(
        i for i, line in enumerate(lines) if line.startswith('[')
    )


def test_the_summary_separates_deletions_and_break_actions(
    cloud, external, osc
):
    scenarios.full_project(cloud, 'A', external)
    result = osc('project', 'delete', '--cascade', '--yes', 'A', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = {r['Kind']: r for r in json.loads(result.stdout)}
    router = rows['network.router']
    assert (router['Deleted'], router['Actions']) == (1, 2)
    assert router['Region'] == 'RegionOne'
    assert rows['identity.project']['Deleted'] == 1


def test_progress_json_is_one_object_per_event(cloud, external, osc):
    scenarios.full_project(cloud, 'A', external)
    result = osc(
        'project', 'delete', '--cascade', '--yes', 'A', '--progress', 'json'
    )
    assert result.code == 0, result.stderr
    records = [json.loads(line) for line in result.stderr.splitlines()]
    done = [r for r in records if r['event'] == 'done']
    assert done and all(
        r['region']
        == ('' if r['kind'].startswith('identity.') else 'RegionOne')
        for r in done
    )
    assert {'step', 'action', 'kind', 'id', 'name', 'attempt', 'seconds'} <= (
        set(done[0])
    )
    # the drain first, a round before the steps, the project last (OSC
    # deleted it: the hook's finish saw it gone)
    assert [r['event'] for r in records[:2]] == ['drain', 'round']
    assert records[-1]['event'] == 'project'
    assert records[-1]['outcome'] == 'done'
    assert 'verification' in [r for r in records if r['event'] == 'round'][-1]
    assert done[-1]['done'] <= done[-1]['total']


def test_graph_needs_the_dry_run_and_graphviz(cloud, external, osc, tmp_path):
    scenarios.full_project(cloud, 'A', external)
    target = str(tmp_path / 'plan.svg')
    result = osc(
        'project', 'delete', '--cascade', '--yes', 'A', '--graph', target
    )
    assert result.code == 1
    assert '--graph needs --dry-run' in result.stderr
    result = osc(
        'project', 'delete', '--cascade', '--dry-run', 'A', '--graph', 'x.gif'
    )
    assert result.code == 1 and '.svg, .png, .pdf' in result.stderr
    assert cloud.changes == []
