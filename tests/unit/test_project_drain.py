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

"""``openstack project drain``, ``restore`` and ``sweep`` through the real
OSC shell: the soft delete, its way back and its completion; protected
(immutable) projects and the one-actor lock; the stage in ``project
show``."""

import json

import pytest

from osc_cascade.workflows import actor, drain_record
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud

LONG_AGO = '2000-01-01T00:00:00Z'


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture(autouse=True)
def locks(monkeypatch, tmp_path):
    url = f'file://{tmp_path}/locks'
    monkeypatch.setenv(actor.ENV, url)
    return url


def filled(cloud, name, **extra):
    pid = scenarios.project(cloud, name, **extra)['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    scenarios.network(cloud, pid)
    return pid


def record(cloud, pid):
    text = cloud.get('projects', pid).get(drain_record.RECORD)
    return json.loads(text) if text else None


def drained_long_ago(cloud, pid):
    r = record(cloud, pid)
    r[drain_record.DRAINED_AT] = LONG_AGO
    cloud.get('projects', pid)[drain_record.RECORD] = json.dumps(r)


def test_help_lists_the_commands(osc):
    result = osc('help')
    for name in ('project drain', 'project restore', 'project sweep'):
        assert name in result.stdout
    # each one's line is a whole sentence (help shows a docstring's first)
    assert 'Delete the projects drained longer ago than --older-than' in (
        result.stdout
    )
    result = osc('help', 'project', 'sweep')
    assert '--older-than' in result.stdout
    # many projects in one plan (ManyProjects), not one after another
    assert 'one plan' in result.stdout
    assert 'one at a time' not in result.stdout
    assert '--coordination-url' in result.stdout
    assert '--coordination-url' in osc('help', 'project', 'delete').stdout


def test_drain_leaves_the_project_drained_and_shows_it(cloud, osc):
    pid = filled(cloud, 'A')
    result = osc('project', 'drain', 'A', '-f', 'json')
    assert result.code == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row['ID'] == pid
    assert row['State'] == drain_record.DRAINED
    assert row['Drained At']
    assert row['Drained By']
    project = cloud.get('projects', pid)
    assert project['enabled'] is False
    assert cloud.quota_of('nova', pid)['instances'] == 0
    assert cloud.owned_by(pid)  # nothing deleted
    r = record(cloud, pid)
    assert r[drain_record.DRAINED_AT] == row['Drained At']
    assert r[drain_record.DRAINED_BY]['user_id'] == row['Drained By']
    # another admin sees the stage and the record in `project show`
    shown = json.loads(osc('project', 'show', pid, '-f', 'json').stdout)
    assert shown[drain_record.STATE] == drain_record.DRAINED
    assert (
        json.loads(shown[drain_record.RECORD])['stage'] == drain_record.DRAINED
    )


def test_restore_reverses_the_drain(cloud, osc):
    pid = filled(cloud, 'A')
    assert osc('project', 'drain', 'A').code == 0
    result = osc('project', 'restore', 'A', '-f', 'json')
    assert result.code == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row['Enabled'] is True
    project = cloud.get('projects', pid)
    assert project['enabled'] is True
    assert not project.get(drain_record.RECORD)
    assert not project.get(drain_record.STATE)
    assert cloud.quota_of('nova', pid)['instances'] == 50
    assert cloud.quota_of('neutron', pid)['network'] == 50


def test_restore_without_a_record_is_refused(cloud, osc):
    filled(cloud, 'A')
    result = osc('project', 'restore', 'A')
    assert result.code == 1
    assert 'has no drain record' in result.stderr


def test_drain_and_restore_recursive(cloud, osc):
    parent = filled(cloud, 'P')
    child = filled(cloud, 'C', parent_id=parent)
    refused = osc('project', 'drain', 'P')
    assert refused.code == 1
    assert 'pass --recursive to drain them too' in refused.stderr
    assert osc('project', 'drain', '--recursive', 'P').code == 0
    assert cloud.get('projects', child)['enabled'] is False
    assert cloud.get('projects', parent)['enabled'] is False
    result = osc('project', 'restore', '--recursive', 'P')
    assert result.code == 0, result.stderr
    assert cloud.get('projects', child)['enabled'] is True
    assert cloud.get('projects', parent)['enabled'] is True


@pytest.mark.parametrize(
    'argv',
    [
        ('project', 'drain'),
        ('project', 'restore'),
        ('project', 'delete', '--cascade', '--yes'),
    ],
)
def test_a_protected_project_is_refused_with_how_to_unprotect(
    cloud, osc, argv
):
    pid = filled(cloud, 'A', options={'immutable': True})
    result = osc(*argv, 'A')
    assert result.code == 1
    line = (
        f'Project A ({pid}) is protected (marked immutable): unprotect it '
        f"with 'openstack project set --no-immutable {pid}' first."
    )
    assert line in result.stderr
    assert cloud.get('projects', pid)['enabled'] is True


def test_a_protected_child_refuses_the_recursive_cascade(cloud, osc):
    parent = filled(cloud, 'P')
    child = filled(cloud, 'C', parent_id=parent, options={'immutable': True})
    result = osc('project', 'delete', '--cascade', '--yes', '--recursive', 'P')
    assert result.code == 1
    assert f"'openstack project set --no-immutable {child}' first" in (
        result.stderr
    )


@pytest.mark.parametrize(
    'argv',
    [
        ('project', 'drain'),
        ('project', 'restore'),
        ('project', 'delete', '--cascade', '--yes'),
    ],
)
def test_a_second_actor_is_refused_with_one_line(cloud, osc, locks, argv):
    pid = filled(cloud, 'A')
    if argv[1] == 'restore':
        assert osc('project', 'drain', 'A').code == 0
    before = dict(cloud.get('projects', pid))
    holder = actor.Actor(locks, doing='openstack project sweep')
    holder.hold(pid)
    try:
        result = osc(*argv, 'A')
    finally:
        holder.release()
    assert result.code == 1
    assert f'Project A ({pid}) is busy' in result.stderr
    assert 'openstack project sweep, since' in result.stderr
    assert cloud.get('projects', pid) == before


def test_the_cascade_takes_the_coordination_url_option(cloud, osc, tmp_path):
    pid = filled(cloud, 'A')
    url = f'file://{tmp_path}/elsewhere'
    holder = actor.Actor(url)
    holder.hold(pid)
    try:
        result = osc(
            'project',
            'delete',
            '--cascade',
            '--yes',
            '--coordination-url',
            url,
            'A',
        )
    finally:
        holder.release()
    assert result.code == 1
    assert 'is busy' in result.stderr
    # and the cascade then runs, and releases its lock at the end
    result = osc('project', 'delete', '--cascade', '--yes', 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', pid)
    actor.Actor().hold(pid)


def test_coordination_url_needs_cascade(cloud, osc):
    filled(cloud, 'A')
    result = osc('project', 'delete', '--coordination-url', 'file:///x', 'A')
    assert result.code == 1
    assert '--coordination-url needs --cascade' in result.stderr


def test_sweep_is_dry_without_execute(cloud, osc):
    old = filled(cloud, 'Old')
    fresh = filled(cloud, 'Fresh')
    assert osc('project', 'drain', 'Old', 'Fresh').code == 0
    drained_long_ago(cloud, old)
    before = cloud.changes[:]
    result = osc('project', 'sweep', '--older-than', '30d', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r['ID'] for r in rows] == [old]
    assert rows[0]['Drained At'] == '2000-01-01T00:00:00Z'
    assert rows[0]['Drained By']
    assert rows[0]['State'] == drain_record.DRAINED
    assert rows[0]['Result'].startswith('due')
    assert cloud.changes == before
    assert cloud.exists('projects', fresh)


def test_sweep_with_yes_alone_deletes_nothing_and_says_so(cloud, osc):
    # --yes means "do not prompt", as in every command; --execute acts
    old = filled(cloud, 'Old')
    assert osc('project', 'drain', 'Old').code == 0
    drained_long_ago(cloud, old)
    before = cloud.changes[:]
    result = osc('project', 'sweep', '--older-than', '30d', '--yes')
    assert result.code == 0, result.stderr
    assert '--yes only skips the prompt' in result.stderr
    assert cloud.changes == before
    assert cloud.exists('projects', old)


def test_sweep_execute_without_a_terminal_needs_yes(cloud, osc):
    old = filled(cloud, 'Old')
    assert osc('project', 'drain', 'Old').code == 0
    drained_long_ago(cloud, old)
    before = cloud.changes[:]
    result = osc('project', 'sweep', '--older-than', '30d', '--execute')
    assert result.code == 1
    assert 'Pass --yes to confirm' in result.stderr
    assert cloud.changes == before
    assert cloud.exists('projects', old)


def test_sweep_completes_the_old_and_skips_protected_and_held(
    cloud, osc, locks
):
    old = filled(cloud, 'Old')
    fresh = filled(cloud, 'Fresh')
    protected = filled(cloud, 'Kept')
    held = filled(cloud, 'Held')
    assert osc('project', 'drain', 'Old', 'Fresh', 'Kept', 'Held').code == 0
    for pid in (old, protected, held):
        drained_long_ago(cloud, pid)
    cloud.get('projects', protected)['options'] = {'immutable': True}
    holder = actor.Actor(locks, doing='openstack project delete --cascade')
    holder.hold(held)
    try:
        result = osc(
            'project',
            'sweep',
            '--older-than',
            '30d',
            '--execute',
            '--yes',
            '-f',
            'json',
        )
    finally:
        holder.release()
    assert result.code == 0, result.stderr
    rows = {r['ID']: r['Result'] for r in json.loads(result.stdout)}
    assert rows[old] == 'deleted'
    assert rows[protected].startswith('skipped: Project Kept')
    assert f'--no-immutable {protected}' in rows[protected]
    assert rows[held].startswith('skipped: Project Held')
    assert 'openstack project delete --cascade, since' in rows[held]
    assert fresh not in rows
    # a line per project on stderr, as it goes
    assert f'project Old ({old}): deleted' in result.stderr
    assert not cloud.exists('projects', old)
    assert not cloud.owned_by(old)
    # frozen past the delete (no --settle): a later purge releases them
    assert cloud.quota_of('nova', old)['instances'] == 0
    for pid in (fresh, protected, held):
        assert cloud.get('projects', pid)['enabled'] is False


def test_a_failed_sweep_exits_1_and_the_project_stays_drained(
    cloud, osc, monkeypatch
):
    from osc_cascade.engine.errors import CascadeError
    from osc_cascade.workflows import cascade

    old = filled(cloud, 'Old')
    assert osc('project', 'drain', 'Old').code == 0
    drained_long_ago(cloud, old)

    def fail(self, plan, targets):
        raise CascadeError('the network refused')

    monkeypatch.setattr(cascade.ProjectCascade, '_execute', fail)
    result = osc(
        'project', 'sweep', '--older-than', '1d', '--execute', '--yes'
    )
    assert result.code == 1
    assert '1 of 1 drained project(s) could not be deleted' in result.stderr
    assert 'failed: the network refused' in result.stdout
    assert cloud.get('projects', old)['enabled'] is False
    actor.Actor().hold(old)  # released after the failure


def swept_while(monkeypatch, change):
    """The sweep, with ``change`` made once it has listed the drained
    projects (as an operator would meanwhile)."""
    from osc_cascade.workflows import sweep

    listed = sweep.due

    def due(*args, **kw):
        found = listed(*args, **kw)
        change()
        return found

    monkeypatch.setattr(sweep, 'due', due)


@pytest.mark.parametrize(
    'change, why',
    [
        (
            lambda p: p.update(enabled=True),
            'was enabled again since the sweep listed it',
        ),
        (
            lambda p: p.update(options={'immutable': True}),
            'is protected (marked immutable)',
        ),
        (
            lambda p: p.update(
                {
                    drain_record.RECORD: json.dumps(
                        {
                            **json.loads(p[drain_record.RECORD]),
                            drain_record.DRAINED_AT: '2001-01-01T00:00:00Z',
                        }
                    )
                }
            ),
            'was restored or drained again since the sweep listed it',
        ),
    ],
)
def test_a_project_changed_while_the_sweep_ran_is_left_as_it_is(
    cloud, osc, monkeypatch, change, why
):
    # issue 29 item 7: the sweep lists once, then cascades one by one; a
    # project set --enable (or protected, or drained anew) meanwhile is
    # not the one the sweep listed
    first = filled(cloud, 'First')
    second = filled(cloud, 'Second')
    assert osc('project', 'drain', 'First', 'Second').code == 0
    for pid in (first, second):
        drained_long_ago(cloud, pid)
    swept_while(monkeypatch, lambda: change(cloud.get('projects', second)))
    before = cloud.owned_by(second)

    result = osc(
        'project',
        'sweep',
        '--older-than',
        '30d',
        '--execute',
        '--yes',
        '-f',
        'json',
    )

    assert result.code == 1
    rows = {r['ID']: r['Result'] for r in json.loads(result.stdout)}
    assert rows[first] == 'deleted'
    assert rows[second].startswith('skipped: Project Second')
    assert why in rows[second]
    assert '1 of 2 drained project(s) changed since the sweep listed them' in (
        result.stderr
    )
    assert cloud.exists('projects', second)
    assert cloud.owned_by(second) == before
    assert cloud.has_quota('nova', second)


def test_a_project_enabled_while_its_cascade_is_planned_is_left_as_it_is(
    cloud, osc, monkeypatch
):
    # the re-check under the lock comes before the plan, which takes
    # a while; the drain that follows checks again what it reads
    from osc_cascade.workflows import cascade

    pid = filled(cloud, 'Old')
    assert osc('project', 'drain', 'Old').code == 0
    drained_long_ago(cloud, pid)
    planned = cascade.ProjectCascade.plan

    def plan(self, targets):
        found = planned(self, targets)
        cloud.get('projects', pid)['enabled'] = True
        return found

    monkeypatch.setattr(cascade.ProjectCascade, 'plan', plan)

    result = osc(
        'project', 'sweep', '--older-than', '30d', '--execute', '--yes'
    )

    assert result.code == 1
    assert 'was enabled again since the sweep listed it' in result.stdout
    assert cloud.get('projects', pid)['enabled'] is True
    assert cloud.owned_by(pid)
    actor.Actor().hold(pid)  # released


def test_sweep_the_due_projects_run_in_one_plan_and_one_run(
    cloud, osc, monkeypatch
):
    pids = [filled(cloud, f'P{n}') for n in range(4)]
    assert osc('project', 'drain', *(f'P{n}' for n in range(4))).code == 0
    for pid in pids:
        drained_long_ago(cloud, pid)
    from osc_cascade.engine.executor import Executor

    runs = []
    run = Executor.run

    def counted(self, plan):
        runs.append({s.target.project_id for s in plan.steps.values()})
        return run(self, plan)

    monkeypatch.setattr(Executor, 'run', counted)
    result = osc(
        'project', 'sweep', '--older-than', '30d', '--execute', '--yes',
        '-f', 'json',
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert {r['Result'] for r in json.loads(result.stdout)} == {'deleted'}
    assert runs[0] == set(pids)  # the first run has them all
    for pid in pids:
        assert not cloud.exists('projects', pid)


def test_sweep_one_project_that_fails_stays_drained_and_the_others_go(
    cloud, osc
):
    good, bad = filled(cloud, 'Good'), filled(cloud, 'Bad')
    assert osc('project', 'drain', 'Good', 'Bad').code == 0
    for pid in (good, bad):
        drained_long_ago(cloud, pid)
    net = next(n for n in cloud.all('networks') if n['project_id'] == bad)
    cloud.faults.extend([('DELETE', f'/networks/{net["id"]}', 500)] * 500)
    result = osc(
        'project', 'sweep', '--older-than', '30d', '--execute', '--yes',
        '-f', 'json',
    )  # fmt: skip
    assert result.code == 1
    rows = {r['ID']: r['Result'] for r in json.loads(result.stdout)}
    assert rows[good] == 'deleted'
    assert rows[bad].startswith('failed: stays drained: still owns')
    assert '1 of 2 drained project(s) could not be deleted' in result.stderr
    assert not cloud.exists('projects', good)
    assert cloud.get('projects', bad)['enabled'] is False
