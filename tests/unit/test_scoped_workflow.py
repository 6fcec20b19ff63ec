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

"""Mistral through a token scoped to the project (the cascade without
cloud admin, ``workflows.scoped``), as the minicloud's Mistral 23 answers
it (``tests/functional/test_real_mistral.py``): ``all_projects`` is an
admin's (403), and a non-admin's list has the public workflows of other
projects and those shared with it; a workflow's members are shown to its
own project alone, so a workflow shared with another project is kept
through the project's token (Mistral deletes its members with it)."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.kinds import workflow
from osc_cascade.workflows.cascade import CascadeOptions
from tests.unit import scenarios
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import scoped_cascade
from tests.unit.fakes.scoped import ScopedMistralCloud

DOMAIN = 'dom-managed'


@pytest.fixture
def cloud():
    with ScopedMistralCloud() as c:
        yield c


@pytest.fixture
def world(cloud):
    """Project target with a workflow and its triggers, another's public
    workflow and one the other shares with target; target's member."""
    target = scenarios.project(
        cloud, 'target', domain_id=DOMAIN, parent_id=DOMAIN
    )
    other = scenarios.project(cloud, 'other', domain_id=DOMAIN)
    pid, oid = target['id'], other['id']
    alice = cloud.add_user('alice', DOMAIN)
    cloud.assign(alice, 'member', project=target)
    wf = cloud.mistral('workflows', pid, scope='private')
    given = cloud.mistral('workflows', oid, scope='private')
    cloud.mistral_share(given['id'], pid)
    return {
        'pid': pid,
        'oid': oid,
        'alice': alice,
        'wf': wf,
        'cron': cloud.mistral('cron_triggers', pid, workflow_id=wf['id']),
        'event': cloud.mistral('event_triggers', pid, workflow_id=wf['id']),
        'public': cloud.mistral('workflows', oid, scope='public'),
        'given': given,
    }


def as_alice(cloud, world):
    return cloud.connection_as(world['alice'], project_id=world['pid'])


@pytest.mark.parametrize(
    'kind',
    [
        workflow.Workflow.name,
        workflow.CronTrigger.name,
        workflow.EventTrigger.name,
    ],
)
def test_each_kind_lists_the_projects_own_without_all_projects(
    cloud, world, kind
):
    pid = world['pid']
    refs = kinds_mod.build(scoped=True)[kind].list(as_alice(cloud, world), pid)

    # the other project's public and shared workflows are not target's
    assert [r.project_id for r in refs] == [pid]


def test_a_members_cascade_deletes_its_workflow_and_triggers(cloud, world):
    wf = scoped_cascade(as_alice(cloud, world), keep_project=True)
    targets = wf.resolve(['target'])
    wf.execute(wf.plan(targets), targets)

    for coll, key in (
        ('workflows', 'wf'),
        ('cron_triggers', 'cron'),
        ('event_triggers', 'event'),
    ):
        assert not cloud.exists(coll, world[key]['id']), coll
    assert cloud.exists('workflows', world['public']['id'])
    assert cloud.exists('workflows', world['given']['id'])


def test_a_workflow_shared_with_another_project_is_kept(cloud, world):
    own = world['wf']['id']
    cloud.mistral_share(own, world['oid'])
    wf = scoped_cascade(as_alice(cloud, world), keep_project=True)
    plan = wf.plan(wf.resolve(['target']))

    kept = plan.steps[step_id('keep', workflow.Workflow.name, own)]
    assert kept.params['reason'] == f'shared with {world["oid"]}'
    assert kept.params['shared'] is True

    wf = scoped_cascade(
        as_alice(cloud, world),
        options=CascadeOptions(delete_shared=True),
        keep_project=True,
    )
    plan = wf.plan(wf.resolve(['target']))
    assert step_id('delete', workflow.Workflow.name, own) in plan.steps


def test_the_fake_answers_as_mistral_does(cloud, world):
    """all_projects is refused to a member; a workflow's members are shown
    to its project, and to an admin of another project as none."""
    member = as_alice(cloud, world).workflow
    refused = member.get('/workflows', params={'all_projects': 'true'})
    assert refused.status_code == 403
    cloud.mistral_share(world['wf']['id'], world['oid'])
    path = f'/workflows/{world["wf"]["id"]}/members'
    assert [m['member_id'] for m in member.get(path).json()['members']] == [
        world['oid']
    ]
    assert cloud.connection().workflow.get(path).json() == {'members': []}


def test_event_triggers_are_listed_without_a_project_filter(cloud, world):
    """Mistral 23's event trigger list takes no filter at all (its
    ``**filters`` answer a 500, "'NoneType' object has no attribute
    'datatype'", on the minicloud): an admin lists every project's, and
    keeps the project's."""
    admin = cloud.connection()
    refused = admin.workflow.get(
        '/event_triggers',
        params={'all_projects': 'true', 'project_id': world['pid']},
    )
    assert refused.status_code == 500
    theirs = cloud.mistral('event_triggers', world['oid'], workflow_id='w')
    kind = kinds_mod.build()[workflow.EventTrigger.name]

    assert [r.id for r in kind.list(admin, world['pid'])] == [
        world['event']['id']
    ]
    assert {r.id for r in kind.list(admin, None)} == {
        world['event']['id'],
        theirs['id'],
    }
