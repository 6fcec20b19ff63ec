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

"""`openstack cluster force-delete` and `cluster stuck list` through the
real OSC shell."""

import argparse
import datetime
import json
import os
import re

import pytest
import yaml

from osc_cascade.v1 import cluster
from osc_cascade.workflows import clusters
from osc_cascade.workflows.clusters import stuck
from tests.unit import scenarios
from tests.unit.fakes.clock import patch_wall_clock
from tests.unit.fakes.clouds import FakeHeatCloud
from tests.unit.test_cluster_force_delete import k8s_stack

NOW = datetime.datetime(2026, 11, 3, 10, 0, tzinfo=datetime.UTC)
#: the stuck sweep of what is a day old
SWEEP = ('cluster', 'force-delete', '--stuck', '--older-than', '24h')


@pytest.fixture
def virtual_time(monkeypatch):
    """The shell's clock, a fake one that lets the other threads run at each
    sleep, as test_cluster_force_delete's does: without, a leftover
    subnet's "in use" retries at no cost in time could spend their attempts
    before the server delete that frees it ran (CI once saw 3 leftovers
    deleted of 5 in test_resume_from_a_manifest_alone)."""
    return patch_wall_clock(monkeypatch, yields=True)


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(stuck, 'utcnow', lambda: NOW)
    with FakeHeatCloud() as c:
        yield c


def magnum(cloud, name='k8s', **cluster_args):
    project = scenarios.project(cloud, name + '-tenant')
    built = k8s_stack(cloud, project['id'], name=name + '-stack')
    built['cluster'] = cloud.magnum_cluster(
        name, project['id'], built['stack'], **cluster_args
    )
    return built


def deleting(cloud, name, updated='2026-11-01T10:00:00+00:00'):
    """A Magnum cluster being deleted since ``updated``, its stack's delete
    hanging."""
    built = magnum(cloud, name, status='DELETE_IN_PROGRESS', updated=updated)
    cloud.delete_stack(built['stack'])
    return built


def test_help_force_delete(osc):
    result = osc('help', 'cluster', 'force-delete')
    assert result.code == 0
    for option in (
        '--stack',
        '--stuck',
        '--older-than',
        '--grace',
        '--wait',
        '--manifest',
        '--delete-leftovers',
        '--dry-run',
        '--yes',
        '--parallel',
        '--timeout',
        '--format',
        'enable_stack_abandon',
    ):
        assert option in result.stdout, option


def test_help_stuck_list(osc):
    result = osc('help', 'cluster', 'stuck', 'list')
    assert result.code == 0
    assert '--older-than' in result.stdout and '--stack' in result.stdout
    assert '--include-updating' in result.stdout


def unwrapped(text):
    return ' '.join(text.split())


def test_help_names_the_states_that_stuck_takes(osc):
    # the states are said once, by the list; force-delete points to it
    text = unwrapped(osc('help', 'cluster', 'stuck', 'list').stdout)
    for state in [*sorted(clusters.NOT_UPDATING), 'DELETE_FAILED']:
        assert state in text, state
    for state in sorted(clusters.SAHARA_UPDATING):
        assert state in text, state
    for action in ('UPDATE', 'ROLLBACK', 'RESUME', 'SNAPSHOT', 'CHECK'):
        assert action in text, action
    assert 'CREATE_IN_PROGRESS, DELETE_IN_PROGRESS or DELETE_FAILED' in text
    forced = unwrapped(osc('help', 'cluster', 'force-delete').stdout)
    assert "What 'cluster stuck list' lists" in forced
    assert 'for this long (with --stuck)' in forced


def test_stuck_without_older_than_is_refused_in_one_line(cloud, osc):
    old = deleting(cloud, 'old')
    for argv in (('--stuck', '--yes'), ('--stuck', '--dry-run')):
        result = osc('cluster', 'force-delete', *argv)
        assert result.code == 1
        assert result.stderr.strip() == (
            '--stuck needs --older-than <age> (such as 24h): a force-delete '
            'assumes no age.'
        )
    assert cloud.changes == []
    assert cloud.exists('stacks', old['stack']['id'])


def test_updating_clusters_are_taken_only_when_asked(cloud, osc):
    busy = magnum(
        cloud,
        'busy',
        status='UPDATE_IN_PROGRESS',
        updated='2026-11-01T10:00:00+00:00',
    )
    deleting(cloud, 'stuck')
    listed = osc('cluster', 'stuck', 'list', '-f', 'json')
    assert [r['Name'] for r in json.loads(listed.stdout)] == ['stuck']

    result = osc(*SWEEP, '--yes', '-f', 'json')

    assert result.code == 0, result.stderr
    assert [r['Cluster'] for r in json.loads(result.stdout)] == ['stuck']
    assert cloud.exists('stacks', busy['stack']['id'])
    assert busy['cluster']['status'] == 'UPDATE_IN_PROGRESS'

    listed = osc(
        'cluster', 'stuck', 'list', '--include-updating', '-f', 'json'
    )
    assert [r['Name'] for r in json.loads(listed.stdout)] == ['busy']
    shown = osc(*SWEEP, '--include-updating', '-f', 'json')
    assert shown.code == 0, shown.stderr
    assert {r['Cluster'] for r in json.loads(shown.stdout)} == {'busy'}


