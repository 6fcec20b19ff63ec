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

"""A selective cleanup (``project delete --cascade --created-before ...``)
through the real OSC shell, on the fake cloud."""

import argparse
import json

import pytest

from osc_cascade.v1.selection import when
from tests.unit import scenarios

OLD, NEW = '2025-12-01T00:00:00', '2025-12-20T00:00:00'
BOUNDARY = '2025-12-10T00:00:00'


def two_ages(cloud):
    """Old: a network, its subnet, a port on it, a network of its own,
    an image; new: a port on the old network, an image tagged keep."""
    p = scenarios.project(cloud, 'ci')
    pid = p['id']
    net, subnet = scenarios.network(cloud, pid)
    lone, _lone_subnet = scenarios.network(cloud, pid, 'lone', '10.1.0.0/24')
    old_port = scenarios.port(cloud, pid, net, subnet, 'old-port')
    new_port = scenarios.port(cloud, pid, net, subnet, 'new-port')
    old_image = scenarios.image(cloud, pid, 'old-image', tags=[])
    kept_image = scenarios.image(cloud, pid, 'kept-image', tags=['keep'])
    for collection in ('networks', 'subnets', 'ports', 'images'):
        for obj in cloud.all(collection):
            if obj.get('project_id', obj.get('owner')) == pid:
                obj['created_at'] = OLD
                obj.setdefault('tags', [])
    new_port['created_at'] = NEW
    return {
        'project': p,
        'net': net,
        'subnet': subnet,
        'lone': lone,
        'old_port': old_port,
        'new_port': new_port,
        'old_image': old_image,
        'kept_image': kept_image,
    }


def run_plan(osc, saved):
    """The run of the plan file ``saved``, for project ci."""
    return osc(
        'project',
        'delete',
        '--cascade',
        '--yes',
        '--plan-file',
        str(saved),
        'ci',
    )


def rows(result):
    assert result.code == 0, result.stderr
    return {r['ID']: r for r in json.loads(result.stdout)}


def test_created_before_keeps_the_old_network_under_a_new_port(cloud, osc):
    w = two_ages(cloud)
    plan = rows(
        osc(
            'project',
            'delete',
            '--cascade',
            '--dry-run',
            '--created-before',
            BOUNDARY,
            'ci',
            '-f',
            'json',
        )
    )
    assert cloud.changes == []
    assert plan[w['old_port']['id']]['Action'] == 'delete'
    assert plan[w['lone']['id']]['Action'] == 'delete'
    assert plan[w['new_port']['id']]['Action'] == 'keep'
    assert plan[w['net']['id']]['Action'] == 'keep'
    assert 'new-port' in json.dumps(plan[w['subnet']['id']])
    assert plan[w['project']['id']]['Action'] == 'keep'

    result = osc(
        'project',
        'delete',
        '--cascade',
        '--yes',
        '--created-before',
        BOUNDARY,
        'ci',
    )
    assert result.code == 0, result.stderr
    # the run keeps the network for the reason its preview showed
    assert 'new-port' in next(
        line for line in result.stderr.splitlines() if w['net']['id'] in line
    )
    assert cloud.exists('projects', w['project']['id'])
    assert cloud.get('projects', w['project']['id'])['enabled']
    assert not cloud.exists('ports', w['old_port']['id'])
    assert not cloud.exists('networks', w['lone']['id'])
    assert not cloud.exists('images', w['old_image']['id'])
    for kept in ('new_port',):
        assert cloud.exists('ports', w[kept]['id'])
    assert cloud.exists('networks', w['net']['id'])
    assert cloud.exists('subnets', w['subnet']['id'])


def test_not_tags_keeps_what_is_tagged(cloud, osc):
    w = two_ages(cloud)
    result = osc(
        'project', 'delete', '--cascade', '--yes', '--not-tags', 'keep', 'ci'
    )
    assert result.code == 0, result.stderr
    assert cloud.exists('images', w['kept_image']['id'])
    assert not cloud.exists('images', w['old_image']['id'])
    assert cloud.exists('projects', w['project']['id'])


def test_the_run_keeps_what_was_tagged_keep_after_the_preview(
    cloud, osc, tmp_path
):
    w = two_ages(cloud)
    saved = str(tmp_path / 'plan.json')
    dry = osc(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--not-tags',
        'keep',
        '--plan-file',
        saved,
        'ci',
    )
    assert dry.code == 0, dry.stderr
    w['old_image']['tags'] = ['keep']
    late = scenarios.image(cloud, w['project']['id'], 'late', tags=[])
    result = run_plan(osc, saved)
    assert result.code == 0, result.stderr
    assert cloud.exists('images', w['old_image']['id'])
    # not in the preview: not deleted
    assert cloud.exists('images', late['id'])
    assert not cloud.exists('ports', w['old_port']['id'])


