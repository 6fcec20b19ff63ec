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

"""The planner keeps what serves a resource that stays (``Edge.serves``)."""

from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge, Inventory, build_plan
from osc_cascade.engine.resource import ResourceRef, Step


def ref(kind, id_):
    return ResourceRef(kind, id_, id_, 'p')


NET, SUB, ROUTER, PORT = (
    ref('net', 'n'),
    ref('sub', 's'),
    ref('router', 'r'),
    ref('port', 'p1'),
)
IFACE = Step('remove_interface', ROUTER, {'port': 'i'})
GATEWAY = Step('clear_gateway', ROUTER)


class Rules:
    def __init__(self, kept=(), edges=()):
        self.kept, self.edges = set(kept), edges

    def primary_step(self, r):
        if r.id in self.kept:
            return resource.keep(r, 'in use')
        return resource.delete(r)

    def relations(self, r, inventory):
        return [e for e in self.edges if e.first.target.id == r.id]


def plan(kept, edges, refs=(NET, SUB, ROUTER, PORT)):
    rules = Rules(kept, edges)
    return build_plan(
        Inventory(refs),
        {k: rules for k in ('net', 'sub', 'router', 'port')},
        [{'id': 'p', 'name': ''}],
    )


def d(r):
    return resource.delete(r)


EDGES = [
    Edge(d(SUB), d(NET), serves=True),
    Edge(IFACE, d(SUB), serves=True),
    Edge(IFACE, d(ROUTER)),
    Edge(GATEWAY, d(ROUTER), serves=True),
    Edge(d(PORT), d(SUB)),
    Edge(d(PORT), d(NET)),
]


def test_what_serves_a_kept_resource_is_kept_and_its_breaks_not_done():
    p = plan({'n'}, EDGES)
    reasons = {s.target.id: s.params['reason'] for s in p.kept()}
    assert reasons == {
        'n': 'in use',
        's': 'serves net n (n), which stays',
        'r': 'remove_interface is not done: it serves sub s (s), which stays',
    }
    assert not [s for s in p.steps.values() if s.is_break_action]
    # what only uses it still goes
    assert 'delete:port:p1' in p.steps


def test_what_serves_a_resource_left_after_a_keep_is_kept():
    """A kept port goes before its subnet, which so stays: the router
    interface on that subnet is not removed."""
    p = plan({'p1'}, EDGES)
    assert {s.target.id for s in p.kept()} == {'p1', 'r'}
    assert 'delete:sub:s' in p.steps  # skipped when run: after the keep


def test_nothing_kept_changes_nothing():
    p = plan(set(), EDGES)
    assert not p.kept()
    assert IFACE.id in p.steps and GATEWAY.id in p.steps
