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
        '--delete-shared-images',
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
