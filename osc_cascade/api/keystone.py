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

"""Every call the tool makes to Keystone: its listings, which say when
they are incomplete, projects read and changed, role grants on a project,
the proof that an owner is gone, and the cloud's time.

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

What the SDK's identity proxy does well (a lookup by name or ID, a
project disabled or deleted) goes through it, but from here too, so that
no workflow calls Keystone but through this module.
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
    # raw: openstacksdk's Resource.list drops the body's "truncated"
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
        # raw: the SDK drops "truncated", and follows no links.next of
        # Keystone's (Resource._get_next_link wants a rel="next" item)
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


def project_role_assignments(
    conn: Any, project_id: str, **flags: str
) -> list[dict[str, Any]]:
    """Keystone's role assignments on the project (its list_limit does
    not cut them: it applies to projects and domains), through the SDK's
    proxy; ``flags`` such as ``effective`` or ``include_names``. Each as
    Keystone answers it: ``role``, ``scope``, ``user`` or ``group``."""
    return [
        {
            key: item[key]
            for key in ('role', 'scope', 'user', 'group')
            if item[key] is not None
        }
        for item in conn.identity.role_assignments(
            scope_project_id=project_id, **flags
        )
    ]


def grant_path(project_id: str, assignment: dict[str, Any]) -> str:
    """The grant's URL path: a user's or a group's role on the project,
    or inherited by its subtree (OS-INHERIT)."""
    if assignment.get('user_id'):
        actor = f"users/{_quoted(assignment['user_id'])}"
    else:
        actor = f"groups/{_quoted(assignment['group_id'])}"
    role = _quoted(assignment['role_id'])
    path = f'/projects/{_quoted(project_id)}/{actor}/roles/{role}'
    if assignment.get('inherited'):
        return f'/OS-INHERIT{path}/inherited_to_projects'
    return path


# The grants are raw: the SDK's Project.assign_role_to_user and its
# siblings (validate_*, unassign_*, for groups too) return False on any
# answer but 204 and its proxy drops that, so a 403 or a 5xx would pass as
# done (openstacksdk 4.16 to 4.22).


def has_grant(conn: Any, project_id: str, assignment: dict[str, Any]) -> bool:
    """Whether the grant exists (Keystone's check: HEAD)."""
    try:
        request(conn.identity, 'HEAD', grant_path(project_id, assignment))
    except sdk_exc.NotFoundException:
        return False
    return True


def grant(conn: Any, project_id: str, assignment: dict[str, Any]) -> None:
    request(conn.identity, 'PUT', grant_path(project_id, assignment))


def revoke(conn: Any, project_id: str, assignment: dict[str, Any]) -> None:
    """Revoke; one that is gone already is no error (the project, or an
    earlier run, took it)."""
    try:
        request(conn.identity, 'DELETE', grant_path(project_id, assignment))
    except sdk_exc.NotFoundException:
        pass


def find_domain(conn: Any, name_or_id: str) -> Any:
    """A domain by name or ID, as the SDK finds it; None if none."""
    return conn.identity.find_domain(name_or_id)


def find_role(conn: Any, name_or_id: str) -> Any:
    """A role by name or ID, as the SDK finds it; None if none."""
    return conn.identity.find_role(name_or_id)


def project_or_none(conn: Any, project_id: str) -> Any:
    """One project through the SDK's proxy; None if Keystone answers
    404."""
    try:
        return conn.identity.get_project(project_id)
    except sdk_exc.NotFoundException:
        return None


def projects_named(conn: Any, **query: Any) -> list[Any]:
    """The projects the SDK's proxy lists for the query (``name``,
    ``domain_id``)."""
    return list(conn.identity.projects(**query))


def user_projects(conn: Any, user_id: str) -> Any:
    """The projects the user has a role on (Keystone lists a user its
    own)."""
    return conn.identity.user_projects(user_id)


def disable_project(conn: Any, project_id: str) -> Any:
    return conn.identity.update_project(project_id, is_enabled=False)


def delete_project(conn: Any, project_id: str) -> Any:
    """Delete; one that is gone already is no error."""
    return conn.identity.delete_project(project_id, ignore_missing=True)


def version_answer(conn: Any) -> Any:
    """Keystone's answer to ``GET /`` (its versions): what its ``Date``
    header says is the cloud's time."""
    # raw: the SDK has no call for the version document with its headers
    return request(conn.identity, 'GET', '/')


def as_project(item: dict[str, Any]) -> Any:
    """A project of a raw listing, as the SDK's resource."""
    return sdk_project.Project.existing(**item)


def project_body(conn: Any, project_id: str) -> dict[str, Any] | None:
    """One project as Keystone answers it, with its extra properties;
    None if Keystone answers 404."""
    # raw (here and in update_project): Keystone's own field names, as the
    # record and `project show` keep them; the SDK's Project keeps extras
    # but renames its fields (is_enabled) and adds its own (location)
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
    # raw: the SDK's get_project sends no query (subtree_as_ids)
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
            # raw: the ID comes from another service's resource and is
            # quoted (_quoted); the SDK puts an ID in the path as it is
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
