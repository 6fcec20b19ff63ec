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

"""The pure planner: ordering, cycles, plan files and renderings."""

import json
import random

import pytest

from osc_cascade.engine import planfile, planner, resource
from osc_cascade.engine.planner import Inventory, PlanError, build_plan
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.kinds.network import core
from osc_cascade.v1 import output
from tests.unit.fakes.kinds import KIND, PROJECT, FakeKind, make_plan, ref

PROJECTS = [{'id': PROJECT, 'name': 'p'}]
RULES = {KIND: FakeKind(), 'test.other': FakeKind('test.other')}


def plan_of(*refs, projects=PROJECTS):
    plan = build_plan(Inventory(refs), RULES, projects)
    # the workflow says what a plan is for; a saved plan must say it
    plan.made_for = planfile.made_for('http://keystone.test/v3', ['R1'])
    return plan


def d(id_, kind=KIND):
    return f'delete:{kind}:{id_}'


def assert_edges_respected(plan):
    index = {s: i for i, s in enumerate(plan.order())}
    assert len(index) == len(plan.steps)
    for first, then in plan.edges:
        assert index[first] < index[then], (first, then)


# -- resource.py ----------------------------------------------------------


def test_ref_key_label_and_round_trip():
    r = ResourceRef('network.port', 'x1', 'web', 'p1', {'device_id': 'v'})
    assert r.key == 'network.port:x1'
    assert r.label() == 'network.port web (x1)'
    assert ResourceRef('network.port', 'x1').label() == 'network.port x1'
    assert ResourceRef.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_step_ids_and_descriptions():
    r = ref('r1', name='router')
    assert resource.delete(r).id == f'delete:{KIND}:r1'
    assert resource.delete(r).describe() == f'delete {KIND} router (r1)'
    kept = resource.keep(r, 'public image')
    assert kept.id == f'keep:{KIND}:r1'
    assert kept.describe().endswith(': public image')
    assert not kept.is_delete and not kept.is_break_action
    action = Step('remove_router_interface', r, {'port_id': 'p9', 'a': 1})
    # params are part of the id (two interfaces of one router are two
    # steps), sorted so that the id is stable
    assert action.id == f'remove_router_interface:{KIND}:r1[a=1,port_id=p9]'
    assert action.is_break_action
    assert action.describe() == (
        f'remove_router_interface on {KIND} router (r1) (a=1, port_id=p9)'
    )
    assert Step.from_dict(json.loads(json.dumps(action.to_dict()))).id == (
        action.id
    )


# -- inventory -------------------------------------------------------------


def test_inventory_indexes_and_ignores_duplicates():
    a, b = ref('a', color='red'), ref('b', color='blue')
    other = ref('c', kind='test.other', color='red')
    inv = Inventory([a, b, other, ref('a', color='green')])
    assert len(inv) == 3
    assert inv.get(KIND, 'a').attrs['color'] == 'red'  # the first wins
    assert inv.get(KIND, None) is None
    assert inv.get(KIND, 'zzz') is None
    assert inv.of_kind('test.other') == [other]
    assert inv.of_kind('nothing') == []
    assert inv.where(KIND, color='blue') == [b]
    assert inv.where(KIND) == [a, b]


def test_where_finds_what_a_scan_finds_in_the_order_found():
    refs = [
        ref(f'r{i}', color=['red', 'blue'][i % 2], size=i % 3, tags=[i % 2])
        for i in range(12)
    ]
    inv = Inventory(refs)

    def scan(**attrs):
        return [
            r
            for r in refs
            if all(r.attrs.get(k) == v for k, v in attrs.items())
        ]

    for attrs in (
        {'color': 'red'},
        {'color': 'red', 'size': 1},
        {'size': 2, 'color': 'blue'},
        {'color': 'green'},
        {'tags': [1]},  # an unhashable value: scanned
        {'color': 'red', 'tags': [0]},
        {'missing': None},  # an attr a ref lacks is None
    ):
        assert inv.where(KIND, **attrs) == scan(**attrs), attrs
    # the index, made once, serves every later lookup
    assert inv.where(KIND, color='blue') == scan(color='blue')


