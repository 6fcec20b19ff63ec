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

"""A selection closed over the plan's dependencies (``engine.closure``):
with the real kinds' relations, and on random graphs."""

from hypothesis import given, settings
from hypothesis import strategies as st

from osc_cascade import kinds
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge, Inventory, build_plan
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.engine.selection import Selection

OLD, NEW = '2026-11-27T10:00:00Z', '2026-11-28T10:00:00Z'
BOUNDARY = Selection(created_before='2026-11-28T00:00:00Z')
PROJECT = ResourceRef('identity.project', 'p', 'proj', 'p')


def ref(kind, id_, created=OLD, **attrs):
    return ResourceRef(kind, id_, id_, 'p', attrs, created_at=created)


def plan(refs, selection=BOUNDARY):
    return build_plan(
        Inventory([*refs, PROJECT]),
        kinds.build(),
        [{'id': 'p', 'name': 'proj'}],
        selection.why_not,
    )


def kept(p):
    return {
        s.target.id: s.params['reason']
        for s in p.steps.values()
        if s.action == resource.KEEP
    }


def deleted(p):
    return {
        s.target.id
        for s in p.steps.values()
        if s.is_delete and s.target.kind != 'identity.project'
    }


def test_an_old_network_under_a_new_port_is_kept_naming_the_port():
    p = plan(
        [
            ref('network.network', 'net'),
            ref('network.subnet', 'sub', network_id='net'),
            ref(
                'network.port',
                'port',
                NEW,
                network_id='net',
                subnet_ids=['sub'],
            ),
            ref('network.network', 'other'),
        ]
    )
    reasons = kept(p)
    assert reasons['port'].startswith('not selected: created 2026-11-28')
    assert reasons['sub'] == ('network.port port (port) stays, and goes first')
    # the kept step names its resource as discovery found it
    (sub,) = [s for s in p.steps.values() if s.target.id == 'sub']
    assert sub.target.name == 'sub'
    assert sub.target.attrs == {'network_id': 'net'}
    assert 'net' in reasons
    assert deleted(p) == {'other'}


def interface(created=OLD):
    """Router r's interface on subnet sub of network net."""
    return ref(
        'network.port',
        'iface',
        created,
        device_owner='network:router_interface',
        device_id='r',
        network_id='net',
        subnet_ids=['sub'],
    )


def test_a_router_with_a_new_interface_is_kept_and_no_interface_removed():
    p = plan(
        [
            ref('network.router', 'r'),
            ref('network.network', 'net'),
            ref('network.subnet', 'sub', network_id='net'),
            interface(NEW),
        ]
    )
    reasons = kept(p)
    assert 'network.port iface (iface) is not selected' in reasons['r']
    assert reasons['r'].startswith('remove_router_interface on')
    assert {'sub', 'net'} <= reasons.keys()
    assert not [s for s in p.steps.values() if s.is_break_action]
    assert deleted(p) == set()


def test_an_old_router_with_old_interfaces_goes_with_its_breaks():
    p = plan(
        [
            ref('network.router', 'r'),
            ref('network.network', 'net'),
            ref('network.subnet', 'sub', network_id='net'),
            ref(
                'network.port',
                'iface',
                device_owner='network:router_interface',
                device_id='r',
                network_id='net',
                subnet_ids=['sub'],
            ),
        ]
    )
    assert kept(p) == {}
    assert deleted(p) == {'r', 'net', 'sub'}
    assert any(s.action == 'remove_router_interface' for s in p.steps.values())


def test_an_old_group_named_by_a_new_groups_rule_is_kept():
    p = plan(
        [
            ref('network.security_group', 'old'),
            ref(
                'network.security_group',
                'new',
                NEW,
                remote_rules=[['rule', 'old']],
            ),
        ]
    )
    reasons = kept(p)
    assert reasons['old'] == (
        'network.security_group new (new) stays, and goes first'
    )
    assert not [s for s in p.steps.values() if s.is_break_action]


def test_a_new_router_on_an_old_subnet_keeps_the_subnet_and_its_network():
    p = plan(
        [
            ref('network.router', 'r', NEW),
            ref('network.network', 'net'),
            ref('network.subnet', 'sub', network_id='net'),
            interface(NEW),
        ]
    )
    assert set(kept(p)) == {'r', 'sub', 'net'}
    assert not [s for s in p.steps.values() if s.is_break_action]


def test_the_server_of_a_compute_port_keeps_it():
    p = plan(
        [
            ref('compute.server', 'vm', NEW),
            ref(
                'network.port',
                'nic',
                device_owner='compute:nova',
                device_id='vm',
                network_id='net',
            ),
            ref('network.network', 'net'),
        ]
    )
    assert set(kept(p)) == {'vm', 'nic', 'net'}


