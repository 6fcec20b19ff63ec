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

"""The project's access to private flavors, volume types and share types:
taken off each access list; the flavor or type, and the others' access to
it, stay."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import DONE
from osc_cascade.kinds import block_storage, compute, shared_file_system
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.run import cascade_for, run_kind

#: kind -> the fake's service and collection
ACCESS = {
    compute.FlavorAccess.name: ('nova', 'flavors'),
    block_storage.VolumeTypeAccess.name: ('cinder', 'volume_types'),
    shared_file_system.ShareTypeAccess.name: ('manila', 'share_types'),
}


@pytest.fixture
def cloud():
    # nova answers two flavors a page: the flavor list must be paged
    with ServicesCloud(nova_max_limit=2) as c:
        yield c


@pytest.fixture
def abc(cloud):
    return [scenarios.project(cloud, n)['id'] for n in 'ABC']


@pytest.mark.parametrize('name', sorted(ACCESS))
def test_lists_the_projects_access_and_removes_it_alone(cloud, abc, name):
    service, coll = ACCESS[name]
    a, b, c = abc
    # the one A may use comes last in the list, beyond the first pages
    for n in range(4):
        cloud.private_type(service, f'other-{n}', [b])
    cloud.private_type(service, 'public', public=True)
    gold = cloud.private_type(service, 'zz-gold', [a, b])
    kind = kinds_mod.build()[name]
    conn = cloud.connection()
    refs = kind.list(conn, a)
    assert [(r.id, r.project_id, r.name) for r in refs] == [
        (f'{gold["id"]}/{a}', a, 'zz-gold')
    ]
    assert kind.list(conn, c) == []

    [result] = run_kind(cloud, kind, refs).results.values()

    assert result.outcome == DONE
    assert cloud.get(coll, gold['id'])['members'] == [b]  # it stays
    assert kind.list(conn, a) == []
    assert not [p for m, p in cloud.changes if m == 'DELETE']


@pytest.mark.parametrize('name', sorted(ACCESS))
def test_the_orphan_search_sees_every_projects_access(cloud, abc, name):
    service, _coll = ACCESS[name]
    a, b, _c = abc
    cloud.private_type(service, 'one', [a])
    cloud.private_type(service, 'two', [a, b])
    refs = kinds_mod.build()[name].list(cloud.connection(), None)
    assert sorted(r.project_id for r in refs) == sorted([a, a, b])


def test_a_cascade_takes_the_project_off_every_access_list(cloud, abc):
    a, b, _c = abc
    made = {
        service: cloud.private_type(service, 'private', [a, b])
        for service, _ in ACCESS.values()
    }
    pc, targets, plan = cascade_for(cloud, a)
    assert {
        step_id('delete', name, f'{made[service]["id"]}/{a}')
        for name, (service, _) in ACCESS.items()
    } <= set(plan.steps)

    outcome = pc.execute(plan, targets)

    for service, coll in ACCESS.values():
        assert cloud.get(coll, made[service]['id'])['members'] == [b]
    assert [p.id for p in outcome.empty_projects] == [a]
