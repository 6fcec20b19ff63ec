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

"""Mistral on the minicloud (issue #31): its API on MySQL and RabbitMQ, no
engine (``tools/minicloud up --with mistral``); what
``osc_cascade.kinds.workflow`` rests on.

* an admin's list with ``all_projects`` and ``project_id`` is that
  project's (the filter holds), without ``project_id`` every project's;
  the event trigger list takes no filter (any is a 500);
* a member's workflow, cron trigger and event trigger are in the dry run,
  deleted by the cascade (the triggers first: Mistral refuses a workflow
  any project's trigger starts), gone after; another project's stay;
* a public workflow (an admin's to publish: ``workflows:publicize``) of
  P that Q's cron trigger starts is kept by P's
  cascade (P stays), and Q's trigger with it; Q's cascade deletes Q's
  trigger and never P's workflow;
* a member's list with ``all_projects`` is refused (403): its cascade
  (``--keep-project``) lists with no filter;
* a private workflow of P shared with Q (a workflow member, Q accepted):
  Mistral deletes a workflow's members with it, without a word; through
  P's token its members show and P's member's cascade keeps it; an admin
  of another project is shown none (an empty list, not a refusal), so
  its cascade keeps every private workflow unless ``--delete-shared``.
"""

from __future__ import annotations

import json

import pytest

from osc_cascade.kinds.workflow import MEMBERS_UNSEEN
from tests.functional import topology
from tests.functional.conftest import service_proxy
from tests.functional.members import Member
from tests.functional.topology import cascade, unique

pytestmark = [pytest.mark.functional, pytest.mark.mistral]

admin_workflow = service_proxy('workflowv2', 'Mistral', 'workflow')


def make_workflow(workflow, scope: str = 'private') -> str:
    name = unique('wf').replace('-', '_')
    text = (
        "version: '2.0'\n"
        f'{name}:\n'
        '  tasks:\n'
        '    noop:\n'
        '      action: std.noop\n'
    )
    answer = workflow.post(
        '/workflows',
        data=text,
        headers={'Content-Type': 'text/plain'},
        params={'scope': scope},
    )
    return answer.json()['workflows'][0]['id']


def make_cron_trigger(workflow, workflow_id: str) -> str:
    body = {
        'name': unique('cron'),
        'workflow_id': workflow_id,
        # never fired: the minicloud's Mistral runs no cron triggers
        'pattern': '0 0 1 1 *',
        'workflow_input': {},
    }
    return workflow.post('/cron_triggers', json=body).json()['id']


def make_event_trigger(workflow, workflow_id: str) -> str:
    body = {
        'name': unique('event'),
        'workflow_id': workflow_id,
        'exchange': 'nova',
        'topic': 'notifications',
        'event': 'compute.instance.create.end',
    }
    return workflow.post('/event_triggers', json=body).json()['id']


def listed(workflow, collection: str, **query) -> set[str]:
    answer = workflow.get(f'/{collection}', params={'limit': 1000, **query})
    return {o['id'] for o in answer.json()[collection]}


def exists(admin_workflow, collection: str, id_: str) -> bool:
    answer = admin_workflow.get(f'/{collection}/{id_}', raise_exc=False)
    assert answer.status_code in (200, 404), answer.text
    return answer.status_code == 200


def test_a_projects_workflows_and_triggers_go(admin, admin_workflow, cli):
    p = topology.make_project(admin, unique('mistral-p'))
    q = topology.make_project(admin, unique('mistral-q'))
    member_p = Member(admin, admin, p).connection().workflow
    member_q = Member(admin, admin, q).connection().workflow
    wf = make_workflow(member_p)
    cron = make_cron_trigger(member_p, wf)
    event = make_event_trigger(member_p, wf)
    their_wf = make_workflow(member_q)
    their_cron = make_cron_trigger(member_q, their_wf)

    # the admin's project filter holds, with all_projects and without
    everyone = {'all_projects': 'true'}
    assert listed(admin_workflow, 'workflows', project_id=p.id) == {wf}
    assert listed(
        admin_workflow, 'workflows', project_id=p.id, **everyone
    ) == {wf}
    assert listed(
        admin_workflow, 'cron_triggers', project_id=p.id, **everyone
    ) == {cron}
    # the event trigger list takes no filter: any is a 500
    refused = admin_workflow.get(
        '/event_triggers',
        params={'project_id': p.id, **everyone},
        raise_exc=False,
    )
    assert refused.status_code == 500, refused.text
    assert event in listed(admin_workflow, 'event_triggers', **everyone)
    assert {wf, their_wf} <= listed(admin_workflow, 'workflows', **everyone)

    # an admin is shown no member of P's private workflow: it is kept
    # with why, and P with it
    dry, run = cascade(cli, p.id)
    kept = {r['ID']: r['Reason'] for r in dry.json() if r['Action'] == 'keep'}
    assert kept.get(wf) == MEMBERS_UNSEEN, dry.stdout + dry.stderr
    assert run.code == 1, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is not None
    assert exists(admin_workflow, 'workflows', wf)

    dry, run = cascade(cli, p.id, '--delete-shared')
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert {
        ('workflow.workflow', wf),
        ('workflow.cron_trigger', cron),
        ('workflow.event_trigger', event),
    } <= planned
    assert not {their_wf, their_cron} & {i for _k, i in planned}
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is None
    assert not exists(admin_workflow, 'workflows', wf)
    assert not exists(admin_workflow, 'cron_triggers', cron)
    assert not exists(admin_workflow, 'event_triggers', event)
    assert exists(admin_workflow, 'workflows', their_wf)
    assert exists(admin_workflow, 'cron_triggers', their_cron)
    # Q's private workflow goes only when asked to (the module's clean-up
    # asks for no --delete-shared)
    _dry, run = cascade(cli, q.id, '--delete-shared')
    assert run.code == 0, run.stdout + run.stderr
    assert not exists(admin_workflow, 'workflows', their_wf)


