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

"""``project drain`` and ``project restore``: the cascade's stage 1 alone
(a soft delete: the projects disabled and their quotas frozen, recorded on
each), and its reverse from the record. Both run a ``ProjectCascade``'s
drain, under its per-project locks; nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.workflows import drain_record
from osc_cascade.workflows.cascade import ProjectCascade
from osc_cascade.workflows.projects import (
    Protected,
    is_protected,
    leaves_first,
    project_ref,
    protected_message,
)


def drain(
    workflow: ProjectCascade, targets: Sequence[ResourceRef]
) -> list[dict[str, Any]]:
    """Stage 1 only (``project drain``): the drain of each project,
    leaves first, under the projects' locks; the projects stay
    drained. The records."""
    workflow.hold(targets)
    try:
        workflow.drain(targets)
    finally:
        workflow.release()
    return [workflow.records[t.id] for t in targets]


def restore_targets(
    workflow: ProjectCascade,
    projects: Sequence[Any],
    *,
    recursive: bool = False,
) -> list[ResourceRef]:
    """The projects to restore: each must have a drain record; with
    ``recursive``, the drained projects of their subtrees too."""
    refs: dict[str, ResourceRef] = {}
    for project in projects:
        label = f'{project.name} ({project.id})'
        if is_protected(project):
            raise Protected(protected_message(label, project.id))
        if workflow.drainer.record_of(project.id) is None:
            raise CascadeError(
                f'Project {label} has no drain record '
                f'({drain_record.RECORD}): nothing to restore.'
            )
        refs[project.id] = project_ref(project)
        for child in workflow.projects.subtree(project) if recursive else ():
            if workflow.drainer.record_of(child.id) is None:
                continue
            if is_protected(child):
                raise Protected(
                    protected_message(f'{child.name} ({child.id})', child.id)
                )
            refs[child.id] = project_ref(child)
    return list(refs.values())


def restore(
    workflow: ProjectCascade, targets: Sequence[ResourceRef]
) -> list[str]:
    """Reverse each project's drain record, parents first (Keystone
    refuses to enable a project under a disabled parent), under the
    projects' locks. What did not come back, one line each, each
    left in its project's record for a second restore (what there is to
    say besides is in ``notes``)."""
    workflow.hold(targets)
    notes = []
    try:
        for target in reversed(leaves_first(targets)):
            label = f'{target.name} ({target.id})'
            record = workflow.drainer.record_of(target.id) or {}
            stage = str(record.get('stage') or '')
            if stage not in (
                '',
                drain_record.DRAINING,
                drain_record.DRAINED,
                drain_record.RESTORING,
            ):
                workflow.notes.append(
                    f'project {label} was at {stage!r}: what the '
                    'cascade deleted stays deleted'
                )
            notes.extend(
                f'project {label}: {n}'
                for n in workflow.drainer.restore(target.id)
            )
    finally:
        workflow.release()
    return notes
