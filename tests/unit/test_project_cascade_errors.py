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

"""`openstack project delete --cascade`: refusals, failures and outputs,
through the real OSC shell against the fake cloud."""

import csv
import io
import json
import os
import signal
import sys

import pytest
import yaml

from osc_cascade.kinds import block_storage
from tests.unit import scenarios
from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import ADMIN_PROJECT, REGION, step_id

MUTATING = ('POST', 'PUT', 'PATCH', 'DELETE')


@pytest.fixture
def clock(virtual_time):
    """The fake wall clock of the shell's runs (see conftest)."""
    return virtual_time


def cascade(osc, *argv, **kw):
    return osc('project', 'delete', '--cascade', *argv, **kw)


def refused(result, *phrases):
    assert result.code != 0, result.stdout
    for phrase in phrases:
        assert phrase in result.stderr, result.stderr


# -- what to cascade ----------------------------------------------------------


def test_unknown_project(cloud, osc):
    result = cascade(osc, '--yes', 'nope')
    refused(result, "No project with a name or ID of 'nope' exists.")
    assert cloud.changes == []


def test_ambiguous_name_lists_candidates_and_suggests_domain(cloud, osc):
    cloud.add('domains', id='d2', name='second', enabled=True)
    p1 = scenarios.project(cloud, 'dup')
    p2 = scenarios.project(cloud, 'dup', domain_id='d2')
    result = cascade(osc, '--yes', 'dup')
    refused(
        result,
        "More than one project is named 'dup'",
        f'{p1["id"]} (domain default)',
        f'{p2["id"]} (domain d2)',
        '--domain',
    )
    assert cloud.changes == []


def test_domain_picks_the_project(cloud, osc):
    cloud.add('domains', id='d2', name='second', enabled=True)
    scenarios.project(cloud, 'dup')
    p2 = scenarios.project(cloud, 'dup', domain_id='d2')
    scenarios.volume(cloud, p2['id'], 'v2')
    result = cascade(
        osc, '--dry-run', '--domain', 'second', 'dup', '-f', 'json'
    )
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r['Project'] for r in rows} == {p2['id']}
    assert {r['Name'] for r in rows} == {'v2', 'dup'}


def test_domain_that_does_not_exist(cloud, osc):
    scenarios.project(cloud, 'A')
    refused(
        cascade(osc, '--yes', '--domain', 'nodom', 'A'),
        "No domain with a name or ID of 'nodom' exists.",
    )
    assert cloud.changes == []


def test_own_project_is_refused(cloud, osc):
    refused(
        cascade(osc, '--yes', 'admin'),
        'it is the project you are authenticated to',
    )
    assert cloud.changes == []
    assert cloud.exists('projects', ADMIN_PROJECT)


def test_immutable_project_is_refused(cloud, osc):
    p = scenarios.project(cloud, 'frozen', options={'immutable': True})
    scenarios.volume(cloud, p['id'])
    refused(cascade(osc, '--yes', 'frozen'), 'marked immutable')
    assert cloud.changes == []


def test_children_need_recursive(cloud, osc):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'kid', parent_id=parent['id'])
    refused(
        cascade(osc, '--yes', 'parent'),
        'has child projects',
        f'kid ({child["id"]})',
        '--recursive',
    )
    assert cloud.changes == []


def test_recursive_deletes_children_before_the_parent(cloud, osc):
    parent = scenarios.project(cloud, 'parent')
    child = scenarios.project(cloud, 'kid', parent_id=parent['id'])
    grandchild = scenarios.project(cloud, 'grandkid', parent_id=child['id'])
    vols = [
        scenarios.volume(cloud, p['id']) for p in (parent, child, grandchild)
    ]
    result = cascade(osc, '--yes', '--recursive', 'parent')
    assert result.code == 0, result.stderr
    assert [p for p in cloud.deleted_order() if '/projects/' in p] == [
        f'/v3/projects/{p["id"]}' for p in (grandchild, child, parent)
    ]
    assert not any(cloud.exists('volumes', v['id']) for v in vols)
    # every volume went before any project
    last_volume = max(cloud.index_of_delete('/volumes', v['id']) for v in vols)
    assert last_volume < cloud.index_of_delete('/projects', grandchild['id'])


# -- discovery failures -------------------------------------------------------