def test_a_public_workflow_anothers_trigger_starts_is_kept(
    admin, admin_workflow, cli
):
    p = topology.make_project(admin, unique('mistral-pub'))
    q = topology.make_project(admin, unique('mistral-user'))
    member_q = Member(admin, admin, q).connection().workflow
    # publishing a workflow is an admin's (workflows:publicize): P's admin
    public = make_workflow(topology.scoped(admin, p).workflow, 'public')
    # Q sees P's public workflow, and starts it from its own trigger
    assert public in listed(member_q, 'workflows')
    their_cron = make_cron_trigger(member_q, public)

    dry, run = cascade(cli, p.id)
    assert dry.code == 1, dry.stdout + dry.stderr
    assert run.code == 1, run.stdout + run.stderr
    assert 'public workflow' in run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is not None
    assert exists(admin_workflow, 'workflows', public)
    assert exists(admin_workflow, 'cron_triggers', their_cron)

    # Q's cascade takes Q's trigger, never P's workflow
    dry, run = cascade(cli, q.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert ('workflow.cron_trigger', their_cron) in planned
    assert ('workflow.workflow', public) not in planned
    assert run.code == 0, run.stdout + run.stderr
    assert not exists(admin_workflow, 'cron_triggers', their_cron)
    assert exists(admin_workflow, 'workflows', public)

    # asked to, P's cascade deletes its public workflow, no longer used
    _dry, run = cascade(cli, p.id, '--delete-shared')
    assert run.code == 0, run.stdout + run.stderr
    assert not exists(admin_workflow, 'workflows', public)
    assert admin.identity.find_project(p.id) is None


def test_a_workflow_shared_with_another_project_is_kept_by_its_member(
    admin, admin_workflow
):
    """Through a token of its own project (the cascade without admin,
    ``--keep-project``) the workflow's members show, and it is kept; an
    admin of another project is shown none (200, an empty list)."""
    p = topology.make_project(admin, unique('mistral-owner'))
    q = topology.make_project(admin, unique('mistral-member'))
    member = Member(admin, admin, p)
    member_p = member.connection().workflow
    member_q = Member(admin, admin, q).connection().workflow
    wf = make_workflow(member_p)
    mine = make_workflow(member_p)
    member_p.post(f'/workflows/{wf}/members', json={'member_id': q.id})
    member_q.put(
        f'/workflows/{wf}/members/{q.id}', json={'status': 'accepted'}
    )
    assert wf in listed(member_q, 'workflows')
    # the admin is shown no member, without a refusal
    members = admin_workflow.get(f'/workflows/{wf}/members').json()
    assert members == {'members': []}
    # a member's list with all_projects is refused
    refused = member_p.get(
        '/workflows', params={'all_projects': 'true'}, raise_exc=False
    )
    assert refused.status_code == 403, refused.text

    keep = ('project', 'delete', '--cascade', '--keep-project')
    dry = member.run(*keep, '--dry-run', p.id, '-f', 'json')
    assert dry.returncode == 1, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in json.loads(dry.stdout)}
    assert ('workflow.workflow', mine) in planned
    run = member.run(*keep, '--yes', p.id)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f'shared with {q.id}' in run.stdout + run.stderr
    # a kept resource keeps the project: the run changes nothing
    assert exists(admin_workflow, 'workflows', wf)
    assert exists(admin_workflow, 'workflows', mine)
    assert wf in listed(member_q, 'workflows')

    # the member gone, the project's cascade deletes it
    member_p.delete(f'/workflows/{wf}/members/{q.id}')
    run = member.run(*keep, '--yes', p.id)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not exists(admin_workflow, 'workflows', wf)
    assert not exists(admin_workflow, 'workflows', mine)
