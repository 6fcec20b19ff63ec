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

"""``project sweep --execute``: every due project in one plan and one run
(``workflows.many``), not one cascade after another, each project ending
on its own: skipped if protected or held by another actor, left as it is
if it changed since the sweep listed it (``sweep.unchanged``, checked
under its lock and again by its drain), and kept drained, with the reason,
if anything of it stays.
"""

from __future__ import annotations

from collections.abc import Sequence
import functools

from osc_cascade.engine.errors import CascadeError, one_line
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.workflows import actor, after_delete, drain_record, sweep
from osc_cascade.workflows.many import ManyProjects
from osc_cascade.workflows.projects import (
    Protected,
    is_protected,
    protected_message,
)

#: a project's outcome in the sweep (``v1.project_drain``'s)
DONE, SKIPPED, CHANGED, FAILED = 'done', 'skipped', 'changed', 'failed'


def complete_many(
    workflow: ManyProjects, due: Sequence[drain_record.Drained]
) -> dict[str, tuple[str, str]]:
    """Each due project's outcome and the line that says it, by ID."""
    results: dict[str, tuple[str, str]] = {}
    held: list[tuple[drain_record.Drained, list[ResourceRef]]] = []
    for drained in due:
        if is_protected(drained.project):
            results[drained.id] = (
                SKIPPED,
                'skipped: ' + protected_message(drained.label, drained.id),
            )
            continue
        taken: list[ResourceRef] = []
        try:
            project = workflow.projects.resolve(drained.id)
            targets = workflow.targets([project])
            for target in targets:
                workflow.actor.hold(target.id, f'{target.name} ({target.id})')
                taken.append(target)
            sweep.unchanged(drained, workflow.drainer.shown(drained.id))
            workflow.drainer.expected[drained.id] = functools.partial(
                sweep.unchanged, drained
            )
        except CascadeError as exc:
            for target in taken:
                workflow.actor.release(target.id)
            results[drained.id] = _refused(exc)
            continue
        held.append((drained, targets))
    every = [t for _, targets in held for t in targets]
    if not every:
        workflow.release()
        return results
    try:
        plan = workflow.plan(every)
        workflow.notes.extend(plan.notes)
        outcome = workflow.execute(plan, every)
        workflow.projects.delete(outcome.empty_projects)
    except BaseException:
        workflow.release()
        raise
    workflow.notes.extend(after_delete.finish(workflow, outcome))
    for drained, _targets in held:
        why = outcome.stays.get(drained.id)
        if drained.id in workflow.refusals:  # its drain found it changed
            results[drained.id] = _refused(workflow.refusals[drained.id])
        elif why:
            results[drained.id] = (FAILED, f'failed: stays drained: {why}')
        else:
            results[drained.id] = (DONE, '')
    return results


def _refused(exc: CascadeError) -> tuple[str, str]:
    if isinstance(exc, actor.Busy):
        return SKIPPED, f'skipped: {one_line(exc)}'
    if isinstance(exc, (sweep.Changed, Protected)):
        return CHANGED, f'skipped: {one_line(exc)}'
    return FAILED, f'failed: {one_line(exc)}'
