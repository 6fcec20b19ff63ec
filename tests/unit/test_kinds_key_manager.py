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

"""Barbican: what the cascade cannot reach is said, not silently skipped;
its quotas, which it can reach, are reset."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.workflows import after_delete
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ENDPOINTS_WITH_HEAT, ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import cascade_for

BARBICAN = 'key_manager.container, key_manager.order, key_manager.secret'


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def test_secrets_containers_and_orders_are_noted_as_beyond_reach(cloud):
    a = scenarios.project(cloud, 'A')['id']
    _refs, notes = Discovery(
        cloud.connection(), kinds_mod.build(), clock=FakeClock()
    ).run([a])
    [note] = [n for n in notes if 'key_manager.secret' in n]
    assert note.startswith(f'not listed: {BARBICAN}: ')
    assert 'scoped to their own project' in note
    # what the real Barbican showed (tests/functional/test_real_barbican):
    # it is the list that no admin has, whatever its filter; an admin may
    # read and delete a secret whose ID it knows
    assert 'lists them only to a token scoped to their own project' in note
    assert 'ignores any project filter' in note
    assert 'shows and deletes them only' not in note
    assert 'stay in Barbican' in note
    assert not [
        p
        for _, p in cloud.requests
        if '/secrets' in p or '/orders' in p or '/containers' in p
    ]


def test_without_barbican_the_note_is_the_missing_service_one():
    services = list(ENDPOINTS_WITH_HEAT)
    with ServicesCloud(services=services) as cloud:
        a = scenarios.project(cloud, 'A')['id']
        _refs, notes = Discovery(
            cloud.connection(), kinds_mod.build(), clock=FakeClock()
        ).run([a])
    assert (
        f'service key-manager is not in the catalog: skipped '
        f'{BARBICAN}, quota.key_manager'
    ) in notes
    assert not [n for n in notes if n.startswith('not listed')]


def test_the_projects_barbican_quota_is_reset(cloud):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    cloud.set_quota('barbican', a, secrets=5)
    cloud.set_quota('barbican', b, secrets=5)
    pc, targets, plan = cascade_for(cloud, a, settle=60)
    # quotas are no steps: frozen by the drain, reset once the project is
    # gone and the settle is over (after_delete.finish)
    assert step_id('delete', 'quota.key_manager', a) not in plan.steps

    outcome = pc.execute(plan, targets)
    assert cloud.quota_of('barbican', a)['secrets'] == 0
    pc.conn.identity.delete_project(a)
    assert after_delete.finish(pc, outcome) == [
        'settle: 0 resource(s) appeared after the delete and were deleted'
    ]

    assert not cloud.has_quota('barbican', a)
    assert cloud.quota_of('barbican', b) == {'secrets': 5}


def test_the_fake_answers_as_the_real_barbican_does_about_quotas(cloud):
    """The minicloud's Barbican 23 (tests/functional/test_real_barbican):
    a project without a quota of its own is a 404 to GET and to DELETE,
    and one with a quota shows every quota resource, None where unset."""
    a = scenarios.project(cloud, 'A')['id']
    km = cloud.connection().key_manager
    for method in ('GET', 'DELETE'):
        answer = km.request(f'/project-quotas/{a}', method, raise_exc=False)
        assert answer.status_code == 404, method
    cloud.set_quota('barbican', a, secrets=5)
    assert km.get(f'/project-quotas/{a}').json() == {
        'project_quotas': {
            'secrets': 5,
            'orders': None,
            'containers': None,
            'consumers': None,
            'cas': None,
        }
    }
    assert km.delete(f'/project-quotas/{a}').status_code == 204
    assert km.get(f'/project-quotas/{a}', raise_exc=False).status_code == 404