# -- ordering --------------------------------------------------------------


def test_every_edge_is_respected_in_a_random_dag():
    rng = random.Random(7)
    refs = []
    for i in range(200):
        later = [f'n{j:03d}' for j in range(i + 1, 200) if rng.random() < 0.03]
        refs.append(ref(f'n{i:03d}', before=later))
    rng.shuffle(refs)
    plan = plan_of(*refs)
    assert len(plan.steps) == 200
    assert len(plan.edges) > 200
    assert_edges_respected(plan)


def test_order_is_deterministic_whatever_the_discovery_order():
    refs = [
        ref('a', before=['c']),
        ref('b', before=['c']),
        ref('c'),
        ref('d', kind='test.other', before=[f'{KIND}:a']),
        ref('e', name='zeta'),
        ref('f', name='alpha'),
    ]
    first = plan_of(*refs)
    for seed in range(5):
        shuffled = refs[:]
        random.Random(seed).shuffle(shuffled)
        again = plan_of(*shuffled)
        assert again.order() == first.order()
        assert planfile.to_json(again) == planfile.to_json(first)


def test_ties_are_broken_by_kind_then_name_then_id():
    plan = plan_of(
        ref('z1', kind='test.other', name='a'),
        ref('b2', name='b'),
        ref('b1', name='b'),
        ref('a9', name='a'),
    )
    # 'test.other' sorts before 'test.thing', whatever the names
    assert plan.order() == [d('z1', 'test.other'), d('a9'), d('b1'), d('b2')]


def test_stages_are_one_plus_the_longest_chain_before():
    # a -> b -> d and c -> d: d is at stage 3, not 2
    plan = plan_of(
        ref('a', before=['b']),
        ref('b', before=['d']),
        ref('c', before=['d']),
        ref('d'),
        ref('e'),
    )
    stages = plan.stages()
    assert stages == {d('a'): 1, d('b'): 2, d('c'): 1, d('d'): 3, d('e'): 1}


def test_break_actions_are_added_as_steps_before_their_delete():
    plan = plan_of(ref('r', actions=['clear_gateway', 'clear_routes']))
    ids = set(plan.steps)
    assert ids == {d('r'), f'clear_gateway:{KIND}:r', f'clear_routes:{KIND}:r'}
    assert (f'clear_gateway:{KIND}:r', d('r')) in plan.edges
    assert plan.steps[f'clear_routes:{KIND}:r'].is_break_action
    assert_edges_respected(plan)


def test_self_edges_are_ignored():
    plan = plan_of(ref('a', before=['a']))
    assert plan.edges == set()


def test_edges_to_resources_outside_the_inventory_are_dropped():
    # 'ghost' is another project's, or gone: nothing to order against
    plan = plan_of(ref('a', before=['ghost', 'b']), ref('b'))
    assert plan.edges == {(d('a'), d('b'))}
    assert d('ghost') not in plan.steps


def test_edges_to_resources_that_go_with_their_owner_are_dropped():
    # a DHCP port has no step of its own: its edges mean nothing
    plan = plan_of(
        ref('dhcp', owned=True, before=['net']),
        ref('net'),
        ref('a', before=['dhcp']),
    )
    assert set(plan.steps) == {d('net'), d('a')}
    assert plan.edges == set()


def test_keep_steps_are_listed_and_counted():
    plan = plan_of(
        ref('img', keep='public image'), ref('a'), ref('b', kind='test.other')
    )
    assert [s.id for s in plan.kept()] == [f'keep:{KIND}:img']
    assert plan.kept()[0].params == {'reason': 'public image'}
    assert plan.counts() == {
        KIND: {'keep': 1, 'delete': 1},
        'test.other': {'delete': 1},
    }


def test_refuses_resources_owned_by_another_project():
    with pytest.raises(PlanError) as err:
        plan_of(ref('mine'), ref('theirs', project_id='p2', name='x'))
    assert 'owned by another project' in str(err.value)
    assert f'{KIND} x (theirs)' in str(err.value)
    assert 'mine' not in str(err.value)