def test_a_403_on_a_list_call_says_which_and_deletes_nothing(
    cloud, osc, external
):
    a = scenarios.full_project(cloud, 'A', external)
    cloud.forbidden.add(r'/v3/volumes/detail')
    result = cascade(osc, '--yes', 'A')
    refused(
        result,
        'listing block_storage.volume of project '
        f'{a["project"]["id"]} in {REGION} was refused (HTTP 403)',
        'admin role',
    )
    assert cloud.changes == []
    assert cloud.get('projects', a['project']['id'])['enabled'] is True


def test_a_service_that_keeps_answering_503_deletes_nothing(
    cloud, osc, external, clock
):
    a = scenarios.full_project(cloud, 'A', external)
    cloud.faults += [('GET', r'/v2\.0/routers', 503)] * 20
    result = cascade(osc, '--yes', 'A')
    refused(
        result,
        'listing network.router of project',
        'failed, so nothing was deleted',
    )
    assert cloud.changes == []
    assert cloud.exists('projects', a['project']['id'])
    # it was retried, with backoff, before giving up
    assert (
        len([p for _, p in cloud.requests if p.startswith('/v2.0/routers')])
        > 1
    )
    assert clock.sleeps[:2] == [1, 2]


def test_a_service_missing_from_the_catalog_is_skipped_with_a_note(osc, clock):
    with FakeCloud(
        services=('identity', 'compute', 'network', 'image')
    ) as cloud:
        p = scenarios.project(cloud, 'A')
        scenarios.server(cloud, p['id'])
        result = cascade(osc, '--yes', 'A')
        assert result.code == 0, result.stderr
        [note] = [
            line
            for line in result.stderr.splitlines()
            if line.startswith('note: not in the catalog: ')
        ]
        assert 'block-storage' in note.split(': ', 2)[2].split(' (')[0]
        assert not cloud.exists('projects', p['id'])
        assert not [p for _, p in cloud.requests if 'cinder' in p]


# -- dry run and outputs ------------------------------------------------------


def parse(fmt, text):
    if fmt == 'json':
        return json.loads(text)
    if fmt == 'yaml':
        return yaml.safe_load(text)
    if fmt == 'csv':
        return list(csv.DictReader(io.StringIO(text)))
    return text


@pytest.mark.parametrize(
    'fmt', ['json', 'yaml', 'csv', 'table', 'value', 'dot']
)
def test_dry_run_changes_nothing_whatever_the_format(
    cloud, osc, external, fmt
):
    a = scenarios.full_project(cloud, 'A', external)
    result = cascade(osc, '--dry-run', 'A', '-f', fmt)
    assert result.code == 0, result.stderr
    assert not [c for c in cloud.changes if c[0] in MUTATING]
    assert cloud.exists('projects', a['project']['id'])
    out = parse(fmt, result.stdout)
    server = a['server']['id']
    if fmt in ('json', 'yaml', 'csv'):
        kinds = {r['Kind'] for r in out}
        assert {'compute.server', 'identity.project'} <= kinds
        [row] = [r for r in out if r['ID'] == server]
        assert row['Action'] == 'delete' and str(row['Stage']) == '1'
    elif fmt == 'table':
        header = [c.strip() for c in out.splitlines()[1].split('|')]
        assert header[1:5] == ['Stage', 'Region', 'Action', 'Kind']
        assert server in out
    elif fmt == 'value':
        lines = out.splitlines()
        assert any(
            line.split()[:5]
            == ['1', 'RegionOne', 'delete', 'compute.server', server]
            for line in lines
        )
        # one line per step, the project's delete last
        # (global: no region)
        assert lines[-1].split()[2] == 'identity.project'
    else:
        assert out.startswith('digraph cascade {') and out.endswith('}\n')
        assert f'"{step_id("delete", "compute.server", server)}"' in out


def test_dry_run_json_lists_what_comes_after_what(cloud, osc, external):
    a = scenarios.full_project(cloud, 'A', external)
    result = cascade(osc, '--dry-run', 'A', '-f', 'json')
    rows = json.loads(result.stdout)
    # a break action's step id ends with its parameters: [port_id=...]
    positions = {}
    for i, r in enumerate(rows):
        positions.setdefault(
            step_id(r['Action'], r['Kind'], r['ID']), []
        ).append(i)
    for i, row in enumerate(rows):
        for before in row['After']:
            assert min(positions[before.split('[')[0]]) < i
    project = rows[-1]
    assert project['Kind'] == 'identity.project'
    server = step_id('delete', 'compute.server', a['server']['id'])
    assert server in project['After']


