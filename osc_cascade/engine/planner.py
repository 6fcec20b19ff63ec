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

"""The dependency-ordered deletion planner (pure: no I/O).

A plan is a DAG whose nodes are steps (delete a resource, keep it, or a break
action that undoes a reference) and whose edges say "this step must be done
before that one". Resource kinds contribute the edges; the planner collects
them, cuts cycles with the break actions the kinds offer, and refuses a cycle
that nothing can cut, naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
import contextlib
import dataclasses
import heapq
from typing import Any, Protocol

from osc_cascade.engine import closure, resource
from osc_cascade.engine.closure import WhyNot, label_of
from osc_cascade.engine.errors import PlanError
from osc_cascade.engine.graph import cyclic_components, find_cycle
from osc_cascade.engine.heap import with_few_collections
from osc_cascade.engine.resource import ResourceRef, Step


@dataclasses.dataclass(frozen=True)
class Edge:
    """``first`` must be done before ``then`` can succeed.

    ``breaker``, when given, is a break action that removes the reference
    behind the edge: doing it before ``then`` makes ``first`` unnecessary,
    which is how the planner cuts a cycle.

    ``required=False`` makes the edge an order only: ``then`` waits for
    ``first`` to finish but runs even if ``first`` failed (a resource a
    stack created goes with its stack, and is deleted directly only if the
    stack delete fails).
    """

    first: Step
    then: Step
    breaker: Step | None = None
    required: bool = True
    #: ``first`` serves ``then`` (a subnet its network, a router's
    #: interface its subnet): while ``then`` is kept, or stays because
    #: something kept goes before it, ``first`` is kept too, and a break
    #: action is not done, which keeps its target (``keep_what_serves``)
    serves: bool = False


class Inventory:
    """The resources found, indexed for the kinds' relation lookups."""

    def __init__(self, refs: Iterable[ResourceRef]):
        self._refs: dict[str, ResourceRef] = {}
        self._by_kind: dict[str, list[ResourceRef]] = {}
        #: (kind, attr) -> value -> refs, made by the first ``where`` that
        #: asks: a scan per call was quadratic (each router's ports among
        #: every port, each backup's among every backup)
        self._by_attr: dict[tuple[str, str], dict[Any, list[ResourceRef]]] = {}
        self._grouped: dict[
            Callable[[ResourceRef], Any], dict[Any, list[ResourceRef]]
        ] = {}
        for ref in refs:
            if ref.key in self._refs:
                continue
            self._refs[ref.key] = ref
            self._by_kind.setdefault(ref.kind, []).append(ref)

    def __iter__(self):
        return iter(self._refs.values())

    def __len__(self) -> int:
        return len(self._refs)

    def get(self, kind: str, id_: str | None) -> ResourceRef | None:
        if not id_:
            return None
        return self._refs.get(f'{kind}:{id_}')

    def of_kind(self, kind: str) -> list[ResourceRef]:
        return self._by_kind.get(kind, [])

    def where(self, kind: str, **attrs: Any) -> list[ResourceRef]:
        """The resources of ``kind`` whose attrs are ``attrs``, in the
        order found."""
        if not attrs:
            return list(self.of_kind(kind))
        (key, value), *rest = sorted(attrs.items())
        try:
            found = self._indexed(kind, key).get(value, [])
        except TypeError:  # an unhashable value (a list): scanned
            found = [
                r for r in self.of_kind(kind) if r.attrs.get(key) == value
            ]
        return [r for r in found if all(r.attrs.get(k) == v for k, v in rest)]

    def grouped(
        self, by: Callable[[ResourceRef], Any]
    ) -> dict[Any, list[ResourceRef]]:
        """Every resource, of every kind, by what ``by`` says of it (a
        function of the ref: Heat's name of it), in the order found; made
        once per function."""
        groups = self._grouped.get(by)
        if groups is None:
            groups = {}
            for ref in self._refs.values():
                groups.setdefault(by(ref), []).append(ref)
            self._grouped[by] = groups
        return groups

    def _indexed(self, kind: str, key: str) -> dict[Any, list[ResourceRef]]:
        index = self._by_attr.get((kind, key))
        if index is None:
            index = {}
            for ref in self.of_kind(kind):
                value = ref.attrs.get(key)
                # an unhashable value equals no hashable one asked for
                with contextlib.suppress(TypeError):
                    index.setdefault(value, []).append(ref)
            self._by_attr[kind, key] = index
        return index


class KindRules(Protocol):
    """What the planner needs of a resource kind (see kinds.base)."""

    def primary_step(self, ref: ResourceRef) -> Step | None: ...

    def relations(
        self, ref: ResourceRef, inventory: Inventory
    ) -> Iterable[Edge]: ...


