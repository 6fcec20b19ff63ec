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

"""The drain in the cascade: quotas frozen by the drain and not in the
plan, the stage on the project, and after the project is gone the settle
and the release of the quotas (``after_delete.finish``), also through
``project delete --cascade --settle``."""

import json
import signal

import pytest

from osc_cascade.engine.errors import CascadeError, Interrupted
from osc_cascade.workflows import after_delete, drain, drain_record
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_and_delete, cascade_for


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def pid(cloud):
    return scenarios.project_with_quotas(cloud)


def stage(cloud, pid):
    return cloud.get('projects', pid)[drain_record.STATE]


def test_quotas_are_no_steps_of_the_plan(cloud, pid):
    _pc, _targets, plan = cascade_for(cloud, pid)
    assert not [s for s in plan.steps if ':quota.' in s]


def test_the_cascade_freezes_and_the_finish_releases(cloud, pid):
    # with --settle: without, the release waits (test_late_release)
    pc, targets, plan = cascade_for(cloud, pid, settle=60)
    outcome = pc.execute(plan, targets)
    # the project is empty and drained, its quotas frozen until it goes
    assert stage(cloud, pid) == drain_record.DELETING
    record = json.loads(cloud.get('projects', pid)[drain_record.RECORD])
    assert record['quotas']['RegionOne']['compute']['before'] == {
        'instances': 50
    }
    assert cloud.quota_of('nova', pid)['instances'] == 0
    pc.conn.identity.delete_project(pid)

    assert after_delete.finish(pc, outcome) == [
        'settle: 0 resource(s) appeared after the delete and were deleted'
    ]

    assert not cloud.has_quota('nova', pid)
    assert not cloud.has_quota('neutron', pid)
    assert not cloud.has_quota('cinder', pid)
    # and Keystone was asked for unified limits (none: no note)
    assert any('/registered_limits' in p for _m, p in cloud.requests)


def test_a_project_that_still_exists_keeps_its_quotas_frozen(cloud, pid):
    pc, targets, plan = cascade_for(cloud, pid)
    outcome = pc.execute(plan, targets)
    [note] = after_delete.finish(pc, outcome)
    assert note == f'project A ({pid}) still exists: its quotas stay frozen'
    assert cloud.quota_of('nova', pid)['instances'] == 0


def test_a_failed_cascade_marks_the_stage(cloud, pid):
    pc, targets, plan = cascade_for(cloud, pid)
    cloud.forbidden.add(r'/v2\.0/networks/')
    with pytest.raises(CascadeError):
        pc.execute(plan, targets)
    assert stage(cloud, pid).startswith('failed at deleting: ')
    assert cloud.get('projects', pid)['enabled'] is False


def test_a_stage_that_cannot_be_written_never_hides_the_error(
    cloud, pid, monkeypatch
):
    pc, targets, plan = cascade_for(cloud, pid)
    cloud.forbidden.add(r'/v2\.0/networks/')

    def refused(self, project_id, stage, record=None):
        raise CascadeError('Keystone is away')

    monkeypatch.setattr(drain.Drain, 'mark', refused)
    with pytest.raises(CascadeError, match='network'):
        pc.execute(plan, targets)


def test_the_settle_waits_then_deletes_what_appeared(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=300)
    # created with a token Neutron still had in its cache
    late, _subnet = scenarios.network(cloud, pid, name='late')

    [note] = after_delete.finish(pc, outcome)

    assert 300 in pc.clock.sleeps
    assert not cloud.exists('networks', late['id'])
    assert note == (
        'settle: 2 resource(s) appeared after the delete and were deleted'
    )
    assert not cloud.has_quota('nova', pid)
    assert 'settle' in pc.phases


def test_without_settle_nothing_is_looked_for(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid)
    late, _subnet = scenarios.network(cloud, pid, name='late')
    [note] = after_delete.finish(pc, outcome)
    assert 'its quotas stay frozen' in note
    assert cloud.exists('networks', late['id'])
    assert 300 not in pc.clock.sleeps


def test_a_settle_with_nothing_new_only_releases(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=60)
    assert after_delete.finish(pc, outcome) == [
        'settle: 0 resource(s) appeared after the delete and were deleted'
    ]
    assert not cloud.has_quota('nova', pid)


def test_what_the_settle_cannot_delete_keeps_the_quotas(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=60, verify_rounds=1)
    scenarios.network(cloud, pid, name='late')
    cloud.forbidden.add(r'/v2\.0/networks/')
    with pytest.raises(CascadeError, match='still own'):
        after_delete.finish(pc, outcome)
    assert cloud.quota_of('nova', pid)['instances'] == 0


def test_what_the_settle_keeps_keeps_the_quotas(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=60)
    scenarios.image(cloud, pid, 'public-one', visibility='public')
    with pytest.raises(CascadeError, match='that the cascade keeps'):
        after_delete.finish(pc, outcome)
    assert cloud.quota_of('nova', pid)['instances'] == 0


def test_a_signal_during_the_settle_stops_it(cloud, pid):
    pc, outcome = cascade_and_delete(cloud, pid, settle=300)
    pc.interrupt(signal.SIGINT)
    with pytest.raises(Interrupted):
        after_delete.finish(pc, outcome)
    assert 300 not in pc.clock.sleeps
    assert cloud.quota_of('nova', pid)['instances'] == 0


def test_the_command_settles_and_releases_after_osc_deletes(cloud, pid, osc):
    result = osc(
        'project', 'delete', '--cascade', '--yes', 'A', '--settle', '5m'
    )
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', pid)
    assert not cloud.has_quota('nova', pid)
    assert 'note: settle: 0 resource(s) appeared' in result.stderr


def test_settle_means_nothing_without_cascade(cloud, pid, osc):
    result = osc('project', 'delete', 'A', '--settle', '5m')
    assert result.code != 0
    assert cloud.exists('projects', pid)


def test_cinders_freeze_is_zero_once_the_cascade_deleted_the_volumes(cloud):
    pid = scenarios.project(cloud, 'B')['id']
    volume = scenarios.volume(cloud, pid, 'data', size=8)
    scenarios.snapshot(cloud, pid, volume)
    scenarios.volume(cloud, pid, 'more', size=2)
    events = []
    pc, targets, plan = cascade_for(cloud, pid)
    pc.on_event = events.append
    pc.execute(plan, targets)

    # the drain froze Cinder at usage (as the record on the project
    # says); the deletes brought it to 0
    record = json.loads(cloud.get('projects', pid)[drain_record.RECORD])
    at_drain = record['quotas']['RegionOne']['block-storage']['frozen']
    assert at_drain == {
        'volumes': 2,
        'gigabytes': 10,
        'snapshots': 1,
        'backups': 0,
    }
    frozen = pc.records[pid]['quotas']['RegionOne']['block-storage']
    assert set(cloud.quota_of('cinder', pid).values()) == {0}
    assert set(frozen['frozen'].values()) == {0}
    assert not [n for n in pc.notes if 'stay at' in n]
    # the progress got the run's events, and has them alone again
    assert any(e.step and e.step.target.id == volume['id'] for e in events)
    assert pc.on_event == events.append
