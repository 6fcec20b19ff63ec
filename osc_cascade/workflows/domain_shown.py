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

"""``domain delete --cascade --plan-file``: the domain's plan saved by its
dry run, run later as shown.

The file is the dry run's whole plan (``DomainPlan.whole``), refused when
made for another cloud, other regions, another domain, or longer ago than
``--plan-max-age`` (``engine.planfile``). The run makes the domain's plan
again and does, of it, only what the plan shown does; what it did not
show stays, one line each, and so keeps the domain (and with it its
users, groups, roles and configuration):

- a project, user, group, role assignment or configuration the plan shown
  does not delete (made since, or shown as staying);
- a user that owns what the plan shown did not delete of it;
- the domain itself, when the plan shown kept it.

The projects' part runs the saved steps of the projects that remain: the
project cascade's check after the drain (``engine.reconcile``) keeps a
project that owns what the plan shown did not, older than the drain, and
leaves alone what is no longer the project's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from osc_cascade.engine import planfile
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef, delete
from osc_cascade.workflows.domain import with_parents

#: why what the plan shown did not delete stays
NOT_SHOWN = (
    'not deleted by the plan shown (--plan-file): it stays; run --dry-run '
    'again to see it'
)


def load(cascade: Any, path: str, domain: ResourceRef) -> Plan:
    """The domain's plan saved in ``path``, checked as the project
    cascade checks its own (``planfile.load``), and for this domain."""
    project_cascade = cascade.project_cascade
    saved = planfile.load(
        path,
        None,
        project_cascade._here(),
        cascade.options.plan_max_age,
    )
    if domain.id not in {p['id'] for p in saved.projects}:
        raise CascadeError(
            f'Plan file {path} is not the plan of domain {_name(domain)}.'
        )
    return saved


def as_shown(fresh: Any, saved: Plan) -> Any:
    """``fresh`` (the ``DomainPlan`` made now), as far as ``saved``
    showed it; what it did not show is refused."""
    deletes = {s.id for s in saved.steps.values() if s.is_delete}
    refused = dict(fresh.refused)
    if delete(fresh.domain).id not in deletes:
        refused[f'domain {_name(fresh.domain)}'] = (
            'the plan shown keeps the domain: it stays'
        )
    stay = {t.id for t in fresh.project_targets if delete(t).id not in deletes}
    for target in fresh.project_targets:
        if target.id in stay:
            refused[f'project {_name(target)}'] = NOT_SHOWN
    stay = with_parents(
        fresh.project_targets,
        sorted(stay),
        refused,
        lambda t: t.attrs.get('parent_id'),
    )
    projects = [t for t in fresh.project_targets if t.id not in stay]
    ids = {t.id for t in projects}
    shown = saved.subplan(lambda s: s.target.project_id in ids)
    users = []
    for user in fresh.user_targets:
        mine = [
            s
            for s in fresh.users.steps.values()
            if s.target.project_id == user.id
        ]
        unshown = [s for s in mine if s.id not in deletes]
        if unshown:
            refused[f'user {_name(user)}'] = (
                NOT_SHOWN
                if delete(user).id not in deletes
                else 'owns what the plan shown (--plan-file) did not '
                'delete: '
                + '; '.join(sorted(s.target.label() for s in unshown))
            )
        else:
            users.append(user)
    kept = {u.id for u in users}
    for ref in fresh.rest:
        if delete(ref).id not in deletes:
            refused[ref.label()] = NOT_SHOWN
    return dataclasses.replace(
        fresh,
        projects=Plan(
            projects=[p for p in saved.projects if p['id'] in ids],
            steps=shown.steps,
            edges=shown.edges,
            notes=fresh.projects.notes,
            soft_edges=shown.soft_edges,
            made_for=saved.made_for,
        ),
        project_targets=projects,
        users=fresh.users.subplan(lambda s: s.target.project_id in kept),
        user_targets=users,
        refused=refused,
    )


def _name(ref: ResourceRef) -> str:
    return f'{ref.name} ({ref.id})'