@dataclasses.dataclass
class Plan:
    projects: list[dict[str, str]]
    steps: dict[str, Step]
    edges: set[tuple[str, str]]
    notes: list[str] = dataclasses.field(default_factory=list)
    #: the edges (a subset of ``edges``) whose second step runs even if the
    #: first one failed
    soft_edges: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    #: what the plan was made for: the cloud (its Keystone URL), the
    #: regions and when, so that a saved plan runs nowhere else and not
    #: too late (``engine.planfile``)
    made_for: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: a selective cleanup's: its filters (``selection.Selection``'s
    #: dict) under ``filters``, and under ``allowed`` the keys of what a
    #: plan file still selects; empty: the plan deletes everything
    selection: dict[str, Any] = dataclasses.field(default_factory=dict)

    # -- graph queries -----------------------------------------------------

    def subplan(self, wanted: Callable[[Step], bool]) -> Plan:
        """The steps ``wanted`` keeps, with the edges between them."""
        steps = {k: s for k, s in self.steps.items() if wanted(s)}
        edges = {e for e in self.edges if e[0] in steps and e[1] in steps}
        return Plan(
            projects=self.projects,
            steps=steps,
            edges=edges,
            notes=self.notes,
            soft_edges=self.soft_edges & edges,
            made_for=self.made_for,
            selection=self.selection,
        )

    def predecessors(self) -> dict[str, set[str]]:
        preds: dict[str, set[str]] = {s: set() for s in self.steps}
        for first, then in self.edges:
            preds[then].add(first)
        return preds

    def successors(self) -> dict[str, set[str]]:
        succs: dict[str, set[str]] = {s: set() for s in self.steps}
        for first, then in self.edges:
            succs[first].add(then)
        return succs

    def order(
        self, predecessors: dict[str, set[str]] | None = None
    ) -> list[str]:
        """A deterministic topological order (Kahn's algorithm);
        ``predecessors``: the plan's, where the caller has them."""
        preds = {
            s: len(p) for s, p in (predecessors or self.predecessors()).items()
        }
        succs = self.successors()
        # a heap: re-sorting a list of ready steps each time is quadratic,
        # seconds for a project with thousands of independent resources
        ready = [(self._sort_key(s), s) for s, n in preds.items() if n == 0]
        heapq.heapify(ready)
        out: list[str] = []
        while ready:
            _key, step_id = heapq.heappop(ready)
            out.append(step_id)
            for nxt in succs[step_id]:
                preds[nxt] -= 1
                if preds[nxt] == 0:
                    heapq.heappush(ready, (self._sort_key(nxt), nxt))
        if len(out) != len(self.steps):
            raise PlanError('plan has a cycle')  # guarded by build_plan
        return out

    def stages(self) -> dict[str, int]:
        """Each step's depth: 1 + the longest chain of steps before it."""
        preds = self.predecessors()
        depth: dict[str, int] = {}
        for step_id in self.order(preds):
            depth[step_id] = 1 + max(
                (depth[p] for p in preds[step_id]), default=0
            )
        return depth

    def _sort_key(self, step_id: str) -> tuple[str, str, str]:
        step = self.steps[step_id]
        return (step.target.kind, step.target.name, step_id)

    def counts(self) -> dict[str, dict[str, int]]:
        """Steps per resource kind and action, for prompts and summaries."""
        out: dict[str, dict[str, int]] = {}
        for step in self.steps.values():
            per_kind = out.setdefault(step.target.kind, {})
            per_kind[step.action] = per_kind.get(step.action, 0) + 1
        return out

    def kept(self) -> list[Step]:
        """The keep steps that keep their project alive."""
        return [
            s
            for s in self.steps.values()
            if s.action == resource.KEEP and not s.is_report_only
        ]

    def refusing(self) -> list[Step]:
        """The keeps for which a cascade refuses to start: all but the
        stuck ones (``Step.is_stuck``), which keep their project but not
        the rest from going (the run then ends with them, one line each)."""
        return [s for s in self.kept() if not s.is_stuck]

    def stuck(self) -> list[Step]:
        """The keeps of what its service will not delete from its state."""
        return [s for s in self.kept() if s.is_stuck]


