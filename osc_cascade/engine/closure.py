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

"""A selection closed over the plan's dependencies (pure: no I/O).

A filter decides per resource; the plan decides what can go. A selected
resource that cannot be deleted without deleting (or changing) one that
stays is kept, with one line naming what keeps it: an old network under a
new port, a router with a new interface, an old security group that a new
one's rule names. A resource that is not selected is never deleted to make
room, and a break action (removing a router's interface, clearing its
gateway, deleting a rule) is done only when everything it changes is
selected and goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from osc_cascade.engine import resource
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.engine.selection import PROJECT_KIND

#: why a resource is not selected (None: it is), for ``select``
WhyNot = Callable[[ResourceRef], str | None]

#: the edges (``first``'s kind, ``then``'s) whose first may take the
#: second with it: Nova deletes the ports it made for a server, and the
#: volumes it boots from with delete_on_termination; an edge that is an
#: order only (``required=False``: a stack and what it made) is one too
OWNS = frozenset(
    {
        ('compute.server', 'network.port'),
        ('compute.server', 'block_storage.volume'),
    }
)


def unselect(steps: dict[str, Step], why_not: WhyNot) -> None:
    """Each delete of a resource ``why_not`` does not select becomes a
    keep that says why (in ``steps``)."""
    for step_id, step in list(steps.items()):
        if not step.is_delete or step.target.kind == PROJECT_KIND:
            continue
        why = why_not(step.target)
        if why is not None:
            del steps[step_id]
            kept = resource.keep(step.target, f'not selected: {why}')
            kept.params['unselected'] = True
            steps[kept.id] = kept


def close(
    steps: dict[str, Step],
    related: Sequence[Any],
    inventory: Iterable[ResourceRef],
    why_not: WhyNot,
    not_done: set[str],
) -> bool:
    """Keeps (in ``steps``) each delete that waits for something that
    stays: a kept resource's delete, or a break action that is not done
    (``not_done``, to which the break actions that would change a
    resource that stays are added). To a fixpoint; whether it changed
    anything. ``related``: the kinds' edges (``planner.Edge``)."""
    by_id: dict[str, list[ResourceRef]] = {}
    for ref in inventory:
        by_id.setdefault(ref.id, []).append(ref)
    staying = {
        s.target.key
        for s in steps.values()
        if s.action == resource.KEEP and not s.is_report_only
    }

    def changes(step: Step) -> list[ResourceRef]:
        """What a break action changes: its target, and what its params
        name (a router interface's port)."""
        named = [
            ref
            for value in step.params.values()
            if isinstance(value, str)
            for ref in by_id.get(value, ())
        ]
        return [step.target, *named]

    def blocker(step: Step) -> str | None:
        """Why ``step`` (the first of an edge) is not done, if it is not."""
        if step.is_break_action:
            for ref in changes(step):
                if ref.key in staying:
                    return f'{_what(step)} is not done: {ref.label()} stays'
                why = why_not(ref) if ref.kind != PROJECT_KIND else None
                if why is not None:
                    return (
                        f'{_what(step)} is not done: {ref.label()} is not '
                        f'selected ({why})'
                    )
            if step.id in not_done:
                return f'{_what(step)} is not done'
            return None
        if step.target.key in staying:
            return f'{label_of(steps, step)} stays, and goes first'
        return None

    def goes(step: Step) -> bool:
        """A delete of the plan (the projects' are not the closure's)."""
        return (
            step.is_delete
            and step.id in steps
            and step.target.kind != PROJECT_KIND
        )

    def keep_instead(step: Step, why: str) -> None:
        # the step's target as discovery found it (an edge's has no name)
        kept = resource.keep(steps.pop(step.id).target, why)
        steps[kept.id] = kept
        staying.add(step.target.key)

    any_change = False
    changed = True
    while changed:
        changed = False
        for edge in related:
            why = blocker(edge.first) if goes(edge.then) else None
            if why is None:
                continue
            if edge.first.is_break_action:
                not_done.add(edge.first.id)
            keep_instead(edge.then, why)
            changed = any_change = True
        # what may take a resource that stays with it stays too
        for edge in related:
            if (
                goes(edge.first)
                and _owns(edge)
                and edge.then.target.key in staying
            ):
                keep_instead(
                    edge.first,
                    f'{label_of(steps, edge.then)} stays, and would go '
                    'with it',
                )
                changed = any_change = True
        # a break action on what stays is not done, whatever it serves
        for edge in related:
            for step in (edge.first, edge.then, edge.breaker):
                if (
                    step is not None
                    and step.is_break_action
                    and step.id not in not_done
                    and blocker(step) is not None
                ):
                    not_done.add(step.id)
                    changed = any_change = True
    return any_change


def label_of(steps: dict[str, Step], step: Step) -> str:
    """The label of ``step``'s target as discovery found it (an edge
    names a resource by kind and ID alone)."""
    for action in (resource.KEEP, resource.DELETE):
        found = steps.get(f'{action}:{step.target.key}')
        if found is not None:
            return found.target.label()
    return step.target.label()


def _owns(edge: Any) -> bool:
    """Whether ``edge.first``'s delete may delete ``edge.then`` too."""
    return not edge.required or (
        (edge.first.target.kind, edge.then.target.kind) in OWNS
    )


def _what(step: Step) -> str:
    return step.describe().split(' (')[0]
