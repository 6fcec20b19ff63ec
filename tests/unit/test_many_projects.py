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

"""Many projects in one plan, each ending on its own (``workflows.many``):
one project's refusal keeps that project, and its parents, not the
others."""

from osc_cascade.workflows.cascade_options import CascadeOptions
from osc_cascade.workflows.many import ManyProjects
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.run import zero_delays


def network(cloud, project):
    return cloud.add(
        'networks',
        name=f'{project["name"]}-net',
        project_id=project['id'],
        tenant_id=project['id'],
        shared=False,
    )


def many(cloud, *names, **options):
    wf = ManyProjects(
        cloud.connection(),
        CascadeOptions(recursive=True, **options),
        clock=FakeClock(),
        retry=zero_delays(),
    )
    targets = wf.resolve(names)
    return wf, targets, wf.plan(targets)


def test_a_resource_that_will_not_go_keeps_its_project_alone(cloud):
    a, b, c = (scenarios.project(cloud, n) for n in 'ABC')
    nets = {p['name']: network(cloud, p) for p in (a, b, c)}
    cloud.faults.extend(
        [('DELETE', f'/networks/{nets["B"]["id"]}', 500)] * 200
    )
    wf, targets, plan = many(cloud, 'A', 'B', 'C')
    outcome = wf.execute(plan, targets)
    assert sorted(t.name for t in outcome.empty_projects) == ['A', 'C']
    assert list(outcome.stays) == [b['id']]
    assert 'still owns network.network B-net' in outcome.stays[b['id']]
    assert not cloud.exists('networks', nets['A']['id'])
    assert not cloud.exists('networks', nets['C']['id'])
    assert cloud.exists('networks', nets['B']['id'])
    # B stays drained (disabled), its record says why
    assert cloud.get('projects', b['id'])['enabled'] is False


def test_a_project_whose_plan_keeps_is_left_untouched(cloud):
    from tests.unit.test_stuck_block_storage import stuck_volume

    a, b = scenarios.project(cloud, 'A'), scenarios.project(cloud, 'B')
    network(cloud, a)
    stuck_volume(cloud, b['id'], 'error_deleting')
    wf, targets, plan = many(cloud, 'A', 'B')
    outcome = wf.execute(plan, targets)
    assert [t.name for t in outcome.empty_projects] == ['A']
    assert 'error_deleting' in outcome.stays[b['id']]
    # not drained: nothing of B changed
    assert cloud.get('projects', b['id'])['enabled'] is True
    assert not [c for c in cloud.changes if b['id'] in c[1]]


def test_a_child_that_stays_keeps_its_parent(cloud):
    top = scenarios.project(cloud, 'top')
    child = scenarios.project(cloud, 'child', parent_id=top['id'])
    other = scenarios.project(cloud, 'other')
    for p in (top, child, other):
        network(cloud, p)
    net = next(
        n for n in cloud.all('networks') if n['project_id'] == child['id']
    )
    cloud.faults.extend([('DELETE', f'/networks/{net["id"]}', 500)] * 200)
    wf, targets, plan = many(cloud, 'top', 'other')
    outcome = wf.execute(plan, targets)
    assert [t.name for t in outcome.empty_projects] == ['other']
    assert outcome.deleted_children == []
    assert set(outcome.stays) == {top['id'], child['id']}
    assert outcome.stays[top['id']] == 'a child project of it stays'
    assert cloud.exists('projects', child['id'])


def test_all_of_them_in_one_plan_and_one_run(cloud):
    projects = [scenarios.project(cloud, f'P{n}') for n in range(5)]
    for p in projects:
        network(cloud, p)
    wf, targets, plan = many(cloud, *(p['name'] for p in projects))
    outcome = wf.execute(plan, targets)
    assert len(outcome.runs) == 1  # one run for the five, no loop
    assert len(outcome.empty_projects) == 5
    assert outcome.stays == {}