@with_few_collections
def build_plan(
    inventory: Inventory,
    rules: Mapping[str, KindRules],
    projects: list[dict[str, str]],
    select: WhyNot | None = None,
) -> Plan:
    """Turn what discovery found into an ordered, acyclic plan.

    Every resource must be owned by one of ``projects``: discovery filters
    by owner, and this is the second line of that defence.

    Each region is planned on its own, with what is global (the projects,
    Keystone's kinds: no region), as if it were the only one: what a kind
    refers to is in the same region (a port's network, a volume's server),
    the one exception being what a kind names in its ``across_regions``
    (a Designate PTR record's floating IP).

    ``select``: why a resource is not selected (None: it is), for a
    selective cleanup: what it does not select is kept, and so is what
    cannot go without it (``engine.closure``).
    """
    global_refs = [r for r in inventory if not r.region]
    global_keys = {r.key for r in global_refs}
    by_region: dict[str, list[ResourceRef]] = {'': []}
    for ref in inventory:
        if ref.region:
            by_region.setdefault(ref.region, []).append(ref.in_region(''))
    merged = Plan(projects=projects, steps={}, edges=set())
    for region, found in sorted(by_region.items()):

        def select_here(ref: ResourceRef, region: str = region) -> str | None:
            assert select is not None
            placed = ref if ref.key in global_keys else ref.in_region(region)
            return select(placed)

        plan = _plan_region(
            Inventory([*found, *global_refs]),
            rules,
            projects,
            select_here if select is not None else None,
        )

        def placed(step: Step, region: str = region) -> Step:
            if step.target.key in global_keys:
                return step
            return Step(
                step.action, step.target.in_region(region), step.params
            )

        ids = {old: placed(step) for old, step in plan.steps.items()}
        merged.steps.update({s.id: s for s in ids.values()})
        merged.edges |= {(ids[a].id, ids[b].id) for a, b in plan.edges}
        merged.soft_edges |= {
            (ids[a].id, ids[b].id) for a, b in plan.soft_edges
        }
    if len(by_region) > 1:
        _link_regions(merged, rules)
    return merged


def _link_regions(plan: Plan, rules: Mapping[str, KindRules]) -> None:
    for step in list(plan.steps.values()):
        across = getattr(rules[step.target.kind], 'across_regions', None)
        if step.is_delete and across is not None:
            for edge in across(step.target):
                pair = (edge.first.id, edge.then.id)
                if pair[0] in plan.steps and pair[1] in plan.steps:
                    plan.edges.add(pair)
    cycle = find_cycle(plan.steps, plan.edges)
    if cycle is not None:
        raise PlanError(
            'dependency cycle across regions: '
            + ' -> '.join(plan.steps[s].describe() for s in cycle)
        )


def _plan_region(
    inventory: Inventory,
    rules: Mapping[str, KindRules],
    projects: list[dict[str, str]],
    select: WhyNot | None = None,
) -> Plan:
    project_ids = {p['id'] for p in projects}
    foreign = [r for r in inventory if r.project_id not in project_ids]
    if foreign:
        raise PlanError(
            'refusing to plan resources owned by another '
            'project: ' + ', '.join(r.label() for r in foreign)
        )

    steps: dict[str, Step] = {}
    for ref in inventory:
        step = rules[ref.kind].primary_step(ref)
        if step is not None:
            steps[step.id] = step

    related = [
        edge
        for ref in inventory
        for edge in rules[ref.kind].relations(ref, inventory)
    ]
    if select is not None:
        closure.unselect(steps, select)
    not_done = keep_what_serves(steps, related)
    while select is not None and closure.close(
        steps, related, inventory, select, not_done
    ):
        not_done |= keep_what_serves(steps, related)
    edges: set[tuple[str, str]] = set()
    hard_edges: set[tuple[str, str]] = set()
    # every reference behind an edge needs its own breaker: a group with
    # two rules naming another group is cut only when both rules go
    breakers: dict[tuple[str, str], dict[str, Step]] = {}
    for edge in related:
        if edge.breaker is not None and edge.breaker.id in not_done:
            edge = dataclasses.replace(edge, breaker=None)
        for step in (edge.first, edge.then):
            if step.is_break_action and step.id not in not_done:
                steps.setdefault(step.id, step)
        first = edge.first.id
        kept = steps.get(f'{resource.KEEP}:{edge.first.target.key}')
        if (
            first not in steps
            and edge.first.is_delete
            and kept is not None
            and not kept.is_report_only
        ):
            # a kept resource is never deleted: what waits for its
            # delete (its project) waits for the keep step, and stays
            first = kept.id
        if first not in steps or edge.then.id not in steps:
            continue  # one side goes with its owner: nothing to order
        if first == edge.then.id:
            continue
        pair = (first, edge.then.id)
        edges.add(pair)
        if edge.required:
            hard_edges.add(pair)
        if edge.breaker is not None:
            breakers.setdefault(pair, {})[edge.breaker.id] = edge.breaker

    # an order asked for both ways is required if any kind requires it
    plan = Plan(
        projects=projects,
        steps=steps,
        edges=edges,
        soft_edges=edges - hard_edges,
    )
    _cut_cycles(plan, breakers)
    return plan


