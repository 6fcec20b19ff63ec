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

"""Every real run writes its record (who, when, the cloud, its regions,
the plan, each step's outcome) into the user's state directory, or where
--report-file says, or nowhere with --no-report; a dry run writes none;
stderr says where."""

import json
import os
import pathlib

import pytest

from osc_cascade.engine import report, retry
from tests.unit import scenarios
from tests.unit.fakes.clouds import (
    FakeHeatCloud,
    FakePlacementCloud,
    ServicesCloud,
)
from tests.unit.scenarios import evacuation


def records():
    """The records in the state directory (the unit tests' own)."""
    directory = pathlib.Path(report.default_dir())
    assert str(directory).startswith(os.environ['XDG_STATE_HOME'])
    if not directory.exists():
        return []
    return [json.loads(p.read_text()) for p in sorted(directory.iterdir())]


def the_record(result):
    """The one record written, and the line that said where."""
    [line] = [
        line
        for line in result.stderr.splitlines()
        if line.startswith('note: the record of the run: ')
    ]
    path = line.removeprefix('note: the record of the run: ')
    assert os.path.dirname(path) == report.default_dir()
    with open(path) as f:
        return json.load(f)


def test_a_cascade_writes_who_when_where_and_what(cloud, external, osc):
    p = scenarios.full_project(cloud, 'A', external)
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 0, result.stderr
    record = the_record(result)
    assert [record] == records()
    assert record['command'] == 'project delete --cascade'
    assert record['cloud'] == 'defaults'  # the fake cloud's, unnamed
    assert record['regions'] == ['RegionOne']
    assert record['user']['name'] == 'admin'
    assert record['user']['id']
    assert record['project']['name'] == 'admin'
    assert record['started'] <= record['finished']
    assert record['projects'] == [{'id': p['project']['id'], 'name': 'A'}]
    assert record['ok'] is True and record['error'] == ''
    planned = {s['target']['id'] for s in record['plan']['steps']}
    done = {r['id'] for rnd in record['rounds'] for r in rnd}
    assert p['network']['id'] in planned
    assert {r['outcome'] for rnd in record['rounds'] for r in rnd} == {'done'}
    assert len(done) == len(record['plan']['steps'])
    # each round's API slots, per service it called, found while it ran
    assert len(record['slots']) == len(record['rounds'])
    network = record['slots'][0]['network@RegionOne']
    assert network['adaptive'] is True
    assert network['lowest'] <= network['slots'] <= network['highest']


