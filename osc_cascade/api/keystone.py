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

"""Keystone listings that say when they are incomplete, and the proof that
an owner is gone.

Keystone cuts a list at its ``list_limit`` (``[resource]`` for projects
and domains, ``[identity]`` for users, ``[DEFAULT]`` for every list) and
says so only with ``"truncated": true`` in the body, which openstacksdk
4.22 drops: its truncated list looks complete, and whatever it leaves out
looks absent. So the lists the tool relies on are read raw here
(``listing``): the items and whether Keystone truncated them. A caller
reads the pages where Keystone pages (``paged``) or narrows a truncated
query until the answer is complete, or refuses (``complete``).

Absence is never read from a list: an owner is gone only when Keystone
itself answers 404 to it (``owner_exists``).
"""

from __future__ import annotations

from collections.abc import Iterator
import dataclasses
from typing import Any
from urllib import parse

from openstack import exceptions as sdk_exc
from openstack.identity.v3 import project as sdk_project

from osc_cascade.api.http import request
from osc_cascade.engine.errors import CascadeError


@dataclasses.dataclass(frozen=True)
class Listing:
    items: list[dict[str, Any]]
    #: Keystone's list_limit cut the list: what it leaves out may exist
    truncated: bool


def listing(conn: Any, path: str, key: str, **params: Any) -> Listing:
    """One Keystone list, as it answered: its items under ``key``, and
    whether it says it was truncated."""
    body = request(conn.identity, 'GET', path, params=params or None).json()
    return Listing(list(body.get(key) or []), body.get('truncated') is True)


#: the page a Keystone that pages is asked for (its ``max_db_limit``, 1000
#: by default, caps it; its list_limit does not)
PAGE_SIZE = 1000


def paged(conn: Any, path: str, key: str, **params: Any) -> Listing:
    """A Keystone list read to its end: a Keystone that pages (``limit``
    and ``marker``: the minicloud's 30.0.0) links the next page of a
    truncated answer (``links.next``), asked until one is not truncated.
    An older Keystone links none, and the answer stays truncated."""
    query = {**params, 'limit': PAGE_SIZE}
    items: dict[str, dict[str, Any]] = {}
    while True:
        body = request(conn.identity, 'GET', path, params=query).json()
        page = list(body.get(key) or [])
        items.update((item['id'], item) for item in page)
        if body.get('truncated') is not True:
            return Listing(list(items.values()), False)
        links = body.get('links')
        link = (links.get('next') if isinstance(links, dict) else '') or ''
        marker = dict(parse.parse_qsl(parse.urlparse(link).query)).get(
            'marker'
        )
        if not page or not marker or marker == query.get('marker'):
            return Listing(list(items.values()), True)
        query = {**query, 'marker': marker}


def complete(what: str, found: Listing) -> list[dict[str, Any]]:
    """The items of a listing that Keystone did not truncate; a truncated
    one, that no narrower query can complete, refuses with one line."""
    if found.truncated:
        raise CascadeError(
            f"{what} was truncated by Keystone's list_limit "
            f'({len(found.items)} shown), so nothing was changed: the '
            "tool does not act on an incomplete list (raise Keystone's "
            'list_limit)'
        )
    return found.items


def projects(conn: Any, **filters: str) -> Listing:
    return listing(conn, '/projects', 'projects', **filters)


def all_projects(conn: Any, **filters: str) -> Listing:
    """The projects, page after page where Keystone pages (``paged``)."""
    return paged(conn, '/projects', 'projects', **filters)


def domains(conn: Any) -> Listing:
    return listing(conn, '/domains', 'domains')


def users(conn: Any, **filters: str) -> Listing:
    return listing(conn, '/users', 'users', **filters)


def role_assignments(conn: Any, **filters: Any) -> Listing:
    return listing(conn, '/role_assignments', 'role_assignments', **filters)


def application_credentials(conn: Any, user_id: str) -> Listing:
    return listing(
        conn,
        f'/users/{_quoted(user_id)}/application_credentials',
        'application_credentials',
    )


def as_project(item: dict[str, Any]) -> Any:
    """A project of a raw listing, as the SDK's resource."""
    return sdk_project.Project.existing(**item)


def get_project(conn: Any, project_id: str) -> Any:
    """One project, as the SDK's resource; None if Keystone answers 404."""
    try:
        body = request(
            conn.identity, 'GET', f'/projects/{_quoted(project_id)}'
        ).json()
    except sdk_exc.NotFoundException:
        return None
    return as_project(body['project'])


def project_body(conn: Any, project_id: str) -> dict[str, Any] | None:
    """One project as Keystone answers it, with its extra properties
    (which the SDK's resource drops); None if Keystone answers 404."""
    try:
        return request(
            conn.identity, 'GET', f'/projects/{_quoted(project_id)}'
        ).json()['project']
    except sdk_exc.NotFoundException:
        return None


def update_project(
    conn: Any, project_id: str, **fields: Any
) -> dict[str, Any]:
    """PATCH a project: its attributes, or extra properties of any name,
    which Keystone keeps and shows (``openstack project show``); a value
    of None clears one. Keystone's answer."""
    return request(
        conn.identity,
        'PATCH',
        f'/projects/{_quoted(project_id)}',
        json={'project': fields},
    ).json()['project']


def child_ids(conn: Any, project_id: str) -> list[str]:
    """The IDs of the project's children, from its ``subtree_as_ids``: not
    cut by list_limit, unlike a listing filtered by ``parent_id``."""
    body = request(
        conn.identity,
        'GET',
        f'/projects/{_quoted(project_id)}',
        params={'subtree_as_ids': ''},
    ).json()
    return sorted(body['project'].get('subtree') or {})


def owner_exists(conn: Any, owner_id: str) -> bool:
    """Whether Keystone has a project or a domain (resources can be owned
    by a domain) with this ID. False only when both GETs get Keystone's
    own 404; anything else is raised: a 403, a 5xx, or a 404 that is not
    Keystone's (a proxy's or a router's page says nothing of the owner)."""
    for path in _owner_paths(owner_id):
        try:
            request(conn.identity, 'GET', path)
        except sdk_exc.NotFoundException as exc:
            if not _keystones_404(exc):
                exc.details = (
                    f"GET {path} answered 404 without Keystone's error "
                    f'body: {exc.details or exc}'
                )
                raise
            continue
        return True
    return False


def _owner_paths(owner_id: str) -> Iterator[str]:
    quoted = _quoted(owner_id)
    yield f'/projects/{quoted}'
    yield f'/domains/{quoted}'


def _keystones_404(exc: sdk_exc.HttpException) -> bool:
    try:
        error = exc.response.json().get('error')
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and error.get('code') == 404


def _quoted(id_: str) -> str:
    # an ID with a slash or a question mark must not reach another route
    return parse.quote(id_, safe='')
