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

"""Issue #29 (8): without ``--settle`` the freeze outlives the project.

The quota rows keyed by a deleted project's ID stay frozen at exit, so a
token a service validated before the drain (and keeps for its token cache
time) creates nothing there; a later purge (the reaper's after its grace
period, ``orphan purge --project``) finds what was made meanwhile where
no quota holds (Glance), and releases the quotas once nothing is left and
the window has passed."""

import datetime
import glob
import json
import os
import re
import signal

import pytest

from osc_cascade.engine import report
from osc_cascade.engine.errors import CascadeError, Interrupted
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.workflows import after_delete, late_release, orphans
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_and_delete, zero_delays


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def pid(cloud):
    return scenarios.project_with_quotas(cloud)


def test_without_settle_the_quotas_stay_frozen_at_exit(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid)

    after_delete.finish(pc, outcome)

    # the door stays shut: a token issued before the drain, still in a
    # service's cache, meets quotas of 0 (the project is gone: they harm
    # nothing)
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert cloud.quota_of('neutron', pid)['network'] == 0


def cascade(osc, cloud, pid):
    """`project delete --cascade` without --settle, as an operator runs
    it: its stderr."""
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', pid)
    return result.stderr


def purge(osc, pid):
    result = osc('orphan', 'purge', '--project', pid, '--yes')
    assert result.code == 0, result.stderr
    return result.stderr


def past_the_window(cloud):
    """The services' token cache time after the delete has passed."""
    cloud.now += datetime.timedelta(seconds=late_release.WINDOW + 60)


def test_the_command_says_what_to_run_and_writes_it_down(cloud, pid, osc):
    stderr = cascade(osc, cloud, pid)

    assert cloud.quota_of('nova', pid)['instances'] == 0
    [line] = [x for x in stderr.splitlines() if 'stay frozen' in x]
    assert line.startswith(f'note: project A ({pid}) is deleted; ')
    assert line.endswith(f': openstack orphan purge --project {pid}')
    assert 'the reaper purges and releases them' in line
    entry = late_release.pending(pid)
    assert entry['run'] == f'openstack orphan purge --project {pid}'
    assert f"until {entry['release_after']} " in line
    assert {'block-storage', 'compute', 'network'} <= set(
        entry['quotas']['RegionOne']
    )
    # and in the run's record, where the line before it says
    [path] = glob.glob(
        os.path.join(report.default_dir(), '*-project-delete-cascade.json')
    )
    with open(path) as f:
        assert json.load(f)[late_release.PENDING] == [entry]


def test_a_purge_within_the_window_keeps_the_quotas_frozen(cloud, pid, osc):
    cascade(osc, cloud, pid)

    stderr = purge(osc, pid)

    # Neutron's frozen row is an orphan the purge would have reset
    assert cloud.quota_of('neutron', pid)['network'] == 0
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert 'its quotas stay frozen until' in stderr
    assert late_release.pending(pid) is not None


def test_the_later_purge_releases_once_it_finds_nothing(cloud, pid, osc):
    cascade(osc, cloud, pid)
    past_the_window(cloud)

    stderr = purge(osc, pid)

    assert f'project {pid}: its frozen quotas are released' in stderr
    for service in ('nova', 'neutron', 'cinder'):
        assert not cloud.has_quota(service, pid)
    assert late_release.pending(pid) is None


def test_what_was_made_in_the_window_is_found_by_the_later_purge(
    cloud, pid, osc
):
    cascade(osc, cloud, pid)
    # created after the project is gone, with a token a service validated
    # before the drain: Glance has no quota; a freeze that did not take
    late_image = scenarios.image(cloud, pid, 'late')
    late_net, _subnet = scenarios.network(cloud, pid, name='late')
    past_the_window(cloud)

    stderr = purge(osc, pid)

    assert not cloud.exists('images', late_image['id'])
    assert not cloud.exists('networks', late_net['id'])
    assert f'project {pid}: its frozen quotas are released' in stderr
    assert not cloud.has_quota('nova', pid)


def test_what_the_purge_cannot_delete_keeps_the_quotas(cloud, pid, osc):
    cascade(osc, cloud, pid)
    scenarios.network(cloud, pid, name='late')
    past_the_window(cloud)
    cloud.forbidden.add(r'/v2\.0/networks/')

    result = osc('orphan', 'purge', '--project', pid, '--yes')

    assert result.code != 0
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert late_release.pending(pid) is not None