def test_dry_run_shows_what_is_left_behind_and_changes_nothing(cloud, osc):
    built = magnum(cloud)
    result = osc(
        'cluster',
        'force-delete',
        'k8s',
        '--dry-run',
        '--delete-leftovers',
        '-f',
        'json',
    )
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    by_id = {r['Physical ID']: r for r in rows}
    assert by_id[built['server']['id']]['Action'] == (
        'leave behind, then delete'
    )
    assert (
        by_id[built['server']['id']]['Stack'] == (built['group']['stack_name'])
    )
    assert len(rows) == 6
    assert cloud.changes == []
    assert os.listdir('.') == []


def test_force_delete_prints_the_outcome(cloud, osc):
    built = magnum(cloud)
    result = osc(
        'cluster',
        'force-delete',
        'k8s',
        '--yes',
        '--wait',
        '--grace',
        '30',
        '-f',
        'json',
    )
    assert result.code == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row['Result'] == 'abandoned'
    assert row['Record'] == 'gone'
    assert row['Left Behind'] == 6
    assert os.path.exists(row['Manifest'])
    assert not cloud.exists('clusters', built['cluster']['uuid'])
    assert cloud.exists('networks', built['network']['id'])
    assert 'waiting up to 30s' in result.stderr
    assert 'abandoned stack k8s-stack' in result.stderr


def test_no_terminal_and_no_yes_changes_nothing(cloud, osc):
    magnum(cloud)
    result = osc('cluster', 'force-delete', 'k8s')
    assert result.code == 1
    assert 'Pass --yes to confirm' in result.stderr
    assert cloud.changes == []


def test_prompt_answered_yes_goes_on(cloud, osc):
    built = magnum(cloud)
    result = osc('cluster', 'force-delete', 'k8s', stdin='y\n', tty=True)
    assert result.code == 0, result.stderr
    assert 'Force-delete 1 cluster(s)?' in result.stderr
    assert 'stack k8s-stack, 6 resource(s) left behind' in result.stderr
    assert not cloud.exists('stacks', built['stack']['id'])


def test_prompt_answered_no_changes_nothing(cloud, osc):
    magnum(cloud)
    result = osc('cluster', 'force-delete', 'k8s', stdin='n\n', tty=True)
    assert result.code == 1
    assert 'Aborted' in result.stderr
    assert cloud.changes == []


def test_abandon_disabled_is_a_clear_error_before_any_change(
    monkeypatch, tmp_path, osc
):
    monkeypatch.chdir(tmp_path)
    with FakeHeatCloud(abandon_enabled=False) as cloud:
        magnum(cloud)
        result = osc('cluster', 'force-delete', 'k8s', '--yes')
        assert result.code == 1
        assert 'stack abandon disabled' in result.stderr
        assert 'enable_stack_abandon' in result.stderr
        assert cloud.changes == []


def test_stack_that_does_not_exist(cloud, osc):
    result = osc('cluster', 'force-delete', '--stack', 'nosuch', '--yes')
    assert result.code == 1
    assert "No stack with a name or ID of 'nosuch' exists" in result.stderr


def test_leftovers_not_deleted_give_a_table_and_a_failure(cloud, osc):
    built = magnum(cloud)
    result = osc(
        'cluster',
        'force-delete',
        'k8s',
        '--yes',
        '--delete-leftovers',
        '-f',
        'json',
    )
    assert result.code == 1
    [row] = json.loads(result.stdout)
    assert (row['Leftovers Deleted'], row['Leftovers Not Deleted']) == (5, 1)
    assert 'OS::Swift::Container bucket-1: not deleted' in result.stderr
    assert not cloud.exists('servers', built['server']['id'])
    # progress lines count against the leftover plan
    # (which leftover finishes first is the threads' choice)
    assert re.search(r'^\[[1-5]/5\] done: ', result.stderr, re.M)


def test_stuck_sweep_is_a_dry_run_without_yes(cloud, osc):
    deleting(cloud, 'old')
    deleting(cloud, 'young', updated='2026-11-03T09:00:00+00:00')
    result = osc(
        'cluster',
        'force-delete',
        '--stuck',
        '--older-than',
        '24h',
        '-f',
        'json',
    )
    assert result.code == 0, result.stderr
    assert {r['Cluster'] for r in json.loads(result.stdout)} == {'old'}
    assert 'pass --yes' in result.stderr
    assert cloud.changes == []