def test_an_old_server_with_a_new_port_of_its_is_kept():
    # Nova may delete the port with the server: it made it at an attach
    p = plan(
        [
            ref('compute.server', 'vm'),
            ref(
                'network.port',
                'nic',
                NEW,
                device_owner='compute:nova',
                device_id='vm',
                network_id='net',
            ),
            ref('network.network', 'net'),
        ]
    )
    reasons = kept(p)
    assert reasons['vm'] == (
        'network.port nic (nic) stays, and would go with it'
    )
    assert set(reasons) == {'vm', 'nic', 'net'}


def test_without_a_selection_nothing_changes():
    refs = [
        ref('network.network', 'net'),
        ref('network.port', 'port', NEW, network_id='net'),
    ]
    full = build_plan(
        Inventory([*refs, PROJECT]),
        kinds.build(),
        [{'id': 'p', 'name': 'proj'}],
    )
    assert kept(full) == {}
    assert deleted(full) == {'net', 'port'}


# -- random graphs -----------------------------------------------------------


class Rules:
    """A kind whose relations are the graph's edges (``first`` before
    ``then``), some with a break action on the first's resource, some on
    a third resource (as a router interface's port)."""

    def __init__(self, edges):
        self.edges = edges

    def primary_step(self, r):
        return resource.delete(r)

    def relations(self, r, inventory):
        return [e for e in self.edges if e.then.target.id == r.id]


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 12))
    nodes = [
        ResourceRef('k', f'r{i}', f'r{i}', 'p', created_at=OLD)
        for i in range(n)
    ]
    selected = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    pairs = draw(
        st.lists(
            st.tuples(
                st.integers(0, n - 1),
                st.integers(0, n - 1),
                st.sampled_from(['plain', 'break', 'serves', 'soft']),
                st.integers(0, n - 1),
            ),
            max_size=3 * n,
        )
    )
    edges = []
    for a, b, how, c in pairs:
        if a >= b:  # acyclic: first before then in index order
            continue
        first, then = resource.delete(nodes[a]), resource.delete(nodes[b])
        if how == 'break':
            brk = Step('unplug', nodes[a], {'other': nodes[c].id})
            edges.append(Edge(brk, then))
            edges.append(Edge(brk, resource.delete(nodes[a])))
        else:
            edges.append(
                Edge(
                    first,
                    then,
                    serves=how == 'serves',
                    required=how != 'soft',
                )
            )
    return nodes, selected, edges


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_no_deleted_resource_needs_one_that_stays(graph):
    nodes, selected, edges = graph
    chosen = {r.key for r, s in zip(nodes, selected, strict=True) if s}

    def why_not(r):
        return None if r.key in chosen or r.kind != 'k' else 'no'

    p = build_plan(
        Inventory([*nodes, PROJECT]),
        {'k': Rules(edges), 'identity.project': Rules([])},
        [{'id': 'p', 'name': 'proj'}],
        why_not,
    )
    gone = {s.target.key for s in p.steps.values() if s.is_delete}
    # an unselected resource is never deleted
    assert gone <= chosen | {PROJECT.key}
    for edge in edges:
        if edge.then.target.key not in gone:
            continue
        first = edge.first
        if first.is_break_action:
            # a break action done changes only what is selected and goes
            assert first.id in p.steps
            touched = {first.target.key} | {
                f'k:{v}' for v in first.params.values()
            }
            assert touched <= gone
        else:
            # what must go first goes too
            assert first.target.key in gone
    for edge in edges:
        # what may take a resource with it does not go while it stays
        if not edge.required and edge.then.target.key not in gone:
            assert edge.first.target.key not in gone
    # every keep says why, in one line
    for step in p.steps.values():
        if step.action == resource.KEEP:
            assert step.params['reason']
            assert '\n' not in step.params['reason']


def test_groups_that_name_each_other_old_and_new():
    p = plan(
        [
            ref('network.security_group', 'old', remote_rules=[['r1', 'new']]),
            ref(
                'network.security_group',
                'new',
                NEW,
                remote_rules=[['r2', 'old']],
            ),
        ]
    )
    assert set(kept(p)) == {'old', 'new'}
    assert not [s for s in p.steps.values() if s.is_break_action]


def test_groups_that_name_each_other_both_old_go_cutting_a_rule():
    p = plan(
        [
            ref('network.security_group', 'a', remote_rules=[['r1', 'b']]),
            ref('network.security_group', 'b', remote_rules=[['r2', 'a']]),
        ]
    )
    assert deleted(p) == {'a', 'b'}
    assert [s.action for s in p.steps.values() if s.is_break_action] == [
        'delete_security_group_rule'
    ]
