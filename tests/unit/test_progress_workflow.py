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

"""The cascade's own progress: the drain, each verification round and the
project deletion, as lines and as ``--progress json`` events, through the
same ``on_event`` path as the executor's steps."""

import io
import json

from osc_cascade.v1.progress import Progress
from osc_cascade.workflows import after_delete
from osc_cascade.workflows.cascade import without_projects
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import cascade_for
from tests.unit.test_cascade import _Reappearing


def cascade_with_progress(cloud, pid, fmt):
    """The cascade run, the project deleted as OSC does, then finished;
    what its Progress wrote."""
    out = io.StringIO()
    progress = Progress(out, fmt=fmt, rounds='verification round')
    pc, targets, plan = cascade_for(cloud, pid, verify_rounds=2)
    pc.on_event = progress
    progress.add_total(len(without_projects(plan).steps))
    outcome = pc.execute(plan, targets)
    pc.conn.identity.delete_project(pid)
    after_delete.finish(pc, outcome)
    return out.getvalue().splitlines()


def test_json_events_of_a_cascade_in_order():
    with ServicesCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        cloud.set_quota('nova', pid, instances=50)
        net, _subnet = scenarios.network(cloud, pid)
        records = [
            json.loads(line)
            for line in cascade_with_progress(cloud, pid, 'json')
        ]
    events = [r['event'] for r in records]
    # the drain first, the project last, a round before each run of steps
    # and one for the verification that found nothing
    assert events == [
        'drain',
        'round',
        *['started', 'done'] * 2,  # the subnet, then the network
        'round',
        'project',
    ]
    drain, first, verification, project = (
        r for r in records if r['event'] not in ('started', 'done')
    )
    assert drain['action'] == 'drain'
    assert drain['kind'] == 'identity.project'
    assert drain['id'] == pid
    assert drain['outcome'] == 'done'
    assert drain['message'].startswith('disabled, ')
    assert drain['message'].endswith(' quota set(s) frozen')
    assert first == {'event': 'round', 'round': 1, 'steps': 2, 'total': 2}
    assert records[-3]['id'] == net['id']
    assert records[-3]['round'] == 1
    # the verification found nothing: a round of its own, with no steps
    assert verification == {
        'event': 'round',
        'round': 2,
        'verification': 1,
        'steps': 0,
        'total': 2,
    }
    assert project == {
        'event': 'project',
        'action': 'delete',
        'kind': 'identity.project',
        'region': '',
        'id': pid,
        'name': 'A',
        'outcome': 'done',
    }


def test_lines_of_a_cascade_say_drain_round_and_project():
    with ServicesCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        scenarios.network(cloud, pid)
        lines = cascade_with_progress(cloud, pid, 'human')
    assert lines[0].startswith(f'drain: drain identity.project A ({pid}) (')
    assert lines[0].endswith(' quota set(s) frozen')
    assert lines[1].startswith('[1/2] done: delete network.subnet')
    assert lines[2].startswith('[2/2] done: delete network.network')
    assert lines[3:] == [
        'verification round 1: nothing left',
        f'project: delete identity.project A ({pid})',
    ]


def test_a_verification_round_that_finds_more_is_announced_once():
    with _Reappearing() as cloud:
        p = scenarios.project(cloud, 'A')
        cloud.project_id = p['id']
        scenarios.server(cloud, p['id'])
        out = io.StringIO()
        progress = Progress(out, fmt='json', rounds='verification round')
        pc, targets, plan = cascade_for(cloud, p['id'], verify_rounds=3)
        pc.on_event = progress
        progress.add_total(len(without_projects(plan).steps))
        pc.execute(plan, targets)
    rounds = [
        r
        for r in map(json.loads, out.getvalue().splitlines())
        if r['event'] == 'round'
    ]
    # the plan; the late volume found and deleted; then nothing left
    assert [
        (r['round'], r.get('verification'), r['steps']) for r in rounds
    ] == [
        (1, None, 1),
        (2, 1, 1),
        (3, 2, 0),
    ]
    assert rounds[1]['total'] == 2


def test_a_project_that_is_still_there_is_a_failed_project_event():
    with ServicesCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        out = io.StringIO()
        progress = Progress(out)
        pc, targets, plan = cascade_for(cloud, pid)
        pc.on_event = progress
        outcome = pc.execute(plan, targets)
        after_delete.finish(pc, outcome)  # OSC did not delete it
    assert out.getvalue().splitlines()[-1] == (
        f'project: delete identity.project A ({pid}): still exists: its '
        'quotas stay frozen'
    )