def test_stuck_sweep_with_yes_force_deletes_only_the_old(cloud, osc):
    old = magnum(
        cloud,
        'old',
        status='DELETE_IN_PROGRESS',
        updated='2026-11-01T10:00:00+00:00',
    )
    young = magnum(
        cloud,
        'young',
        status='DELETE_IN_PROGRESS',
        updated='2026-11-03T09:00:00+00:00',
    )
    for built in (old, young):
        cloud.delete_stack(built['stack'])
    result = osc(*SWEEP, '--yes', '-f', 'json')
    assert result.code == 0, result.stderr
    assert [r['Cluster'] for r in json.loads(result.stdout)] == ['old']
    assert not cloud.exists('stacks', old['stack']['id'])
    assert cloud.exists('stacks', young['stack']['id'])
    assert cloud.exists('clusters', young['cluster']['uuid'])


def test_stuck_list_of_stacks(cloud, osc):
    project = scenarios.project(cloud, 'tenant')
    cloud.stack(
        'stuck',
        project['id'],
        status='DELETE_FAILED',
        updated='2026-11-03T08:00:00Z',
    )
    cloud.stack(
        'fine',
        project['id'],
        status='CREATE_COMPLETE',
        updated='2026-11-01T08:00:00Z',
    )
    result = osc(
        'cluster',
        'stuck',
        'list',
        '--stack',
        '--older-than',
        '1h',
        '-f',
        'yaml',
    )
    assert result.code == 0, result.stderr
    [row] = yaml.safe_load(result.stdout)
    assert (row['Name'], row['Project'], row['Status'], row['Age']) == (
        'stuck',
        project['id'],
        'DELETE_FAILED',
        '2h',
    )


@pytest.mark.parametrize(
    'argv,message',
    [
        (
            ('k8s', '--stuck'),
            'Name the cluster(s) to force-delete, or pass --stuck',
        ),
        ((), 'Name the cluster(s)'),
        (('k8s', '--older-than', '1h'), '--older-than needs --stuck'),
        (('k8s', '--project', 'admin'), '--project needs --stuck'),
        (
            ('a', 'b', '--manifest', 'm.json'),
            '--manifest names the file of one cluster',
        ),
        (('k8s', '--include-updating'), '--include-updating needs --stuck'),
        (('--manifest', 'm.json'), 'Name the cluster(s)'),
        (('--delete-leftovers',), 'Name the cluster(s)'),
    ],
)
def test_argument_errors(cloud, osc, argv, message):
    result = osc('cluster', 'force-delete', *argv)
    assert result.code != 0
    assert message in result.stderr
    assert cloud.changes == []


def test_bad_age_is_refused_by_the_parser(cloud, osc):
    with pytest.raises(
        argparse.ArgumentTypeError, match="'soon' is not a duration"
    ):
        cluster.duration('soon')
    with pytest.raises(SystemExit) as exit_:
        osc('cluster', 'stuck', 'list', '--older-than', 'soon')
    assert exit_.value.code == 2
    assert cloud.changes == []


def test_stuck_sweep_of_one_project(cloud, osc):
    theirs = magnum(
        cloud,
        'theirs',
        status='DELETE_IN_PROGRESS',
        updated='2026-11-01T10:00:00+00:00',
    )
    mine = magnum(
        cloud,
        'mine',
        status='DELETE_IN_PROGRESS',
        updated='2026-11-01T10:00:00+00:00',
    )
    for built in (theirs, mine):
        cloud.delete_stack(built['stack'])
    result = osc(
        'cluster', 'stuck', 'list', '--project', 'mine-tenant', '-f', 'json'
    )
    assert result.code == 0, result.stderr
    assert [r['Name'] for r in json.loads(result.stdout)] == ['mine']
    result = osc(
        *SWEEP,
        '--yes',
        '--project',
        mine['cluster']['project_id'],
        '-f',
        'json',
    )
    assert result.code == 0, result.stderr
    assert [r['Cluster'] for r in json.loads(result.stdout)] == ['mine']
    assert cloud.exists('stacks', theirs['stack']['id'])
    assert not cloud.exists('stacks', mine['stack']['id'])


def test_one_cluster_failing_among_three(cloud, osc):
    built = {name: magnum(cloud, name) for name in ('a', 'b', 'c')}
    stack_b = built['b']['stack']
    cloud.forbidden.add(rf'/stacks/b-stack/{stack_b["id"]}/abandon$')

    result = osc(
        'cluster', 'force-delete', 'a', 'b', 'c', '--yes', '-f', 'json'
    )

    assert result.code == 1
    rows = {r['Cluster']: r for r in json.loads(result.stdout)}
    assert rows['a']['Result'] == rows['c']['Result'] == 'abandoned'
    assert rows['b']['Result'].startswith('failed: Cannot force-delete ')
    assert (
        'refused to abandon stack b-stack (HTTP 403)' in (rows['b']['Result'])
    )
    assert rows['b']['Manifest'] == ''
    assert not cloud.exists('stacks', built['a']['stack']['id'])
    assert not cloud.exists('stacks', built['c']['stack']['id'])
    assert cloud.exists('stacks', stack_b['id'])
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == '1 of 3 clusters failed'
    assert any(
        line.startswith('failed: Cannot force-delete magnum cluster b ')
        for line in lines
    )