def test_a_record_file_elsewhere_or_none(cloud, external, osc, tmp_path):
    scenarios.full_project(cloud, 'A', external)
    scenarios.full_project(cloud, 'B', external)
    target = tmp_path / 'deep' / 'a.json'
    result = osc(
        'project', 'delete', '--cascade', '--yes', 'A',
        '--report-file', str(target),
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert json.loads(target.read_text())['command'] == (
        'project delete --cascade'
    )
    assert f'note: the record of the run: {target}' in result.stderr
    result = osc('project', 'delete', '--cascade', '--yes', '--no-report', 'B')
    assert result.code == 0, result.stderr
    assert 'record' not in result.stderr
    assert records() == []


def test_a_dry_run_writes_none(cloud, external, osc):
    scenarios.full_project(cloud, 'A', external)
    assert osc('project', 'delete', '--cascade', '--dry-run', 'A').code == 0
    assert records() == []


def test_a_failed_cascade_is_recorded_too(cloud, external, osc):
    p = scenarios.full_project(cloud, 'A', external)
    server = p['server']['id']
    cloud.faults += [('DELETE', f'/servers/{server}', 400)] * 20
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 1
    record = the_record(result)
    assert record['ok'] is False
    assert 'were not deleted' in record['error']
    failed = [
        r['id']
        for rnd in record['rounds']
        for r in rnd
        if r['outcome'] == 'failed'
    ]
    assert f'delete:compute.server:{server}@RegionOne' in failed


def test_an_unwritable_record_is_a_note_and_the_run_goes_on(
    cloud, external, osc, tmp_path
):
    scenarios.full_project(cloud, 'A', external)
    blocker = tmp_path / 'file'
    blocker.write_text('')
    target = blocker / 'a.json'  # a directory that is a file
    result = osc(
        'project', 'delete', '--cascade', '--yes', 'A',
        '--report-file', str(target),
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert (
        f'note: the record of the run could not be written to {target}: '
        in result.stderr
    )
    assert not cloud.exists('projects', 'A')


def test_json_progress_says_where_as_a_note(cloud, external, osc):
    scenarios.full_project(cloud, 'A', external)
    result = osc(
        'project', 'delete', '--cascade', '--yes', 'A', '--progress', 'json'
    )
    assert result.code == 0, result.stderr
    notes = [
        r['message']
        for r in map(json.loads, result.stderr.splitlines())
        if r['event'] == 'note'
    ]
    [where] = [n for n in notes if n.startswith('the record of the run: ')]
    assert where.endswith('-project-delete-cascade.json')


def test_an_orphan_purge_is_recorded(cloud, external, osc):
    gone = scenarios.full_project(cloud, 'gone', external)
    cloud.db['projects'].pop(gone['project']['id'])
    assert osc('orphan', 'purge', '--dry-run').code == 0
    assert records() == []
    result = osc('orphan', 'purge', '--yes')
    assert result.code == 0, result.stderr
    record = the_record(result)
    assert record['command'] == 'orphan purge'
    assert record['regions'] == ['RegionOne']
    assert [p['id'] for p in record['projects']] == [gone['project']['id']]
    assert record['ok'] is True
    assert {r['outcome'] for r in record['rounds'][0]} == {'done'}
    server = gone['server']['id']
    assert f'delete:compute.server:{server}@RegionOne' in {
        r['id'] for r in record['rounds'][0]
    }


@pytest.fixture
def no_sleep(monkeypatch):
    monkeypatch.setattr(retry.Clock, 'sleep', lambda self, seconds: None)


def test_a_compute_service_purge_is_recorded(osc, no_sleep):
    with FakePlacementCloud() as cloud:
        s = evacuation(cloud)
        result = osc(
            'compute', 'service', 'delete', '--purge-allocations', '--yes',
            s.a['id'],
        )  # fmt: skip
    assert result.code == 0, result.stderr
    record = the_record(result)
    assert record['command'] == 'compute service delete --purge-allocations'
    assert record['regions'] == ['RegionOne']
    kinds = {r['kind'] for r in record['rounds'][0]}
    assert kinds == {
        'compute.service',
        'placement.allocation',
        'placement.resource_provider',
    }
    assert record['ok'] is True


def test_a_cluster_force_delete_records_its_rows(osc, monkeypatch, tmp_path):
    from osc_cascade.workflows.clusters import stuck
    from tests.unit.test_cluster_cli import NOW, magnum

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(stuck, 'utcnow', lambda: NOW)
    with FakeHeatCloud() as cloud:
        magnum(cloud)
        result = osc(
            'cluster', 'force-delete', 'k8s', '--yes', '--wait',
            '--grace', '30',
        )  # fmt: skip
    assert result.code == 0, result.stderr
    record = the_record(result)
    assert record['command'] == 'cluster force-delete'
    [outcome] = record['outcome']
    assert outcome['Result'] == 'abandoned'
    assert outcome['Cluster'] == 'k8s'
    assert {row['Cluster'] for row in record['planned']} == {'k8s'}
    assert record['ok'] is True


def test_a_reaper_purge_is_recorded(cloud, external, tmp_path):
    from osc_cascade import kinds as kinds_mod
    from osc_cascade.reaper import lock, sweep
    from osc_cascade.workflows import orphans
    from tests.unit.fakes.clock import FakeClock
    from tests.unit.fakes.run import zero_delays

    gone = scenarios.full_project(cloud, 'gone', external)['project']['id']
    cloud.db['projects'].pop(gone)
    locks = lock.Locks(f'file://{tmp_path / "locks"}', 'reaper-a')
    locks.start()
    try:
        purger = sweep.Purger(
            cloud.connection(),
            orphans.select_kinds(kinds_mod.build()),
            locks,
            clock=FakeClock(),
            retry=zero_delays(),
        )
        assert purger.purge([gone])[gone].state == sweep.PURGED
    finally:
        locks.stop()
    [record] = records()
    assert record['command'] == 'osc-cascade-reaper purge'
    assert [p['id'] for p in record['projects']] == [gone]
    assert record['ok'] is True
    assert {r['outcome'] for r in record['rounds'][0]} == {'done'}


@pytest.fixture
def services_cloud():
    """A cloud with the quota APIs the drain freezes."""
    with ServicesCloud() as c:
        yield c


def test_a_sweep_records_its_one_run_and_none_of_a_skipped_one(
    services_cloud, osc
):
    from tests.unit.test_project_drain import drained_long_ago, filled

    cloud = services_cloud
    old = filled(cloud, 'Old')
    protected = filled(cloud, 'Kept')
    assert osc('project', 'drain', 'Old', 'Kept').code == 0
    for pid in (old, protected):
        drained_long_ago(cloud, pid)
    cloud.get('projects', protected)['options'] = {'immutable': True}
    result = osc(
        'project', 'sweep', '--older-than', '30d', '--execute', '--yes'
    )
    assert result.code == 0, result.stderr
    [record] = records()
    assert record['command'] == 'project sweep'
    assert record['projects'] == [{'id': old, 'name': 'Old'}]
    assert record['ok'] is True
    # one run for all the due projects (issue 35): one record, one line
    assert result.stderr.count('note: the record of the run: ') == 1
    assert 'Kept' not in result.stderr.split('the record of the run')[0]


def test_a_sweep_without_records(services_cloud, osc):
    from tests.unit.test_project_drain import drained_long_ago, filled

    cloud = services_cloud
    old = filled(cloud, 'Old')
    assert osc('project', 'drain', 'Old').code == 0
    drained_long_ago(cloud, old)
    result = osc(
        'project',
        'sweep',
        '--older-than',
        '30d',
        '--execute',
        '--yes',
        '--no-report',
    )
    assert result.code == 0, result.stderr
    assert records() == []
