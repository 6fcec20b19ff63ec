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

"""Aodh on the minicloud (issue #31): its API on MySQL, no evaluator
(``tools/minicloud up --with aodh``); what ``osc_cascade.kinds.alarming``
rests on.

* an admin's alarm list with a ``project_id`` query is that project's
  (the filter holds), with ``all_projects`` every project's; a member
  asking for another project's is refused;
* a member's alarms are in the dry run, deleted by the cascade, gone
  after; another project's alarm stays (alarms belong to one project:
  nothing in Aodh is shared across projects);
* without admin: a member empties its own project's alarms, and a domain
  manager's cascade of a project of its domain takes its alarms with it.

Alarms are event alarms, made as a member would: their rule names no
metric store (a threshold alarm's create asks Gnocchi, which the minicloud
does not run).
"""

from __future__ import annotations

import openstack
import pytest

from tests.functional import topology
from tests.functional.conftest import run_openstack, service_proxy
from tests.functional.members import Member, domain_member, domain_project
from tests.functional.topology import cascade, unique

pytestmark = [pytest.mark.functional, pytest.mark.aodh]

admin_alarming = service_proxy('alarming', 'Aodh', 'alarming')

#: the manager of domain ``managed`` (tests/functional/test_without_admin.py)
MANAGER_CLOUD = 'minicloud-manager'


def make_alarm(alarming, name: str) -> str:
    body = {
        'name': name,
        'type': 'event',
        'event_rule': {'event_type': 'compute.instance.update'},
        # never called: no evaluator runs (log:// is an admin's action)
        'alarm_actions': ['http://127.0.0.1:9/alarm'],
    }
    answer = alarming.post('/alarms', json=body, raise_exc=False)
    assert answer.status_code == 201, answer.text
    return answer.json()['alarm_id']


def listed(alarming, field: str, value: str) -> set[str]:
    answer = alarming.get(
        '/alarms',
        params={'q.field': field, 'q.op': 'eq', 'q.value': value},
    )
    return {a['alarm_id'] for a in answer.json()}


def test_a_projects_alarms_go_and_anothers_stay(admin, admin_alarming, cli):
    p = topology.make_project(admin, unique('aodh-p'))
    q = topology.make_project(admin, unique('aodh-q'))
    member_p = Member(admin, admin, p).connection().alarming
    member_q = Member(admin, admin, q).connection().alarming
    mine = make_alarm(member_p, unique('alarm'))
    theirs = make_alarm(member_q, unique('alarm'))

    # the admin's project filter holds; all_projects is everyone's
    assert listed(admin_alarming, 'project_id', p.id) == {mine}
    assert {mine, theirs} <= listed(admin_alarming, 'all_projects', 'true')
    # a member may not ask for another project's alarms
    refused = member_p.get(
        '/alarms',
        params={'q.field': 'project_id', 'q.op': 'eq', 'q.value': q.id},
        raise_exc=False,
    )
    assert refused.status_code in (401, 403), refused.text

    dry, run = cascade(cli, p.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert ('alarming.alarm', mine) in planned
    assert ('alarming.alarm', theirs) not in planned
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is None
    gone = admin_alarming.get(f'/alarms/{mine}', raise_exc=False)
    assert gone.status_code == 404, gone.text
    assert admin_alarming.get(f'/alarms/{theirs}').json()['name']


def test_a_member_empties_its_projects_alarms_without_admin(
    admin, admin_alarming
):
    """A member's own cascade (``--keep-project``, no admin anywhere) finds
    and deletes its project's alarms; another project's stays."""
    member = domain_member(admin, 'aodh-keep')
    mine = make_alarm(member.connection().alarming, unique('alarm'))
    other = topology.make_project(admin, unique('aodh-other'))
    theirs = make_alarm(
        Member(admin, admin, other).connection().alarming, unique('alarm')
    )
    kept = member.run(
        'project', 'delete', '--cascade', '--keep-project', '--yes',
        member.project.id,
    )  # fmt: skip
    assert kept.returncode == 0, kept.stdout + kept.stderr
    gone = admin_alarming.get(f'/alarms/{mine}', raise_exc=False)
    assert gone.status_code == 404, gone.text
    assert admin_alarming.get(f'/alarms/{theirs}').json()['name']


def test_a_domain_managers_cascade_deletes_the_projects_alarms(
    admin, admin_alarming
):
    """The domain manager (no admin anywhere) cascades a project of its
    domain: the alarm a member made goes with the project."""
    manager = openstack.connect(cloud=MANAGER_CLOUD)
    domain = admin.identity.find_domain('managed')
    project = domain_project(manager, domain, 'aodh-managed')
    member = Member(admin, manager, project)
    mine = make_alarm(member.connection().alarming, unique('alarm'))
    result = run_openstack(
        'project', 'delete', '--cascade', '--yes', project.id,
        cloud=MANAGER_CLOUD,
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    assert admin.identity.find_project(project.id) is None
    gone = admin_alarming.get(f'/alarms/{mine}', raise_exc=False)
    assert gone.status_code == 404, gone.text