def keep_what_serves(steps: dict[str, Step], related: list[Edge]) -> set[str]:
    """Keeps what serves a resource that stays (``Edge.serves``), in
    ``steps``: a delete becomes a keep that names what it serves, and a
    break action is not done (the returned IDs), which keeps its target:
    nothing of the project that another project's traffic goes through
    is deleted while that traffic stays (a shared network's subnets, the
    router interfaces on them, that router and its gateway). What stays:
    a blocking keep, and what a required edge puts after one (it is
    skipped when the plan runs). To a fixpoint: each round only adds."""
    not_done: set[str] = set()
    staying: set[str] = {
        s.target.key
        for s in steps.values()
        if s.action == resource.KEEP and not s.is_report_only
    }

    def stays(step: Step) -> bool:
        if step.is_break_action:
            return step.id in not_done
        return step.target.key in staying

    def keep(target_key: str, why: str) -> None:
        if target_key in staying:
            return
        staying.add(target_key)
        delete = steps.pop(f'{resource.DELETE}:{target_key}', None)
        if delete is not None:
            kept = resource.keep(delete.target, why)
            steps[kept.id] = kept

    changed = True
    while changed:
        changed = False
        for edge in related:
            first, then = edge.first, edge.then
            if (
                edge.required
                and then.is_delete
                and then.id in steps
                and then.target.key not in staying
                and stays(first)
            ):
                staying.add(then.target.key)  # skipped when the plan runs
                changed = True
            if not edge.serves or not stays(then) or stays(first):
                continue
            label = label_of(steps, then)
            if first.is_break_action:
                not_done.add(first.id)
                keep(
                    first.target.key,
                    f'{first.describe().split(" on ")[0]} is not done: it '
                    f'serves {label}, which stays',
                )
            elif first.is_delete:
                keep(first.target.key, f'serves {label}, which stays')
            changed = True
    return not_done


def _cut_cycles(
    plan: Plan, breakers: dict[tuple[str, str], dict[str, Step]]
) -> None:
    """Cuts each strongly connected component's cycles within it: a search
    of the whole plan per cycle cut was quadratic (a thousand cycles of
    security groups at N=100,000). Cutting only takes edges away, and the
    breakers it adds are new steps that nothing waits for, so no cycle
    appears elsewhere, unless a breaker was a step already, with edges of
    its own: then a last search of the whole plan cuts what it closed."""
    components = cyclic_components(plan.steps, plan.edges)
    component_of = {n: i for i, nodes in enumerate(components) for n in nodes}
    inner: list[set[tuple[str, str]]] = [set() for _ in components]
    for first, then in plan.edges:
        i = component_of.get(first)
        if i is not None and component_of.get(then) == i:
            inner[i].add((first, then))
    reused = [
        _cut_cycles_among(plan, breakers, set(nodes), edges)
        for nodes, edges in zip(components, inner, strict=True)
    ]
    if any(reused):
        _cut_cycles_among(plan, breakers, plan.steps, plan.edges)


def _cut_cycles_among(
    plan: Plan,
    breakers: dict[tuple[str, str], dict[str, Step]],
    nodes: Iterable[str],
    edges: set[tuple[str, str]],
) -> bool:
    """Cuts the cycles of the graph of ``nodes`` and ``edges`` (the whole
    plan's or a part of it, kept in step with the plan); whether a breaker
    it added was a step already."""
    reused = False
    while True:
        cycle = find_cycle(nodes, edges)
        if cycle is None:
            return reused
        cycle_edges = list(zip(cycle, cycle[1:] + cycle[:1]))
        breakable = sorted(e for e in cycle_edges if e in breakers)
        if not breakable:
            raise PlanError(
                'dependency cycle that no break action can cut: '
                + ' -> '.join(
                    plan.steps[s].describe() for s in cycle + cycle[:1]
                )
            )
        first, then = breakable[0]
        edges.discard((first, then))
        plan.edges.discard((first, then))
        plan.soft_edges.discard((first, then))
        for breaker in breakers.pop((first, then)).values():
            reused = reused or breaker.id in plan.steps
            plan.steps.setdefault(breaker.id, breaker)
            plan.edges.add((breaker.id, then))
            if breaker.id in nodes:
                edges.add((breaker.id, then))