def test_an_edited_plan_keeps_a_dropped_row_and_what_needs_it(
    cloud, osc, tmp_path
):
    w = two_ages(cloud)
    w['new_port']['created_at'] = OLD
    saved = tmp_path / 'plan.json'
    dry = osc(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--created-before',
        BOUNDARY,
        '--plan-file',
        str(saved),
        'ci',
    )
    assert dry.code == 0, dry.stderr
    data = json.loads(saved.read_text())
    (key,) = [k for k in data['selected'] if w['new_port']['id'] in k]
    assert data['selected'][key].startswith('delete: ')
    data['selected'][key] = data['selected'][key].replace('delete', 'keep', 1)
    saved.write_text(json.dumps(data, indent=2))
    result = run_plan(osc, saved)
    assert result.code == 0, result.stderr
    assert cloud.exists('ports', w['new_port']['id'])
    assert cloud.exists('networks', w['net']['id'])
    assert not cloud.exists('ports', w['old_port']['id'])


def test_an_edit_outside_the_rows_is_refused_in_one_line(cloud, osc, tmp_path):
    two_ages(cloud)
    saved = tmp_path / 'plan.json'
    osc(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--skip-resource',
        'image.image',
        '--plan-file',
        str(saved),
        'ci',
    )
    data = json.loads(saved.read_text())
    data['selection'] = {}
    saved.write_text(json.dumps(data))
    result = run_plan(osc, saved)
    assert result.code == 1
    assert 'changed outside its "selected" rows' in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert [m for m, _p in cloud.changes if m == 'DELETE'] == []


def test_unknown_type_and_bad_time_are_refused(cloud, osc):
    two_ages(cloud)
    bad = osc(
        'project',
        'delete',
        '--cascade',
        '--skip-resource',
        'network.prt',
        'ci',
    )
    assert bad.code == 1
    assert 'unknown resource type network.prt' in bad.stderr
    with pytest.raises(SystemExit) as exit_:
        osc(
            'project',
            'delete',
            '--cascade',
            '--created-before',
            'yesterday',
            'ci',
        )
    assert exit_.value.code == 2
    with pytest.raises(argparse.ArgumentTypeError, match='neither a time'):
        when('yesterday')
    assert when('7d') == 7 * 86400.0
    # an age of 0 (now) is given all the same
    assert when('0s') == 0 and when('0s')
    assert when('2026-11-28T01:00:00+01:00') == '2026-11-28T00:00:00+00:00'
    stray = osc('project', 'delete', '--not-tags', 'keep', 'ci')
    assert stray.code == 1
    assert '--not-tags needs --cascade' in stray.stderr


def test_orphan_purge_takes_the_same_selection(cloud, osc):
    w = two_ages(cloud)
    cloud.db['projects'].pop(w['project']['id'])
    cloud.add('domains', id='default', name='Default')
    dry = osc(
        'orphan',
        'purge',
        '--dry-run',
        '--created-before',
        BOUNDARY,
        '-f',
        'json',
    )
    plan = rows(dry)
    assert plan[w['net']['id']]['Action'] == 'keep'
    assert plan[w['old_port']['id']]['Action'] == 'delete'
    assert cloud.changes == []
    result = osc('orphan', 'purge', '--yes', '--created-before', BOUNDARY)
    assert result.code == 0, result.stderr
    assert not cloud.exists('ports', w['old_port']['id'])
    assert not cloud.exists('images', w['old_image']['id'])
    assert cloud.exists('ports', w['new_port']['id'])
    assert cloud.exists('networks', w['net']['id'])
    assert cloud.exists('subnets', w['subnet']['id'])


def test_a_member_cleans_its_project_selectively_through_its_token():
    from osc_cascade.engine.selection import Selection
    from osc_cascade.workflows import selective
    from osc_cascade.workflows.cascade import CascadeOptions
    from tests.unit.fakes.clock import FakeClock
    from tests.unit.fakes.run import zero_delays
    from tests.unit.fakes.scoped import ScopedCloud

    with ScopedCloud() as cloud:
        project = scenarios.project(
            cloud, 'target', domain_id='dom', parent_id='dom'
        )
        pid = project['id']
        alice = cloud.add_user('alice', 'dom')
        cloud.assign(alice, 'member', project=project)
        net, subnet = scenarios.network(cloud, pid)
        vm = scenarios.server(cloud, pid, net=net, subnet=subnet)
        image = scenarios.image(cloud, pid, 'img')
        wf = selective.ScopedSelectiveCascade(
            cloud.connection_as(alice, project_id=pid),
            CascadeOptions(),
            selection=Selection(skip=('compute.server',)),
            clock=FakeClock(),
            retry=zero_delays(),
        )
        targets = wf.resolve(['target'])
        plan = wf.plan(targets)
        outcome = wf.execute(plan, targets)

        assert outcome.empty_projects == []
        assert cloud.exists('servers', vm['id'])
        # the server's network stays under it; the image goes
        assert cloud.exists('networks', net['id'])
        assert not cloud.exists('images', image['id'])
        assert cloud.get('projects', pid)['enabled'] is True
        assert cloud.roles_of(alice['id'], project_id=pid) == ['member']
