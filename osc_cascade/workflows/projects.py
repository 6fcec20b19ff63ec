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

"""The projects a workflow acts on, as Keystone has them: resolved by name
or ID, their subtrees, disabled for the drain, deleted at the end.

Keystone's calls are ``api.keystone``'s; each is retried here with the
workflow's clock and policy while it may pass, and a failure that stays is
one line (``Projects.retried``: ``engine.retry.checked``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import datetime
import email.utils
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, checked

#: what a 403 from Keystone means the caller lacks
NEEDS = 'the cascade needs the admin role'


class Projects:
    def __init__(self, conn: Any, *, retry: RetryPolicy, clock: Clock):
        self.conn = conn
        self.retry = retry
        self.clock = clock

    def retried(self, what: str, call: Callable[[], Any]) -> Any:
        """``call()``, retried while it may pass; ``what`` it is, for the
        one line of a failure that stays (a 403: the admin role needed)."""
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=NEEDS
        )

    def resolve(self, name_or_id: str, domain: str | None = None) -> Any:
        """A project by ID or by name (in ``domain`` if given); an
        ambiguous name lists the candidates."""
        domain_id = None
        if domain:
            found = self.retried(
                f'looking up domain {domain!r}',
                lambda: keystone.find_domain(self.conn, domain),
            )
            if found is None:
                raise CascadeError(
                    f'No domain with a name or ID of {domain!r} exists.'
                )
            domain_id = found.id
        project = self.retried(
            f'looking up project {name_or_id!r}',
            lambda: keystone.project_or_none(self.conn, name_or_id),
        )
        if project is not None and (
            domain_id is None or project.domain_id == domain_id
        ):
            return project
        query = {'name': name_or_id}
        if domain_id:
            query['domain_id'] = domain_id
        matches = self.retried(
            f'looking up project {name_or_id!r}',
            lambda: keystone.projects_named(self.conn, **query),
        )
        if not matches:
            where = f' in domain {domain!r}' if domain else ''
            raise CascadeError(
                f'No project with a name or ID of {name_or_id!r} '
                f'exists{where}.'
            )
        if len(matches) > 1:
            candidates = ', '.join(
                f'{p.id} (domain {p.domain_id})' for p in matches
            )
            raise CascadeError(
                f'More than one project is named {name_or_id!r}: '
                f'{candidates}; name it by ID or use --domain.'
            )
        return matches[0]

    def subtree(self, project: Any) -> list[Any]:
        """Every project below ``project``, one level at a time: the
        children of each are listed by ``parent_id``. Keystone cuts that
        listing at its list_limit (and only a flag the SDK drops says so):
        a truncated level is completed from the parent's
        ``subtree_as_ids``, which list_limit does not cut, each child it
        adds read by ID."""
        out, todo = [], [project.id]
        while todo:
            parent = todo.pop()
            what = f'listing the child projects of {parent}'
            listed = self.retried(
                what,
                lambda p=parent: keystone.projects(self.conn, parent_id=p),
            )
            children = [keystone.as_project(c) for c in listed.items]
            if listed.truncated:
                shown = {c.id for c in children}
                ids = self.retried(
                    what, lambda p=parent: keystone.child_ids(self.conn, p)
                )
                for child_id in (i for i in ids if i not in shown):
                    child = self.retried(
                        f'reading child project {child_id}',
                        lambda c=child_id: keystone.project_or_none(
                            self.conn, c
                        ),
                    )
                    if child is not None:  # None: deleted since
                        children.append(child)
            out.extend(children)
            todo.extend(c.id for c in children)
        return out

    def cloud_time(self) -> datetime.datetime:
        """Now, by Keystone's clock (its answer's Date header): what the
        services' creation times are compared with, whatever the skew of
        this machine's clock."""
        response = self.retried(
            'reading the time of the cloud',
            lambda: keystone.version_answer(self.conn),
        )
        date = response.headers.get('Date')
        if date:
            return email.utils.parsedate_to_datetime(date)
        return datetime.datetime.now(datetime.UTC)

    def shown(self, project_id: str) -> dict[str, Any]:
        """The project as Keystone answers it, its extra properties (the
        drain's state) included: what ``openstack project show`` shows;
        {} when it is gone. One call, not retried: what a command shows
        once its run is over."""
        return keystone.project_body(self.conn, project_id) or {}

    def disable(self, targets: Iterable[ResourceRef]) -> None:
        """Leaves first: Keystone refuses to disable a project whose
        subtree is enabled."""
        for target in leaves_first(targets):
            self.retried(
                f'disabling project {target.name} ({target.id})',
                lambda t=target: keystone.disable_project(self.conn, t.id),
            )

    def delete(self, targets: Iterable[ResourceRef]) -> None:
        """Leaves first: Keystone refuses to delete a parent."""
        for target in leaves_first(targets):
            self.retried(
                f'deleting project {target.name} ({target.id})',
                lambda t=target: keystone.delete_project(self.conn, t.id),
            )


class Protected(CascadeError):
    """The project is protected: Keystone's ``immutable`` option."""


def is_protected(project: Any) -> bool:
    """Whether Keystone's ``immutable`` resource option is set (then
    Keystone itself refuses to update or delete the project); a project
    as the SDK has it, or as Keystone answers it (a dict)."""
    if isinstance(project, dict):
        options = project.get('options')
    else:
        options = getattr(project, 'options', None)
    return bool((options or {}).get('immutable'))


def protected_message(label: str, project_id: str) -> str:
    """The one line that refuses a protected project, and says how to
    unprotect it."""
    return (
        f'Project {label} is protected (marked immutable): unprotect it '
        f"with 'openstack project set --no-immutable {project_id}' first."
    )


def project_ref(project: Any) -> ResourceRef:
    return ResourceRef(
        kind=kinds_mod.PROJECT_KIND,
        id=project.id,
        name=project.name or '',
        project_id=project.id,
        attrs={
            k: v
            for k, v in {
                'parent_id': project.parent_id,
                'domain_id': project.domain_id,
            }.items()
            if v
        },
    )


def leaves_first(targets: Iterable[ResourceRef]) -> list[ResourceRef]:
    by_id = {t.id: t for t in targets}

    def depth(t: ResourceRef) -> int:
        d = 0
        while t.attrs.get('parent_id') in by_id:
            t = by_id[t.attrs['parent_id']]
            d += 1
        return d

    return sorted(by_id.values(), key=depth, reverse=True)