def test_resources_of_all_the_planned_projects_are_accepted():
    plan = plan_of(
        ref('a'),
        ref('b', project_id='p2'),
        projects=[*PROJECTS, {'id': 'p2', 'name': 'child'}],
    )
    assert set(plan.steps) == {d('a'), d('b')}


def test_plan_order_refuses_a_cycle_given_directly():
    plan = make_plan(['a', 'b'], [('a', 'b'), ('b', 'a')])
    with pytest.raises(PlanError, match='cycle'):
        plan.order()


# -- cycles ----------------------------------------------------------------


def test_a_cycle_nothing_can_cut_is_refused_naming_it():
    with pytest.raises(PlanError) as err:
        plan_of(
            ref('a', before=['b']),
            ref('b', before=['c']),
            ref('c', before=['a']),
            ref('unrelated'),
        )
    message = str(err.value)
    assert 'dependency cycle that no break action can cut' in message
    # the cycle is named, closed on itself, and nothing else is
    assert (
        f'delete {KIND} a (a) -> delete {KIND} b (b) -> '
        f'delete {KIND} c (c) -> delete {KIND} a (a)'
    ) in message
    assert 'unrelated' not in message


def test_a_cycle_is_cut_by_its_breakable_edge():
    plan = plan_of(ref('a', breakable=['b']), ref('b', before=['a']))
    breaker = f'cut_reference:{KIND}:a[to=b]'
    assert breaker in plan.steps
    assert (d('a'), d('b')) not in plan.edges
    assert (breaker, d('b')) in plan.edges
    assert (d('b'), d('a')) in plan.edges
    assert planner.find_cycle(plan.steps, plan.edges) is None
    assert_edges_respected(plan)


def test_breakers_are_added_only_when_a_cycle_needs_them():
    plan = plan_of(ref('a', breakable=['b']), ref('b'))
    assert set(plan.steps) == {d('a'), d('b')}
    assert plan.edges == {(d('a'), d('b'))}


def test_two_cycles_sharing_nothing_are_both_cut():
    plan = plan_of(
        ref('a', breakable=['b']),
        ref('b', breakable=['a']),
        ref('c', breakable=['d']),
        ref('d', before=['c']),
    )
    actions = sorted(s for s in plan.steps if s.startswith('cut_'))
    # one cut per cycle suffices: the first breakable edge of each
    assert actions == [
        f'cut_reference:{KIND}:a[to=b]',
        f'cut_reference:{KIND}:c[to=d]',
    ]
    assert_edges_respected(plan)


def sg(id_, name, rules, project_id=PROJECT):
    return ResourceRef(
        core.SecurityGroup.name,
        id_,
        name,
        project_id,
        {'remote_rules': rules},
    )


def test_security_groups_that_reference_each_other_are_cut_by_a_rule():
    kinds = {core.SecurityGroup.name: core.SecurityGroup()}
    a = sg('ga', 'web', [['rule-ab', 'gb']])
    b = sg('gb', 'db', [['rule-ba', 'ga']])
    plan = build_plan(Inventory([a, b]), kinds, PROJECTS)
    cuts = [s for s in plan.steps.values() if s.is_break_action]
    assert len(cuts) == 1
    assert cuts[0].action == 'delete_security_group_rule'
    assert_edges_respected(plan)
    cut = cuts[0]
    other = 'gb' if cut.target.id == 'ga' else 'ga'
    # the rule goes before the group it names
    assert (cut.id, f'delete:{core.SecurityGroup.name}:{other}') in (
        plan.edges
    )


def test_every_rule_behind_a_cut_edge_is_deleted():
    kinds = {core.SecurityGroup.name: core.SecurityGroup()}
    a = sg('ga', 'web', [['r1', 'gb'], ['r2', 'gb']])
    b = sg('gb', 'db', [['r3', 'ga']])
    plan = build_plan(Inventory([a, b]), kinds, PROJECTS)
    rules = sorted(
        s.params['rule_id'] for s in plan.steps.values() if s.is_break_action
    )
    # cutting ga -> gb needs both of ga's rules that name gb gone
    assert rules == ['r1', 'r2']
    for rule in plan.steps.values():
        if rule.is_break_action:
            assert (rule.id, 'delete:network.security_group:gb') in (
                plan.edges
            )


