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

"""Why a cascade does not delete the projects, as its refusals say it:
what they own that the cascade keeps, what is left after the verification
rounds (and why each failed), and what other regions than ``--region``'s
still hold.
"""

from __future__ import annotations

from collections.abc import Sequence

from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import STUCK, RunResult, StepResult
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef, Step


def kept_message(kept: Sequence[Step], *, drained: bool) -> str:
    done = (
        'The projects stay drained (disabled)'
        if drained
        else 'Nothing was changed'
    )
    return (
        f'{done}: they own resources that the cascade keeps, and a project '
        'is never deleted while it still owns something: '
        + '; '.join(s.describe() for s in kept)
        + (
            '. Pass --delete-shared to delete what others may use too.'
            if any(s.params.get('shared') for s in kept)
            else '.'
        )
    )


def elsewhere_message(remaining: Sequence[ResourceRef]) -> str:
    by_region: dict[str, list[str]] = {}
    for ref in remaining:
        by_region.setdefault(ref.region, []).append(ref.label())
    return (
        'The projects were not deleted and stay drained (disabled): '
        + '; '.join(
            f'{region} still holds {len(labels)} resource(s): '
            + ', '.join(sorted(labels))
            for region, labels in sorted(by_region.items())
        )
        + '. Cascade those regions too (--region, or no --region for all).'
    )


def stop_if_stuck(run: RunResult) -> None:
    """No more verification rounds after a round with what its service
    will not delete from its state: another would find it as it is."""
    stuck = run.by_outcome(STUCK)
    if stuck:
        raise CascadeError(stuck_message(stuck))


def stuck_message(stuck: Sequence[StepResult]) -> str:
    """The projects stay: what their services will not delete from the
    state it is in, one line each (its state, since when, what the
    service needs, what would force it)."""
    return (
        'The projects were not deleted and stay drained (disabled): their '
        f'services will not delete {len(stuck)} resource(s) from the state '
        'they are in, which waiting does not change: '
        + '; '.join(
            sorted(f'{r.step.target.label()} {r.error}' for r in stuck)
        )
    )


def leftover_message(leftover: Plan, runs: Sequence[RunResult]) -> str:
    errors = {}
    for run in runs:
        for result in run.results.values():
            if result.error:
                errors[result.step.target.key] = result.error
    items = []
    for step in leftover.steps.values():
        why = errors.get(step.target.key)
        items.append(step.target.label() + (f' ({why})' if why else ''))
    return (
        'The projects were not deleted: they still own '
        f'{len(items)} resource(s): ' + '; '.join(sorted(items))
    )
