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

Every call is retried with the workflow's clock and policy while it may
pass, and a failure that stays is one line (``engine.retry.checked``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import datetime
import email.utils
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.api.http import request
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

    def _call(self, what: str, call: Callable[[], Any]) -> Any:
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=NEEDS
        )

    def resolve(self, name_or_id: str, domain: str | None = None) -> Any:
        """A project by ID or by name (in ``domain`` if given); an
        ambiguous name lists the candidates."""
        identity = self.conn.identity
        domain_id = None
        if domain:
            found = self._call(
                f'looking up domain {domain!r}',
                lambda: identity.find_domain(domain),
            )
            if found is None:
                raise CascadeError(
                    f'No domain with a name or ID of {domain!r} exists.'
                )
            domain_id = found.id
        project = self._call(
            f'looking up project {name_or_id!r}',
            lambda: _get_or_none(identity.get_project, name_or_id),
        )
        if project is not None and (
            domain_id is None or project.domain_id == domain_id
        ):
            return project
        query = {'name': name_or_id}
        if domain_id:
            query['domain_id'] = domain_id
        matches = self._call(
            f'looking up project {name_or_id!r}',
            lambda: list(identity.projects(**query)),
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
            listed = self._call(
                what,
                lambda p=parent: keystone.projects(self.conn, parent_id=p),
            )
            children = [keystone.as_project(c) for c in listed.items]
            if listed.truncated:
                shown = {c.id for c in children}
                ids = self._call(
                    what, lambda p=parent: keystone.child_ids(self.conn, p)
                )
                for child_id in (i for i in ids if i not in shown):
                    child = self._call(
                        f'reading child project {child_id}',
                        lambda c=child_id: keystone.get_project(self.conn, c),
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
        response = self._call(
            'reading the time of the cloud',
            lambda: request(self.conn.identity, 'GET', '/'),
        )
        date = response.headers.get('Date')
        if date:
            return email.utils.parsedate_to_datetime(date)
        return datetime.datetime.now(datetime.UTC)

    def disable(self, targets: Iterable[ResourceRef]) -> None:
        """Leaves first: Keystone refuses to disable a project whose
        subtree is enabled."""
        for target in leaves_first(targets):
            self._call(
                f'disabling project {target.name} ({target.id})',
                lambda t=target: self.conn.identity.update_project(
                    t.id, is_enabled=False
                ),
            )

    def delete(self, targets: Iterable[ResourceRef]) -> None:
        """Leaves first: Keystone refuses to delete a parent."""
        for target in leaves_first(targets):
            self._call(
                f'deleting project {target.name} ({target.id})',
                lambda t=target: self.conn.identity.delete_project(
                    t.id, ignore_missing=True
                ),
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


def _get_or_none(getter: Callable[[str], Any], id_: str) -> Any:
    try:
        return getter(id_)
    except sdk_exc.NotFoundException:
        return None


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