def test_default_security_group_goes_last_even_when_others_name_it():
    kinds = {core.SecurityGroup.name: core.SecurityGroup()}
    default = sg('g0', 'default', [['r0', 'g1']])
    web = sg('g1', 'web', [['r1', 'g0']])
    plan = build_plan(Inventory([default, web]), kinds, PROJECTS)
    order = plan.order()
    assert order[-1] == 'delete:network.security_group:g0'
    assert_edges_respected(plan)


def test_soft_edges_are_kept_apart_and_a_required_twin_wins():
    class Soft(FakeKind):
        def relations(self, ref_, inventory):
            yield from super().relations(ref_, inventory)
            for other in ref_.attrs.get('soft', []):
                yield planner.Edge(
                    resource.delete(ref_),
                    resource.delete(ref(other)),
                    required=False,
                )

    rules = {KIND: Soft()}
    plan = build_plan(
        Inventory(
            [ref('a', soft=['b', 'c'], before=['c']), ref('b'), ref('c')]
        ),
        rules,
        PROJECTS,
    )
    assert plan.edges == {(d('a'), d('b')), (d('a'), d('c'))}
    # a -> c is also required by another relation: it is hard
    assert plan.soft_edges == {(d('a'), d('b'))}
    plan.made_for = planfile.made_for('http://keystone.test/v3', ['R1'])
    again = planfile.from_dict(json.loads(planfile.to_json(plan)))
    assert again.soft_edges == plan.soft_edges


# -- find_cycle ------------------------------------------------------------


def test_find_cycle():
    assert planner.find_cycle(['a', 'b'], [('a', 'b')]) is None
    assert planner.find_cycle(['a'], [('a', 'a')]) == ['a']
    cycle = planner.find_cycle(
        ['a', 'b', 'c', 'x'], [('x', 'a'), ('a', 'b'), ('b', 'c'), ('c', 'a')]
    )
    assert cycle == ['a', 'b', 'c']


def test_grouped_holds_every_kind_by_what_the_function_says():
    a, b = ref('a', color='red'), ref('b', color='blue')
    other = ref('c', kind='test.other', color='red')
    inv = Inventory([a, b, other])

    def color(r):
        return r.attrs.get('color')

    assert inv.grouped(color) == {'red': [a, other], 'blue': [b]}
    assert inv.grouped(color) is inv.grouped(color)  # made once


def test_cyclic_components():
    assert planner.cyclic_components(['a', 'b'], [('a', 'b')]) == []
    assert planner.cyclic_components(['a'], [('a', 'a')]) == [['a']]
    assert planner.cyclic_components(
        ['x', 'c', 'b', 'a', 'e', 'd', 'f'],
        [
            ('x', 'a'),
            ('a', 'b'),
            ('b', 'c'),
            ('c', 'a'),
            ('c', 'd'),
            ('d', 'e'),
            ('e', 'd'),
            ('e', 'f'),
        ],
    ) == [['a', 'b', 'c'], ['d', 'e']]


def test_a_thousand_cycles_are_each_cut_within_their_component():
    # as a thousand blocks of security groups that name each other: each
    # pair's cycle cut by its own breaker, and nothing else touched
    n = 1000
    refs = [
        r
        for i in range(n)
        for r in (
            ref(f'a{i:04d}', breakable=[f'b{i:04d}'], before=[f'c{i:04d}']),
            ref(f'b{i:04d}', before=[f'a{i:04d}']),
            ref(f'c{i:04d}'),
        )
    ]
    plan = plan_of(*refs)
    cuts = sorted(s for s in plan.steps if s.startswith('cut_'))
    assert cuts == [
        f'cut_reference:{KIND}:a{i:04d}[to=b{i:04d}]' for i in range(n)
    ]
    assert planner.find_cycle(plan.steps, plan.edges) is None
    assert_edges_respected(plan)