def test_summary_after_a_run(cloud, osc):
    p = scenarios.project(cloud, 'A')
    scenarios.server(cloud, p['id'])
    scenarios.volume(cloud, p['id'])
    result = cascade(osc, '--yes', 'A', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = {r.pop('Kind'): r for r in json.loads(result.stdout)}
    one = {'Deleted': 1, 'Actions': 0, 'Kept': 0, 'Failed': 0, 'Skipped': 0}
    assert rows['block_storage.volume'] == {**one, 'Region': 'RegionOne'}
    assert rows['compute.server'] == {**one, 'Region': 'RegionOne'}
    assert rows['identity.project'] == {**one, 'Region': ''}
    assert all(r['Failed'] == r['Skipped'] == 0 for r in rows.values())
    # progress went to stderr, one line per step
    assert '[2/2] done:' in result.stderr


def test_dot_is_for_plans_the_summary_falls_back_to_a_table(cloud, osc):
    scenarios.volume(cloud, scenarios.project(cloud, 'A')['id'])
    result = cascade(osc, '--yes', 'A', '-f', 'dot')
    assert result.code == 0, result.stderr
    assert '| Kind' in result.stdout and 'digraph' not in result.stdout


# -- plan files ---------------------------------------------------------------


def test_plan_file_saved_by_a_dry_run_is_executed(
    cloud, osc, tmp_path, external
):
    a = scenarios.full_project(cloud, 'A', external)
    path = tmp_path / 'plan.json'
    result = cascade(osc, '--dry-run', '--plan-file', str(path), 'A')
    assert result.code == 0, result.stderr
    saved = json.loads(path.read_text())
    assert saved['projects'] == [{'id': a['project']['id'], 'name': 'A'}]
    assert len(saved['steps']) > 20
    assert cloud.changes == []

    # routers: listed to plan, never polled (ports are listed by the
    # floating IPs' check as well)
    def router_listings():
        return len(
            [
                p
                for m, p in cloud.requests
                if m == 'GET' and p.split('?')[0].endswith('/routers')
            ]
        )

    listed_before = router_listings()

    result = cascade(osc, '--yes', '--plan-file', str(path), 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', a['project']['id'])
    assert cloud.owned_by(a['project']['id']) == []
    # no new plan: the owners were read again after the drain, and the
    # verification looked once more
    assert router_listings() - listed_before == 2


def test_plan_file_for_another_project_is_refused(cloud, osc, tmp_path):
    scenarios.volume(cloud, scenarios.project(cloud, 'A')['id'])
    b = scenarios.project(cloud, 'B')
    path = tmp_path / 'plan.json'
    assert cascade(osc, '--dry-run', '--plan-file', str(path), 'A').code == 0
    refused(
        cascade(osc, '--yes', '--plan-file', str(path), 'B'),
        f'Plan file {path} is for project(s)',
        'not for the project(s) given',
    )
    assert cloud.changes == []
    assert cloud.exists('projects', b['id'])


@pytest.mark.parametrize(
    ('what', 'edit'),
    [
        ('cloud', {'cloud': 'http://other-keystone.test/v3'}),
        ('regions', {'regions': ['RegionTwo']}),
    ],
)
def test_plan_file_for_another_cloud_or_region_is_refused(
    cloud, osc, tmp_path, what, edit
):
    a = scenarios.project(cloud, 'A')
    scenarios.volume(cloud, a['id'])
    path = tmp_path / 'plan.json'
    assert cascade(osc, '--dry-run', '--plan-file', str(path), 'A').code == 0
    saved = json.loads(path.read_text())
    saved['made_for'].update(edit)
    path.write_text(json.dumps(saved))
    refused(
        cascade(osc, '--yes', '--plan-file', str(path), 'A'),
        f'Plan file {path} was made for {what}',
    )
    assert cloud.changes == []
    assert cloud.exists('projects', a['id'])


def test_plan_file_older_than_allowed_is_refused(cloud, osc, tmp_path):
    a = scenarios.project(cloud, 'A')
    vol = scenarios.volume(cloud, a['id'])
    path = tmp_path / 'plan.json'
    assert cascade(osc, '--dry-run', '--plan-file', str(path), 'A').code == 0
    saved = json.loads(path.read_text())
    saved['made_for']['made_at'] = '2020-01-01T00:00:00+00:00'
    path.write_text(json.dumps(saved))
    refused(
        cascade(osc, '--yes', '--plan-file', str(path), 'A'),
        'more than --plan-max-age allows',
    )
    assert cloud.changes == []
    # the user may allow an older plan; its owners are read again anyway
    result = cascade(
        osc, '--yes', '--plan-file', str(path), '--plan-max-age', '3650d', 'A'
    )
    assert result.code == 0, result.stderr
    assert not cloud.exists('volumes', vol['id'])


def test_a_saved_plans_volume_given_away_before_the_run_is_kept(
    cloud, osc, tmp_path
):
    a = scenarios.project(cloud, 'A')
    b = scenarios.project(cloud, 'B')
    given = scenarios.volume(cloud, a['id'], 'given')
    path = tmp_path / 'plan.json'
    assert cascade(osc, '--dry-run', '--plan-file', str(path), 'A').code == 0
    # `volume transfer request create/accept` between the plan and the run
    given['os-vol-tenant-attr:tenant_id'] = b['id']

    result = cascade(osc, '--yes', '--plan-file', str(path), 'A')

    assert result.code == 0, result.stderr
    assert cloud.exists('volumes', given['id'])
    assert f'owner is now {b["id"]}: kept' in result.stderr
    assert not cloud.exists('projects', a['id'])


def test_a_dry_run_whose_real_run_would_refuse_says_so_and_fails(cloud, osc):
    p = scenarios.project(cloud, 'A')
    scenarios.image(cloud, p['id'], 'golden', visibility='public')
    result = cascade(osc, '--dry-run', 'A')
    refused(result, 'The real run would refuse: 1 resource(s) are kept')
    assert 'golden' in result.stdout  # the plan is shown first
    assert cloud.changes == []


def test_missing_plan_file_is_refused(cloud, osc, tmp_path):
    scenarios.project(cloud, 'A')
    path = tmp_path / 'nowhere.json'
    refused(
        cascade(osc, '--yes', '--plan-file', str(path), 'A'),
        'does not exist',
        f'--dry-run --plan-file {path}',
    )
    assert cloud.changes == []


@pytest.mark.parametrize(
    'content,phrase',
    [
        ('{not json', 'Cannot plan the cascade'),
        ('{"format": 99}', 'unsupported plan file format 99'),
        ('{"format": 3}', 'malformed plan file'),
        # before the regions: steps without theirs
        ('{"format": 2}', 'unsupported plan file format 2 (expected 3)'),
    ],
)
def test_broken_plan_file_is_refused(cloud, osc, tmp_path, content, phrase):
    scenarios.project(cloud, 'A')
    path = tmp_path / 'plan.json'
    path.write_text(content)
    refused(cascade(osc, '--yes', '--plan-file', str(path), 'A'), phrase)
    assert cloud.changes == []


def test_edited_plan_file_with_another_projects_resource_is_refused(
    cloud, osc, tmp_path
):
    a = scenarios.project(cloud, 'A')
    b = scenarios.project(cloud, 'B')
    mine = scenarios.volume(cloud, a['id'])
    theirs = scenarios.volume(cloud, b['id'], 'theirs')
    path = tmp_path / 'plan.json'
    assert cascade(osc, '--dry-run', '--plan-file', str(path), 'A').code == 0
    # the volume's step made to name theirs, edges and all
    data = json.loads(path.read_text().replace(mine['id'], theirs['id']))
    [step] = [s for s in data['steps'] if s['target']['id'] == theirs['id']]
    step['target']['project_id'] = b['id']
    path.write_text(json.dumps(data))
    refused(
        cascade(osc, '--yes', '--plan-file', str(path), 'A'),
        'owned by another project',
    )
    assert cloud.changes == []
    assert cloud.exists('volumes', theirs['id'])


# -- confirmation -------------------------------------------------------------


def test_no_terminal_and_no_yes_refuses(cloud, osc):
    scenarios.volume(cloud, scenarios.project(cloud, 'A')['id'])
    refused(
        cascade(osc, 'A'), 'standard input is not a terminal', 'Pass --yes'
    )
    assert cloud.changes == []


def test_prompt_answered_no_aborts(cloud, osc):
    p = scenarios.project(cloud, 'A')
    scenarios.volume(cloud, p['id'])
    scenarios.server(cloud, p['id'])
    result = cascade(osc, 'A', stdin='n\n', tty=True)
    refused(
        result,
        f'The cascade will delete, in project(s) A ({p["id"]})',
        'compute.server: 1 delete',
        'block_storage.volume: 1 delete',
        'Continue? [y/N]',
        'Aborted: nothing was deleted.',
    )
    assert cloud.changes == []


@pytest.mark.parametrize('answer', ['', 'maybe\n'])
def test_anything_but_yes_aborts(cloud, osc, answer):
    scenarios.volume(cloud, scenarios.project(cloud, 'A')['id'])
    refused(cascade(osc, 'A', stdin=answer, tty=True), 'Aborted')
    assert cloud.changes == []


def test_prompt_answered_yes_proceeds(cloud, osc):
    p = scenarios.project(cloud, 'A')
    scenarios.volume(cloud, p['id'])
    result = cascade(osc, 'A', stdin='yes\n', tty=True)
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', p['id'])


# -- kept resources -----------------------------------------------------------


def test_a_public_image_is_kept_and_so_is_the_project(cloud, osc):
    p = scenarios.project(cloud, 'A')
    img = scenarios.image(cloud, p['id'], 'golden', visibility='public')
    scenarios.volume(cloud, p['id'])
    result = cascade(osc, '--yes', 'A')
    refused(
        result,
        'Nothing was changed',
        'golden',
        'public image',
        '--delete-shared ',
    )
    assert cloud.changes == []
    assert cloud.exists('images', img['id'])

    result = cascade(osc, '--dry-run', 'A', '-f', 'json')
    rows = json.loads(result.stdout)
    [kept] = [r for r in rows if r['Action'] == 'keep']
    assert kept['ID'] == img['id']
    # the plan shows that the project waits for it
    assert step_id('keep', 'image.image', img['id']) in rows[-1]['After']


def test_delete_shared_images_deletes_them_and_the_project(cloud, osc):
    p = scenarios.project(cloud, 'A')
    img = scenarios.image(
        cloud, p['id'], 'golden', visibility='public', protected=True
    )
    result = cascade(osc, '--yes', '--delete-shared-images', 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('images', img['id'])
    assert not cloud.exists('projects', p['id'])


@pytest.mark.parametrize(
    'option',
    [
        ['--dry-run'],
        ['--yes'],
        ['--recursive'],
        ['--delete-shared'],
        ['--plan-max-age', '1h'],
        ['--plan-file', 'plan.json'],
    ],
)
def test_cascade_options_need_cascade(cloud, osc, option):
    p = scenarios.project(cloud, 'A')
    result = osc('project', 'delete', *option, 'A')
    refused(result, f'{option[0]} needs --cascade')
    assert cloud.exists('projects', p['id'])
    assert cloud.changes == []


@pytest.mark.parametrize(
    'option',
    [['--parallel', '0'], ['--timeout', '-5'], ['--parallel', 'many']],
)
def test_bad_numbers_are_refused_by_the_parser(cloud, osc, option):
    scenarios.project(cloud, 'A')
    with pytest.raises(SystemExit) as exit_:
        cascade(osc, '--yes', *option, 'A')
    assert exit_.value.code == 2
    assert f'argument {option[0]}' in sys.stderr.getvalue()
    assert cloud.changes == []


# -- failures and runs again --------------------------------------------------


def test_a_run_that_fails_half_way_is_finished_by_the_next(
    cloud, osc, external
):
    a = scenarios.full_project(cloud, 'A', external)
    pid = a['project']['id']
    subnet = a['subnet']['id']
    cloud.faults += [('DELETE', f'/v2.0/subnets/{subnet}', 400)] * 50
    result = cascade(osc, '--yes', 'A')
    refused(
        result, 'The projects were not deleted', 'net-subnet', 'injected fault'
    )
    # half-way: the servers are gone, the subnet and network are not, and
    # the project is disabled so that nobody adds to it meanwhile
    assert not cloud.exists('servers', a['server']['id'])
    assert cloud.exists('subnets', subnet)
    assert cloud.exists('networks', a['network']['id'])
    assert cloud.get('projects', pid)['enabled'] is False
    assert cloud.exists('projects', pid)

    cloud.faults.clear()
    result = cascade(osc, '--yes', 'A')
    assert result.code == 0, result.stderr
    assert cloud.owned_by(pid) == []
    assert not cloud.exists('projects', pid)


class _LateVolume(FakeCloud):
    """A volume shows up in the project while its server is deleted."""

    project_id = ''
    late: list

    def _compute(self, method, path, query, body):
        if method == 'DELETE' and not hasattr(self, 'late'):
            self.late = [scenarios.volume(self, self.project_id, 'late')]
        return super()._compute(method, path, query, body)


def test_resources_appearing_during_the_run_are_deleted_too(osc):
    with _LateVolume() as cloud:
        p = scenarios.project(cloud, 'A')
        cloud.project_id = p['id']
        scenarios.server(cloud, p['id'])
        result = cascade(osc, '--yes', 'A', '-f', 'json')
        assert result.code == 0, result.stderr
        assert not cloud.exists('volumes', cloud.late[0]['id'])
        assert not cloud.exists('projects', p['id'])
        rows = {r['Kind']: r['Deleted'] for r in json.loads(result.stdout)}
        assert rows['block_storage.volume'] == 1


def test_leftovers_fail_the_command_and_keep_the_project(cloud, osc):
    p = scenarios.project(cloud, 'A')
    vol = scenarios.volume(cloud, p['id'], 'stuck')
    ok = scenarios.volume(cloud, p['id'], 'fine')
    cloud.faults += [('DELETE', f'/v3/volumes/{vol["id"]}', 500)] * 1000
    result = cascade(osc, '--yes', '--timeout', '60', 'A')
    refused(result, 'still own 1 resource(s)', f'stuck ({vol["id"]})')
    assert cloud.exists('projects', p['id'])
    assert cloud.exists('volumes', vol['id'])
    assert not cloud.exists('volumes', ok['id'])
    assert not [
        c for c in cloud.changes if c == ('DELETE', f'/v3/projects/{p["id"]}')
    ]


def test_several_projects_in_one_command(cloud, osc, external):
    a = scenarios.full_project(cloud, 'A', external)
    b = scenarios.full_project(cloud, 'B', external)
    c = scenarios.full_project(cloud, 'C', external)
    before_c = cloud.owned_by(c['project']['id'])
    result = cascade(osc, '--yes', 'A', b['project']['id'])
    assert result.code == 0, result.stderr
    for p in (a, b):
        assert cloud.owned_by(p['project']['id']) == []
        assert not cloud.exists('projects', p['project']['id'])
    assert cloud.owned_by(c['project']['id']) == before_c


def test_one_unknown_project_among_several_changes_nothing(cloud, osc):
    p = scenarios.project(cloud, 'A')
    scenarios.volume(cloud, p['id'])
    refused(cascade(osc, '--yes', 'A', 'nope'), "'nope'")
    assert cloud.changes == []


# -- interrupted ---------------------------------------------------------------


@pytest.mark.parametrize(
    ('signum', 'code'), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_a_signal_stops_the_run_writes_the_report_and_says_what_remains(
    cloud, osc, tmp_path, monkeypatch, signum, code, shell_signal_handlers
):
    p = scenarios.project(cloud, 'A')
    for i in range(5):
        scenarios.volume(cloud, p['id'], f'v{i}')
    real_delete = block_storage.Volume.delete

    signalled = []

    def delete_then_signal(self, conn, ref):
        real_delete(self, conn, ref)
        if not signalled:  # a second one would end the process at once
            signalled.append(ref.id)
            os.kill(os.getpid(), signum)  # as if Ctrl-C (or kill) came now

    monkeypatch.setattr(block_storage.Volume, 'delete', delete_then_signal)
    report = tmp_path / 'report.json'
    with pytest.raises(SystemExit) as exit_:
        cascade(
            osc, '--yes', '--parallel', '1', '--report-file', str(report), 'A'
        )
    assert exit_.value.code == code
    # the handlers are the shell's again
    assert (
        signal.getsignal(signal.SIGINT) is shell_signal_handlers[signal.SIGINT]
    )
    # the delete in flight finished; a signal reaches the main thread a
    # moment later, so another call may have started meanwhile, no more
    assert len(cloud.all('volumes')) >= 3
    assert cloud.exists('projects', p['id'])
    assert cloud.get('projects', p['id'])['enabled'] is False
    saved = json.loads(report.read_text())
    assert saved['ok'] is False
    assert saved['error'].startswith(
        f'Interrupted ({signal.Signals(signum).name})'
    )
