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

"""Graph algorithms of the planner, on step ids and edges."""

from __future__ import annotations

from collections.abc import Iterable


def find_cycle(
    nodes: Iterable[str], edges: Iterable[tuple[str, str]]
) -> list[str] | None:
    """One cycle of the graph as a list of nodes, or None if it is a DAG.

    Iterative depth-first search (a recursive one overflows on the long
    chains a project with thousands of resources produces).
    """
    succs: dict[str, list[str]] = {n: [] for n in nodes}
    for first, then in edges:
        succs[first].append(then)
    for n in succs:
        succs[n].sort()
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(succs, white)
    for root in sorted(succs):
        if colour[root] != white:
            continue
        stack = [(root, iter(succs[root]))]
        path = [root]
        colour[root] = grey
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                colour[node] = black
            elif colour[child] == grey:
                return path[path.index(child) :]
            elif colour[child] == white:
                colour[child] = grey
                stack.append((child, iter(succs[child])))
                path.append(child)
    return None


def cyclic_components(
    nodes: Iterable[str], edges: Iterable[tuple[str, str]]
) -> list[list[str]]:
    """The strongly connected components that hold a cycle (more than one
    node, or a node with an edge to itself), each sorted, in the order of
    their first node: every cycle of the graph lies within one of them.

    Tarjan's algorithm, iterative (as ``find_cycle``, for long chains)."""
    succs: dict[str, list[str]] = {n: [] for n in nodes}
    looped: set[str] = set()
    for first, then in edges:
        succs[first].append(then)
        if first == then:
            looped.add(first)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in succs:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(succs[root]))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in looped:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(succs[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)
