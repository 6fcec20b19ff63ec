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

"""The product run against the fake cloud, on a FakeClock and with no
delays: a project's cascade planned, one kind's deletes run."""

from __future__ import annotations

from osc_cascade.engine.executor import Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.workflows import scoped
from osc_cascade.workflows.cascade import CascadeOptions, ProjectCascade
from tests.unit.fakes.clock import FakeClock


def zero_delays():
    """Retries and polls that never advance the fake clock."""
    return RetryPolicy(base_delay=0, max_delay=0, poll_min=0, poll_max=0)


def scoped_cascade(conn, **kw):
    """A cascade without admin on ``conn`` (a token scoped to the project
    or its domain), its clock and retries the fakes' (``options=`` the
    cascade's options, the rest ScopedCascade's own)."""
    options = kw.pop('options', CascadeOptions())
    return scoped.ScopedCascade(
        conn, options, clock=FakeClock(), retry=zero_delays(), **kw
    )


def cascade_for(cloud, project_id, **options):
    """The cascade of one project, planned: (cascade, targets, plan)."""
    conn = cloud.connection()
    pc = ProjectCascade(
        conn, CascadeOptions(**options), clock=FakeClock(), retry=zero_delays()
    )
    targets = pc.resolve([project_id])
    return pc, targets, pc.plan(targets)


def cascade_and_delete(cloud, project_id, **options):
    """The cascade run, and the project deleted as OSC does after it:
    (cascade, outcome)."""
    pc, targets, plan = cascade_for(cloud, project_id, **options)
    outcome = pc.execute(plan, targets)
    pc.conn.identity.delete_project(project_id)
    return pc, outcome


def run_kind(cloud, kind, refs):
    """Plan and run the deletes of ``refs`` of ``kind`` alone."""
    kinds = {kind.name: kind}
    plan = build_plan(
        Inventory(refs),
        kinds,
        [{'id': p, 'name': ''} for p in {r.project_id for r in refs}],
    )
    return Executor(
        cloud.connection(), kinds, clock=FakeClock(), retry=zero_delays()
    ).run(plan)
