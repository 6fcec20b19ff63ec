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

"""``domain delete --cascade`` with ``--region`` and ``--plan-file``, as
``project delete --cascade`` has them; the users' part of the run named as
such in the progress."""

import json

from tests.unit import scenarios, test_domain_cascade_cli
from tests.unit.test_domain_cascade import customer

# the domain command's cloud, and the hooks installed
cloud = test_domain_cascade_cli.cloud
_hooks = test_domain_cascade_cli._hooks


def save_plan(osc, path, name):
    """The dry run, its plan saved in ``path``."""
    return osc(
        'domain', 'delete', '--cascade', '--dry-run', '--plan-file', path,
        name,
    )  # fmt: skip


def run_plan(osc, path, name):
    return osc(
        'domain', 'delete', '--cascade', '--yes', '--plan-file', path, name
    )


def test_help_shows_region_and_plan_file(osc):
    result = osc('help', 'domain', 'delete')
    assert result.code == 0
    for option in ('--region', '--plan-file', '--plan-max-age'):
        assert option in result.stdout


def test_the_options_need_cascade(cloud, osc):
    customer(cloud, 'acme')
    result = osc('domain', 'delete', '--region', 'RegionOne', 'acme')
    assert result.code != 0
    assert '--cascade' in result.stderr
    assert cloud.changes == []


def test_region_keeps_what_is_elsewhere_and_the_domain(cloud, osc):
    two = cloud.add_region(
        'RegionTwo', ['compute', 'network'], shared=['identity']
    )
    c = customer(cloud, 'acme')
    top, child, other = c['projects']
    far_net = two.add(
        'networks',
        name='far',
        project_id=other['id'],
        tenant_id=other['id'],
        shared=False,
    )
    u1, u2 = c['users']
    two.keypair(u1['id'], 'far')
    dry = osc(
        'domain', 'delete', '--cascade', '--dry-run', '--region',
        'RegionOne', 'acme', '-f', 'json',
    )  # fmt: skip
    assert dry.code == 1
    assert 'outside --region' in dry.stderr
    assert cloud.changes == [] and two.changes == []
    result = osc(
        'domain', 'delete', '--cascade', '--yes', '--region', 'RegionOne',
        'acme',
    )  # fmt: skip
    assert result.code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert 'The domain was not deleted' in last
    assert f'project acme-other ({other["id"]})' in last
    # RegionTwo untouched; the projects without anything there are gone
    assert two.exists('networks', far_net['id'])
    assert two.exists('keypairs', f'{u1["id"]}/far')
    assert not cloud.exists('projects', top['id'])
    assert not cloud.exists('projects', child['id'])
    assert cloud.exists('projects', other['id'])
    assert cloud.owned_by(other['id']) == []  # emptied in RegionOne
    assert cloud.get('projects', other['id'])['enabled'] is False
    # the domain stays, and its users with their keypairs everywhere
    assert cloud.exists('domains', c['domain']['id'])
    assert cloud.exists('users', u1['id']) and cloud.exists('users', u2['id'])
    assert cloud.exists('keypairs', f'{u2["id"]}/laptop')


def test_a_saved_plan_runs_as_shown(cloud, osc, tmp_path):
    c = customer(cloud, 'acme')
    path = str(tmp_path / 'plan.json')
    dry = save_plan(osc, path, 'acme')
    assert dry.code == 0, dry.stderr
    saved = json.load(open(path))
    assert c['domain']['id'] in {p['id'] for p in saved['projects']}
    assert cloud.changes == []
    result = run_plan(osc, path, 'acme')
    assert result.code == 0, result.stderr
    assert not cloud.exists('domains', c['domain']['id'])
    for project in c['projects']:
        assert not cloud.exists('projects', project['id'])


def test_what_the_saved_plan_did_not_show_stays(cloud, osc, tmp_path):
    """Made after the dry run: a project, a user's keypair, a group. Each
    stays, one line each, and keeps the domain; what was shown goes."""
    c = customer(cloud, 'acme')
    path = str(tmp_path / 'plan.json')
    dry = save_plan(osc, path, 'acme')
    assert dry.code == 0, dry.stderr
    d = c['domain']['id']
    late = scenarios.project(cloud, 'late', domain_id=d, parent_id=d)
    _u1, u2 = c['users']
    cloud.keypair(u2['id'], 'new')
    group = cloud.group('late-g', d)
    result = run_plan(osc, path, 'acme')
    assert result.code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert 'The domain was not deleted' in last
    assert f'project late ({late["id"]}): not deleted by the plan shown' in (
        last
    )
    assert f'user acme-u2 ({u2["id"]}): owns what the plan shown' in last
    assert f'late-g ({group["id"]}): not deleted by the plan shown' in last
    assert cloud.exists('projects', late['id'])
    assert cloud.exists('keypairs', f'{u2["id"]}/new')
    assert cloud.exists('groups', group['id'])
    assert cloud.exists('domains', d)
    # the shown projects went, each on its own
    for project in c['projects']:
        assert not cloud.exists('projects', project['id'])


def test_a_plan_of_another_domain_is_refused(cloud, osc, tmp_path):
    customer(cloud, 'acme')
    customer(cloud, 'twin')
    path = str(tmp_path / 'plan.json')
    dry = save_plan(osc, path, 'twin')
    assert dry.code == 0, dry.stderr
    result = run_plan(osc, path, 'acme')
    assert result.code == 1
    assert 'is not the plan of domain acme' in result.stderr
    assert cloud.changes == []


def test_a_plan_that_kept_the_domain_keeps_it(cloud, osc, tmp_path):
    """The dry run showed a project staying (so the domain): it stays,
    even once what kept it is gone, until a new plan shows it going."""
    c = customer(cloud, 'acme')
    *_, other = c['projects']
    cloud.db['projects'][other['id']]['options'] = {'immutable': True}
    path = str(tmp_path / 'plan.json')
    dry = save_plan(osc, path, 'acme')
    assert dry.code == 1
    cloud.db['projects'][other['id']]['options'] = {}
    result = run_plan(osc, path, 'acme')
    assert result.code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert 'the plan shown keeps the domain' in last
    assert f'project acme-other ({other["id"]}): not deleted' in last
    assert cloud.exists('projects', other['id'])
    assert cloud.owned_by(other['id']) != []
    assert cloud.exists('domains', c['domain']['id'])
    for user in c['users']:
        assert cloud.exists('users', user['id'])


def test_the_users_part_has_its_own_label(cloud, osc):
    customer(cloud, 'acme')
    result = osc('domain', 'delete', '--cascade', '--yes', 'acme')
    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()
    users = [
        n for n, line in enumerate(lines) if line.startswith("the users'")
    ]
    assert len(users) == 1
    assert "keypairs, credentials and trusts: 2 step(s)" in lines[users[0]]
    # the keypairs' deletes come after it, and no round 2 before them
    assert 'verification round 2' not in '\n'.join(lines[: users[0] + 3])
    keypairs = [n for n, line in enumerate(lines) if 'user.keypair' in line]
    assert keypairs and min(keypairs) > users[0]
