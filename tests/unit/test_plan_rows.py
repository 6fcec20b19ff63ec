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

"""The editable rows of a selective plan file (``engine.plan_rows``)."""

import json

import pytest

from osc_cascade.engine import plan_rows, planfile, resource
from osc_cascade.engine.errors import PlanError
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.selection import Selection

PORT = ResourceRef('network.port', 'port1', 'p1', 'p', region='R')
NET = ResourceRef('network.network', 'net1', 'n1', 'p', region='R')
IMAGE = ResourceRef('image.image', 'img1', 'i1', 'p', region='R')


def saved(selective=True):
    steps = [
        resource.delete(PORT),
        resource.delete(NET),
        resource.keep(IMAGE, 'not selected: skipped'),
    ]
    plan = Plan(
        projects=[{'id': 'p', 'name': 'proj'}],
        steps={s.id: s for s in steps},
        edges={(steps[0].id, steps[1].id)},
        made_for={
            'cloud': 'https://k',
            'regions': ['R'],
            'made_at': '2026-11-28T08:00:00+00:00',
        },
    )
    if selective:
        plan.selection = {
            'filters': Selection(skip=('image.image',)).to_dict()
        }
    return json.loads(planfile.to_json(plan))


def test_a_plan_of_everything_keeps_format_3_and_has_no_rows():
    data = saved(selective=False)
    assert data['format'] == 3
    assert 'selected' not in data
    assert planfile.from_dict(data).selection == {}


def test_rows_are_one_line_per_delete_and_round_trip():
    data = saved()
    assert data['format'] == plan_rows.SELECTIVE_FORMAT
    assert data['selected'] == {
        'network.port:port1@R': 'delete: network.port p1 (port1) in R',
        'network.network:net1@R': 'delete: network.network n1 (net1) in R',
    }
    plan = planfile.from_dict(data)
    chosen = plan_rows.selection_of(plan)
    assert chosen == Selection(skip=('image.image',))
    assert chosen.allowed == {'network.port:port1@R', 'network.network:net1@R'}


@pytest.mark.parametrize('edit', ['keep', 'drop'])
def test_a_kept_or_dropped_row_is_not_allowed(edit):
    data = saved()
    if edit == 'keep':
        data['selected']['network.port:port1@R'] = 'keep: network.port p1'
    else:
        del data['selected']['network.port:port1@R']
    chosen = plan_rows.selection_of(planfile.from_dict(data))
    assert chosen.allowed == {'network.network:net1@R'}


@pytest.mark.parametrize(
    'edit, message',
    [
        (
            lambda d: d['selected'].update({'image.image:img1@R': 'delete'}),
            'not a resource its plan deletes',
        ),
        (
            lambda d: d['selected'].update({'network.port:port1@R': 'yes'}),
            'must start with "delete:" or "keep:"',
        ),
        (
            lambda d: d['selected'].update({'network.port:port1@R': True}),
            'must start with',
        ),
        (lambda d: d.update(selection={}), 'changed outside'),
        (lambda d: d['notes'].append('x'), 'changed outside'),
        (lambda d: d.pop('selected'), 'no "selected" rows'),
    ],
)
def test_edits_it_cannot_understand_are_refused_in_one_line(edit, message):
    data = saved()
    edit(data)
    if message == 'no "selected" rows':
        data['digest'] = plan_rows.digest(data)
    with pytest.raises(PlanError, match=message) as refused:
        planfile.from_dict(data)
    assert '\n' not in str(refused.value)
