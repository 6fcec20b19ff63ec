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

"""What a run may delete, given the plan that was shown and what the
project owns now (pure: no I/O).

The plan shown (or saved with ``--plan-file``) was made before the drain,
maybe days before. Right before deleting, the workflow lists what the
projects own again; a step runs only if its resource is still there under
the same project. A resource the preview did not show is deleted only if
it was created after the drain began: that is the race the drain exists
for. One created before it means the preview missed it, and nothing that
was not previewed is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
import dataclasses
import datetime

from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import KEEP, ResourceRef, Step
from osc_cascade.engine.selection import parse_time


@dataclasses.dataclass
class Reconciled:
    #: the steps to run: the shown plan's, as far as they still hold
    plan: Plan
    #: the shown plan's steps whose resource is no longer the project's
    #: (gone, or given to another project)
    dropped: list[Step]
    #: deletes the preview did not show, of resources older than the drain
    unpreviewed: list[Step]


def reconcile(
    shown: Plan, fresh: Plan, since: datetime.datetime
) -> Reconciled:
    """``fresh`` is the plan of what the projects own now; ``since`` when
    the drain began, by the cloud's clock."""
    shown_ids = set(shown.steps)
    # a resource whose delete was shown and that must now be kept (lent to
    # another project's server since) was previewed: its keep refuses the
    # run as what it is, not as something the preview missed
    shown_targets = {s.target.key for s in shown.steps.values()}
    kept_now = {
        s.id: s.target.key
        for s in fresh.steps.values()
        if s.action == KEEP and s.target.key in shown_targets
    }
    shown_ids |= set(kept_now)
    dropped = [
        s
        for s in shown.steps.values()
        if not s.is_break_action
        and s.id not in fresh.steps
        and s.target.key not in kept_now.values()
    ]
    return Reconciled(
        fresh.subplan(
            lambda s: (
                s.is_break_action
                or s.is_report_only
                or s.id in shown_ids
                or created_after(s.target, since)
            )
        ),
        dropped,
        unpreviewed(fresh.steps.values(), shown_ids, since),
    )


def unpreviewed(
    steps: Iterable[Step], planned: set[str], since: datetime.datetime
) -> list[Step]:
    """The deletes (and keeps) among ``steps`` that were not planned and
    whose resource is older than ``since``: what the preview missed."""
    return [
        s
        for s in steps
        if not (s.is_break_action or s.is_report_only)
        and s.id not in planned
        and not created_after(s.target, since)
    ]


def created_after(ref: ResourceRef, since: datetime.datetime) -> bool:
    """Whether the service says the resource was created after ``since``
    (to the second, strictly: a resource of the drain's own second may
    be older than it). Without a creation time, it was not."""
    created = parse_time(ref.created_at)
    return created is not None and created > since.replace(microsecond=0)
