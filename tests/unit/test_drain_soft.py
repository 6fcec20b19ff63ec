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

"""The soft delete's part of the drain record: when the drain completed and
who ran it (``drained_at``, ``drained_by``), and the list of drained
projects the sweep reads from Keystone."""

import datetime
import json

import pytest

from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.regions import Regions
from osc_cascade.workflows import drain, drain_record
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.run import zero_delays


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def drainer(cloud, now):
    conn = cloud.connection()
    return drain.Drain(
        conn,
        Regions(conn),
        retry=zero_delays(),
        clock=FakeClock(),
        now=lambda: now,
    )


def test_drained_at_is_the_first_completed_drain(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    record, _ = drainer(cloud, '2026-01-01T00:00:00+00:00').drain(pid)
    assert record[drain_record.DRAINED_AT] == '2026-01-01T00:00:00+00:00'
    assert record[drain_record.DRAINED_BY]['user_id']
    # a later run (the sweep's cascade) continues the record: the age
    # still counts from the first drain
    again, _ = drainer(cloud, '2026-02-01T00:00:00+00:00').drain(pid)
    assert again[drain_record.DRAINED_AT] == '2026-01-01T00:00:00+00:00'
    assert again['started_at'] == '2026-01-01T00:00:00+00:00'


def test_the_drained_projects_oldest_first(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    scenarios.project(cloud, 'C')  # never drained
    drainer(cloud, '2026-03-01T00:00:00Z').drain(a)
    drainer(cloud, '2026-01-01T00:00:00Z').drain(b)
    found, notes = drain_record.drained_projects(cloud.connection())
    assert notes == []
    assert [d.id for d in found] == [b, a]
    assert found[0].drained_at == datetime.datetime(
        2026, 1, 1, tzinfo=datetime.UTC
    )
    assert found[0].stage == drain_record.DRAINED
    assert found[0].drained_by


def test_a_record_without_drained_at_counts_from_its_start(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.get('projects', pid).update(
        {
            drain_record.RECORD: json.dumps(
                {'started_at': '2020-01-01T00:00:00Z', 'stage': 'draining'}
            ),
            'enabled': False,
        }
    )
    [found], _ = drain_record.drained_projects(cloud.connection())
    assert found.drained_at.year == 2020


def test_a_record_on_a_project_the_drain_never_disabled_is_not_listed(cloud):
    # a run killed between its first write and the disable: the project
    # was never drained (it can still create)
    pid = scenarios.project(cloud, 'A')['id']
    cloud.get('projects', pid)[drain_record.RECORD] = json.dumps(
        {'started_at': '2020-01-01T00:00:00Z', 'stage': 'draining'}
    )
    assert drain_record.drained_projects(cloud.connection()) == ([], [])


def test_only_the_disabled_projects_are_listed_under_a_list_limit(cloud):
    # Keystone's list_limit cuts the list of all projects and that of the
    # domains (the minicloud's list_limit = 2): the list of the disabled
    # projects is whole, and is all the sweep needs
    drained = scenarios.project(cloud, 'A')['id']
    for name in 'BCDE':
        scenarios.project(cloud, name)
    for domain in ('default', 'other', 'third'):
        cloud.add('domains', id=domain, name=domain)
    cloud.list_limits['projects'] = 3
    cloud.list_limits['domains'] = 2
    drainer(cloud, '2026-01-01T00:00:00Z').drain(drained)
    found, notes = drain_record.drained_projects(cloud.connection())
    assert notes == []
    assert [d.id for d in found] == [drained]


def test_a_record_that_is_not_json_is_a_note(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.get('projects', pid).update(
        {drain_record.RECORD: '{not json', 'enabled': False}
    )
    found, notes = drain_record.drained_projects(cloud.connection())
    assert found == []
    assert 'is not a JSON object: left alone' in notes[0]


def test_a_truncated_list_is_listed_again_per_domain(cloud):
    pid = scenarios.project(cloud, 'A')['id']
    drainer(cloud, '2026-01-01T00:00:00Z').drain(pid)
    cloud.add('domains', id='default', name='Default')
    cloud.list_limits['projects'] = 1
    # per domain, still cut: refused rather than a partial sweep
    with pytest.raises(CascadeError, match="list_limit"):
        drain_record.drained_projects(cloud.connection())
    cloud.list_limits['projects'] = 3
    scenarios.project(cloud, 'B', domain_id='other')
    cloud.add('domains', id='other', name='Other')
    found, _ = drain_record.drained_projects(cloud.connection())
    assert [d.id for d in found] == [pid]


def test_a_keystone_that_pages_gives_every_drained_project(cloud):
    # the minicloud's Keystone: list_limit = 2, every full page flagged
    # truncated, the next one linked (marker)
    drained = [scenarios.project(cloud, f'D{i}')['id'] for i in range(5)]
    for name in 'EFG':
        scenarios.project(cloud, name)
    for pid in drained:
        drainer(cloud, '2026-01-01T00:00:00Z').drain(pid)
    cloud.list_limits['projects'] = 2
    cloud.list_limits['domains'] = 1
    cloud.pages.add('projects')
    found, _ = drain_record.drained_projects(cloud.connection())
    assert sorted(d.id for d in found) == sorted(drained)
    # a page asked for is capped (max_db_limit): the marker goes on
    cloud.max_db_limit = 2
    found, _ = drain_record.drained_projects(cloud.connection())
    assert sorted(d.id for d in found) == sorted(drained)


class Conn:
    identity = None


class Answer:
    def __init__(self, body):
        self.body = body

    def json(self):
        return self.body


def test_pages_are_read_until_one_is_not_full(monkeypatch):
    # a Keystone whose max_db_limit caps every page at 2
    markers = []

    def request(proxy, method, path, params=None):
        markers.append(params.get('marker'))
        ids = [f'p{i}' for i in range(5)]
        page = [i for i in ids if i > (params.get('marker') or '')][:2]
        body = {'projects': [{'id': i} for i in page], 'links': {}}
        if len(page) == 2:
            body['truncated'] = True
            body['links']['next'] = f'/v3/projects?limit=2&marker={page[-1]}'
        return Answer(body)

    monkeypatch.setattr(keystone, 'request', request)
    found = keystone.all_projects(Conn(), enabled='false')
    assert not found.truncated
    assert [p['id'] for p in found.items] == [f'p{i}' for i in range(5)]
    assert markers == [None, 'p1', 'p3']


def test_a_keystone_that_does_not_page_leaves_the_list_truncated(
    monkeypatch,
):
    calls = []

    def request(proxy, method, path, params=None):
        calls.append(params)
        # an older Keystone: no next link, whatever is asked
        return Answer(
            {'projects': [{'id': 'a'}, {'id': 'b'}], 'truncated': True}
        )

    monkeypatch.setattr(keystone, 'request', request)
    found = keystone.all_projects(Conn(), enabled='false')
    assert found.truncated
    assert len(calls) == 1
    with pytest.raises(CascadeError, match="truncated by Keystone's"):
        keystone.complete('The list', found)