def test_long_chains_need_no_recursion():
    n = 5000
    refs = [
        ref(f'n{i:05d}', before=[f'n{i + 1:05d}'] if i + 1 < n else [])
        for i in range(n)
    ]
    plan = plan_of(*reversed(refs))
    assert plan.order() == [d(f'n{i:05d}') for i in range(n)]
    assert max(plan.stages().values()) == n
    # the same chain closed on itself is found, as one long cycle
    nodes = [f'n{i}' for i in range(n)]
    edges = list(zip(nodes, nodes[1:] + nodes[:1]))
    cycle = planner.find_cycle(nodes, edges)
    assert cycle is not None and len(cycle) == n


def test_long_uncuttable_cycle_is_reported_not_crashed():
    n = 3000
    refs = [ref(f'n{i:05d}', before=[f'n{(i + 1) % n:05d}']) for i in range(n)]
    with pytest.raises(PlanError, match='no break action can cut'):
        plan_of(*refs)


def test_many_independent_steps_are_ordered_by_name():
    n = 5000
    plan = make_plan([f'x{i:05d}' for i in reversed(range(n))])
    order = plan.order()
    assert order == sorted(order)
    assert len(order) == n


# -- plan files ------------------------------------------------------------


def sample_plan():
    return plan_of(
        ref('a', name='alpha', actions=['clear_routes']),
        ref('b', before=[f'{KIND}:a']),
        ref('i', keep='public image'),
        ref('c', kind='test.other', before=[f'{KIND}:b']),
    )


def test_plan_round_trips_through_json():
    plan = sample_plan()
    plan.notes.append('service x is not in the catalog')
    again = planfile.from_dict(json.loads(planfile.to_json(plan)))
    assert again.steps == plan.steps
    assert again.edges == plan.edges
    assert again.projects == plan.projects
    assert again.notes == plan.notes
    assert again.order() == plan.order()
    assert planfile.to_json(again) == planfile.to_json(plan)


def test_plan_file_lists_steps_in_order_and_edges_sorted():
    data = planfile.to_dict(sample_plan())
    assert data['format'] == planfile.PLAN_FORMAT_VERSION
    ids = [Step.from_dict(s).id for s in data['steps']]
    assert ids == sample_plan().order()
    assert data['edges'] == sorted(data['edges'])


@pytest.mark.parametrize('version', [None, 0, 1, '2'])
def test_plan_file_of_another_format_is_refused(version):
    data = planfile.to_dict(sample_plan())
    data['format'] = version
    with pytest.raises(PlanError, match='unsupported plan file format'):
        planfile.from_dict(data)


def test_plan_file_with_edge_to_unknown_step_is_refused():
    data = planfile.to_dict(sample_plan())
    data['edges'].append([d('a'), d('nowhere')])
    with pytest.raises(PlanError, match=f'unknown steps: {d("nowhere")}'):
        planfile.from_dict(data)


def test_plan_file_with_a_cycle_is_refused():
    data = planfile.to_dict(sample_plan())
    data['edges'].append([d('a'), d('b')])  # b -> a is already there
    with pytest.raises(PlanError, match='dependency cycle') as err:
        planfile.from_dict(data)
    assert d('a') in str(err.value) and d('b') in str(err.value)


@pytest.mark.parametrize(
    'damage',
    [
        lambda data: data.pop('steps'),
        lambda data: data.pop('projects'),
        lambda data: data['steps'][0].pop('target'),
        lambda data: data['steps'][0]['target'].update(color='red'),
        lambda data: data['edges'].append(['just-one']),
    ],
)
def test_malformed_plan_file_is_refused_clearly(damage):
    data = planfile.to_dict(sample_plan())
    damage(data)
    with pytest.raises(PlanError, match='malformed plan file'):
        planfile.from_dict(data)


def test_plan_file_with_another_projects_resource_is_refused():
    data = planfile.to_dict(sample_plan())
    data['steps'][0]['target']['project_id'] = 'p-other'
    with pytest.raises(PlanError, match='owned by another project'):
        planfile.from_dict(data)