def test_a_cluster_that_cannot_be_previewed_is_left_alone(cloud, osc):
    good = magnum(cloud, 'good')
    bad = magnum(cloud, 'bad')
    cloud.faults.append(('GET', rf'{bad["stack"]["id"]}/export$', 403))

    result = osc('cluster', 'force-delete', 'good', 'bad', '--yes')

    assert result.code == 1
    assert result.stderr.strip().splitlines()[-1] == ('1 of 2 clusters failed')
    assert 'Heat refused to export stack bad-stack (HTTP 403)' in (
        result.stderr
    )
    assert cloud.exists('clusters', bad['cluster']['uuid'])
    assert not [p for _, p in cloud.changes if bad['stack']['id'] in p]
    assert not cloud.exists('stacks', good['stack']['id'])


def test_resume_from_a_manifest_alone(cloud, osc, tmp_path):
    built = magnum(cloud)
    path = str(tmp_path / 'left.json')
    first = osc(
        'cluster', 'force-delete', 'k8s', '--yes', '--wait', '--manifest', path
    )
    assert first.code == 0, first.stderr
    assert not cloud.exists('clusters', built['cluster']['uuid'])
    assert cloud.exists('servers', built['server']['id'])
    changes = len(cloud.changes)

    dry = osc(
        'cluster',
        'force-delete',
        '--delete-leftovers',
        '--manifest',
        path,
        '--dry-run',
        '-f',
        'json',
    )
    assert dry.code == 0, dry.stderr
    actions = {r['Type']: r['Action'] for r in json.loads(dry.stdout)}
    assert actions['OS::Nova::Server'] == 'delete'
    assert len(cloud.changes) == changes

    result = osc(
        'cluster',
        'force-delete',
        '--delete-leftovers',
        '--manifest',
        path,
        '--yes',
        '-f',
        'json',
    )

    assert result.code == 1  # the Swift container: no Swift here
    [row] = json.loads(result.stdout)
    assert (row['Cluster'], row['Result'], row['Manifest']) == (
        'k8s',
        'abandoned',
        path,
    )
    assert (row['Leftovers Deleted'], row['Leftovers Not Deleted']) == (5, 1)
    assert not cloud.exists('servers', built['server']['id'])
    assert not cloud.exists('networks', built['network']['id'])
    with open(path) as f:
        assert len(json.load(f)['leftovers']) == 6
    assert result.stderr.strip().splitlines()[-1] == '1 of 1 clusters failed'


def test_resume_without_yes_and_terminal_changes_nothing(cloud, osc, tmp_path):
    magnum(cloud)
    path = str(tmp_path / 'left.json')
    assert (
        osc('cluster', 'force-delete', 'k8s', '--yes', '--manifest', path).code
        == 0
    )
    changes = len(cloud.changes)
    result = osc(
        'cluster', 'force-delete', '--delete-leftovers', '--manifest', path
    )
    assert result.code == 1
    assert 'Pass --yes to confirm' in result.stderr
    assert len(cloud.changes) == changes


def test_resume_of_a_missing_manifest_is_one_line(cloud, osc):
    result = osc(
        'cluster',
        'force-delete',
        '--delete-leftovers',
        '--manifest',
        'nosuch.json',
        '--yes',
    )
    assert result.code == 1
    assert result.stderr.strip() == (
        'Cannot read the manifest nosuch.json: No such file or directory.'
    )


def test_a_long_result_is_wrapped_in_a_table_and_whole_in_json(cloud, osc):
    # issue #32: a failure's reason made a 300-character cell
    built = magnum(cloud, 'b')
    stack = built['stack']
    cloud.forbidden.add(rf'/stacks/b-stack/{stack["id"]}/abandon$')

    table = osc('cluster', 'force-delete', 'b', '--yes', '--max-width', '0')
    assert table.code == 1
    cells = [
        c.strip()
        for line in table.stdout.splitlines()
        if line.startswith('|')
        for c in line.split('|')
    ]
    assert max(len(c) for c in cells) <= 100
    assert 'Heat refused to' in table.stdout  # wrapped after 'to'

    result = osc('cluster', 'force-delete', 'b', '--yes', '-f', 'json')
    [row] = json.loads(result.stdout)
    assert len(row['Result']) > 100  # whole, on one line
    assert '\n' not in row['Result']
