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
  nothing in Aodh is shared across projects).

Alarms are event alarms, made as a member would: their rule names no
metric store (a threshold alarm's create asks Gnocchi, which the minicloud
does not run).
"""

from __future__ import annotations

import pytest

from tests.functional import topology
from tests.functional.conftest import service_proxy
from tests.functional.members import Member
from tests.functional.topology import cascade, unique

pytestmark = [pytest.mark.functional, pytest.mark.aodh]

admin_alarming = service_proxy('alarming', 'Aodh', 'alarming')


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