# -- renderings ------------------------------------------------------------


def test_rows_have_stages_and_predecessors():
    plan = sample_plan()
    columns, rows = output.plan_table(plan, full=True)
    assert columns == [
        'Stage',
        'Region',
        'Action',
        'Kind',
        'ID',
        'Name',
        'Project',
        'After',
        'Reason',
    ]
    assert sorted((r[2], r[3], r[4]) for r in rows) == sorted(
        (s.action, s.target.kind, s.target.id) for s in plan.steps.values()
    )
    by_id = {r[4] + r[2]: r for r in rows}
    assert by_id['adelete'][0] == 3
    assert by_id['adelete'][7] == sorted([d('b'), f'clear_routes:{KIND}:a'])
    assert by_id['cdelete'][7] == []
    assert by_id['adelete'][5] == 'alpha'
    assert all(r[6] == PROJECT for r in rows)


def test_dot_output_shape():
    plan = sample_plan()
    plan.steps[d('a')] = resource.delete(ref('a', name='say "hi"'))
    dot = output.plan_dot(plan)
    lines = dot.splitlines()
    assert lines[0] == 'digraph cascade {'
    assert lines[-1] == '}' and dot.endswith('}\n')
    nodes = [line for line in lines if '[label=' in line]
    edges = [line for line in lines if '->' in line and '[' not in line]
    assert len(nodes) == len(plan.steps)
    assert len(edges) == len(plan.edges)
    assert f'  "{d("c", "test.other")}" -> "{d("b")}";' in lines
    # quotes in names cannot break the graph
    assert "say 'hi'" in dot and 'say "hi"' not in dot
    styles = {line.split('"')[1]: line for line in nodes}
    assert 'style=dashed' in styles[f'keep:{KIND}:i']
    assert 'shape=ellipse' in styles[f'clear_routes:{KIND}:a']
    assert 'style' not in styles[d('b')]


def test_a_plan_file_without_what_it_was_made_for_is_refused():
    data = planfile.to_dict(sample_plan())
    del data['made_for']['cloud']
    with pytest.raises(PlanError, match='malformed plan file'):
        planfile.from_dict(data)


STACK_MADE = [
    {'type': 'OS::Neutron::Net', 'id': 'n-1', 'name': 'net'},
    {'type': 'OS::Nova::Server', 'id': 's-1', 'name': 'vm1'},
    {'type': 'OS::Nova::Server', 'id': 's-2', 'name': 'vm2'},
    {'type': 'OS::Nova::Server', 'id': '', 'name': 'vm3'},
]


def stack_plan():
    return make_plan(
        [
            resource.delete(ref('st', name='mystack', made=STACK_MADE)),
            resource.keep(ref('kp', name='held', made=STACK_MADE[:1]), 'why'),
            'plain',
        ]
    )


def test_a_stack_row_counts_what_its_delete_removes_per_type():
    _columns, rows = output.plan_table(stack_plan(), full=True)
    names = {r[4]: r[5] for r in rows}
    assert names['plain'] == 'plain'  # a plain string, as before
    assert names['st'].human_readable() == (
        'mystack (3 OS::Nova::Server, 1 OS::Neutron::Net)'
    )
    assert names['kp'].human_readable() == 'held (1 OS::Neutron::Net)'
    assert names['st'].machine_readable() == {
        'name': 'mystack',
        'removes': STACK_MADE,
    }


def test_a_stack_node_lists_every_resource_its_delete_removes():
    dot = output.plan_dot(stack_plan())
    [node] = [
        line
        for line in dot.splitlines()
        if '"delete:' in line and ':st"' in line
    ]
    assert node == (
        f'  "delete:{KIND}:st" [label="delete {KIND} mystack (st)'
        '\\nOS::Neutron::Net n-1 (net)'
        '\\nOS::Nova::Server s-1 (vm1)'
        '\\nOS::Nova::Server s-2 (vm2)'
        '\\nOS::Nova::Server - (vm3)"];'
    )
