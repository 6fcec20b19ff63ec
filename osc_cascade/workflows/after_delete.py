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

"""After OSC deleted the emptied projects (``finish``): with ``settle``,
wait out the services' token caches and delete what appeared with the
projects' IDs in every region; then reset the quotas the drain froze, the
last thing the cascade does. Without ``settle`` the quotas stay frozen
at exit: a token a service validated before the drain may still be in its
cache, and the quota rows outlive the project. Their release is left to a
later purge, written down (``late_release.hold``). A project that still
exists keeps its freeze.
"""

from __future__ import annotations

from collections.abc import Sequence
import contextlib

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import (
    DONE,
    FAILED,
    PROJECT,
    Event,
    StepResult,
)
from osc_cascade.engine.resource import ResourceRef, delete
from osc_cascade.workflows import late_release
from osc_cascade.workflows.cascade import (
    CascadeOutcome,
    ProjectCascade,
    still_to_do,
)
from osc_cascade.workflows.cascade_messages import leftover_message


def finish(workflow: ProjectCascade, outcome: CascadeOutcome) -> list[str]:
    """After OSC deleted the emptied projects: with ``settle``, wait,
    then delete what appeared with their IDs (``settle``) and reset the
    quotas the drain froze; without, leave them frozen and say when
    and how they are released. What there is to say, one line each.
    The projects' locks are released at the end."""
    try:
        return _finish(workflow, outcome)
    finally:
        workflow.release()


def _finish(workflow: ProjectCascade, outcome: CascadeOutcome) -> list[str]:
    notes = []
    gone = []
    for project in outcome.empty_projects + outcome.deleted_children:
        step = delete(project)
        if workflow.exists(project.id):
            notes.append(
                f'project {project.name} ({project.id}) still exists: '
                'its quotas stay frozen'
            )
            workflow.emit(
                Event(
                    PROJECT,
                    step,
                    'still exists: its quotas stay frozen',
                    StepResult(step, FAILED),
                )
            )
        else:
            gone.append(project)
            workflow.emit(Event(PROJECT, step, '', StepResult(step, DONE)))
    if gone and workflow.options.settle > 0:
        try:
            notes.extend(settle(workflow, gone))
        except BaseException:
            # interrupted or refused: the quotas stay frozen, their release
            # written down for the later purge; never hiding the error
            with contextlib.suppress(CascadeError):
                _hold(workflow, gone)
            raise
        for project in gone:
            notes.extend(
                workflow.drainer.release_quotas(
                    project.id, workflow.records.get(project.id) or {}
                )
            )
    elif gone:
        # the door stays shut for the token cache window: released later
        notes.extend(_hold(workflow, gone))
    workflow.notes.extend(notes)
    return notes


def _hold(workflow: ProjectCascade, gone: Sequence[ResourceRef]) -> list[str]:
    """The quotas of ``gone`` left frozen, their release written down
    (``late_release.hold``); the cloud's time asked only if one of them
    froze something."""
    frozen = [
        p for p in gone if (workflow.records.get(p.id) or {}).get('quotas')
    ]
    if not frozen:
        return []
    return late_release.hold(
        frozen,
        workflow.records,
        workflow.projects.cloud_time(),
        workflow.options.report_file,
    )


def settle(workflow: ProjectCascade, gone: Sequence[ResourceRef]) -> list[str]:
    """Wait ``settle`` seconds (a token a service validated before the
    drain stays valid there for its token cache time), then discover
    by the deleted projects' IDs in every region of the catalog and
    delete what appeared, in rounds, until nothing is left."""
    started = workflow.clock.now()
    workflow.wait(workflow.options.settle)
    ids = [p.id for p in gone]
    deleted = 0
    for done in range(workflow.options.verify_rounds + 1):
        refs, _notes = workflow.discovery.run(
            ids, among=workflow.regions.catalog
        )
        found = workflow.build(refs, gone)
        if found.kept():
            raise CascadeError(
                'After the settle, the deleted projects own resources '
                'that the cascade keeps: '
                + '; '.join(s.describe() for s in found.kept())
                + '. Their quotas stay frozen; `openstack orphan list` '
                'finds them.'
            )
        todo = still_to_do(found)
        if not todo.steps:
            break
        if done == workflow.options.verify_rounds:
            raise CascadeError(
                'After the settle, the deleted projects still own '
                + leftover_message(todo, workflow.runs).split(': ', 1)[1]
                + '. Their quotas stay frozen; `openstack orphan list` '
                'finds them.'
            )
        workflow.runs.append(workflow.run_round(todo))
        workflow.check_interrupted()
        deleted += sum(
            r.outcome == DONE for r in workflow.runs[-1].results.values()
        )
    workflow.phases['settle'] = workflow.clock.now() - started
    return [
        f'settle: {deleted} resource(s) appeared after the delete and '
        'were deleted'
    ]
