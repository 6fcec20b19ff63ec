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

"""``project sweep``: which drained projects are due (drained longer ago
than an age, by Keystone's clock), and whether one is still as the sweep
listed it (not enabled again, protected, restored or drained anew); their
cascade, all at once, is ``sweep_many``'s.
"""

from __future__ import annotations

import datetime
from typing import Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows import drain_record
from osc_cascade.workflows.cascade import ProjectCascade
from osc_cascade.workflows.projects import is_protected, protected_message


class Changed(CascadeError):
    """A drained project the sweep listed is no longer as it was listed:
    enabled again, protected, restored or drained anew."""


def unchanged(
    drained: drain_record.Drained, body: dict[str, Any] | None
) -> None:
    """Raise ``Changed`` (one line) unless the project is still as the
    sweep listed it: there, disabled as the drain left it, not protected,
    with the same drain record (begun, and drained, when and by whom it
    was)."""
    label = drained.label
    if body is None:
        raise Changed(f'Project {label} is gone since the sweep listed it.')
    if body.get('enabled'):
        raise Changed(
            f'Project {label} was enabled again since the sweep listed it: '
            'left as it is.'
        )
    if is_protected(body):
        raise Changed(protected_message(label, drained.id))
    record = drain_record.DrainRecord.record_in(drained.id, body)
    if record is None or any(
        record.get(k) != drained.record.get(k)
        for k in (
            'started_at',
            drain_record.DRAINED_AT,
            drain_record.DRAINED_BY,
        )
    ):
        raise Changed(
            f'Project {label} was restored or drained again since the '
            'sweep listed it: left as it is.'
        )


def due(
    workflow: ProjectCascade, older_than: float
) -> tuple[list[drain_record.Drained], list[str]]:
    """The projects drained longer ago than ``older_than`` seconds
    (by Keystone's clock), oldest first, and notes."""
    now = workflow.projects.cloud_time()
    found, notes = workflow.projects.retried(
        'listing the drained projects',
        lambda: drain_record.drained_projects(workflow.conn),
    )
    cutoff = now - datetime.timedelta(seconds=older_than)
    for d in found:
        if d.stage == drain_record.RESTORING:
            notes.append(
                f'project {d.label}: a restore gave back part of its drain '
                'record, the rest is left in it: not swept (restore it '
                'again, or drain it again to sweep it later)'
            )
    return [
        d
        for d in found
        if d.stage != drain_record.RESTORING
        and d.drained_at
        and d.drained_at <= cutoff
    ], notes