def test_what_appears_during_the_purge_fails_it_and_is_named(cloud, pid, osc):
    """A resource of the deleted project made while the purge deletes
    (a token still valid): the search after the purge finds it, the purge
    exits 1 naming it, and the quotas stay frozen."""
    cascade(osc, cloud, pid)
    scenarios.network(cloud, pid, name='late')
    past_the_window(cloud)
    real = cloud._dispatch('network', cloud.endpoints['network'])
    made = []

    def delete_network(request, context):
        if not made:  # an image made as the purge's first delete goes
            made.append(scenarios.image(cloud, pid, 'in-flight'))
        return real(request, context)

    cloud.mocker.register_uri(
        'DELETE',
        re.compile(re.escape(cloud.endpoints['network']) + '/v2.0/networks/'),
        content=delete_network,
    )

    result = osc('orphan', 'purge', '--project', pid, '--yes')

    assert result.code == 1, result.stderr
    [image] = made
    last = result.stderr.strip().splitlines()[-1]
    assert 'appeared during the purge' in last
    assert f'in-flight ({image["id"]})' in last
    assert last.endswith('Run the same command again.')
    assert cloud.exists('images', image['id'])
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert late_release.pending(pid) is not None
    # the run after it finishes the job
    assert purge(osc, pid)
    assert not cloud.exists('images', image['id'])


def test_the_release_refuses_an_owner_that_exists(cloud, pid):
    conn = cloud.connection()
    cloud.set_quota('nova', pid, instances=0)
    release = late_release.QuotaRelease(
        conn, Regions(conn), retry=zero_delays(), clock=FakeClock()
    )
    with pytest.raises(
        CascadeError, match='exists: its quotas are left alone'
    ):
        release(pid)
    assert cloud.quota_of('nova', pid)['instances'] == 0


def test_with_settle_nothing_is_left_pending(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=60)
    after_delete.finish(pc, outcome)
    assert not cloud.has_quota('nova', pid)
    assert late_release.pending(pid) is None


def test_an_interrupted_settle_leaves_the_release_pending(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=300)
    pc.interrupt(signal.SIGINT)
    with pytest.raises(Interrupted):
        after_delete.finish(pc, outcome)
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert late_release.pending(pid)['project_id'] == pid


def test_holding_back_quota_rows_keeps_the_unlisted_owners():
    """An owner whose Swift account could not be listed stays unlisted
    (so neither clean nor released) once the quota rows are held back."""
    findings = orphans.Findings(
        [],
        [],
        [ResourceRef('network.network', 'n1', 'net', 'gone-owner')],
        {},
        {'gone-owner': 'its Swift account could not be listed'},
    )
    held, _notes = late_release.hold_back(
        findings, {}, datetime.datetime.now(datetime.UTC)
    )
    assert held.unlisted == findings.unlisted


def _held(count, report_file=None):
    projects = [
        ResourceRef('identity.project', f'p{i}', f'P{i}') for i in range(count)
    ]
    records = {
        p.id: {'quotas': {'RegionOne': {'compute': {}}}} for p in projects
    }
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return late_release.hold(projects, records, when, report_file)


def test_many_deleted_projects_make_one_line_that_says_where_the_list_is(
    tmp_path,
):
    record = tmp_path / 'run.json'
    record.write_text('{}')

    [note] = _held(1000, str(record))

    # one line, not a thousand: how many, until when, what to run, where
    # the list is (each written down, as one alone is)
    assert note.startswith('1000 projects are deleted; their quotas stay')
    assert 'until 2026-01-01T00:' in note
    assert 'openstack orphan purge --project <ID>' in note
    assert late_release.pending_dir() in note and str(record) in note
    assert late_release.pending('p999')['name'] == 'P999'
    assert len(json.loads(record.read_text())[late_release.PENDING]) == 1000
    # one project alone keeps its own line, with its ID to run
    [one] = _held(1)
    assert one.startswith('project P0 (p0) is deleted;')
    assert one.endswith('openstack orphan purge --project p0')


def test_many_deleted_projects_each_unwritten_release_has_its_line(
    monkeypatch,
):
    monkeypatch.setattr(
        late_release, '_write', lambda path, entry: f'cannot write {path}'
    )

    summary, *unwritten = _held(3)

    assert summary.startswith('3 projects are deleted;')
    assert [line.split(':')[0] for line in unwritten] == [
        'project p0',
        'project p1',
        'project p2',
    ]
