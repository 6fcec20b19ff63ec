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

"""Heat calls that openstacksdk lacks or gets wrong (openstacksdk 4.22):

* ``resources(stack, nested_depth=N)`` silently drops ``nested_depth``, so
  nested stacks' resources would be missed;
* ``abandon_stack()`` never checks the status code and returns Heat's 400
  body as if it were the stack's data.
"""

from __future__ import annotations

import re
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request

#: Heat clamps the depth to its max_nested_stack_depth (5 by default)
ALL_NESTED = 100

_PROJECT_IN_LINK = re.compile(r'/v1/([^/]+)/stacks/')


def stack_path(name: str, id_: str) -> str:
    return f'/stacks/{name}/{id_}'


def call(conn: Any, method: str, path: str, **kwargs: Any) -> Any:
    """One request to Heat through the SDK's orchestration adapter."""
    # raw: the SDK's Stack has no "project" (the owner an admin's list
    # shows), its resources() takes no nested_depth, and its abandon and
    # export return Heat's error as data (no raise_from_response)
    return request(conn.orchestration, method, path, **kwargs)


def stacks(conn: Any, **filters: str | None) -> list[dict[str, Any]]:
    """Top-level stacks with Heat's filters (``name``, ``tenant``...).

    Not ``global_tenant=True``: its policy, stacks:global_index, denies
    everybody by default. The plain list shows a cloud admin (Heat's
    context_is_admin: role admin in the admin project) every project's
    stacks, each with its ``project``.
    """
    return call(conn, 'GET', '/stacks', params=filters).json()['stacks']


def find_stack(conn: Any, name_or_id: str) -> dict[str, Any] | None:
    """A stack by id (any project) or by name (the caller's project only,
    as Heat looks names up); None if Heat does not know it."""
    try:
        stack = call(conn, 'GET', f'/stacks/{name_or_id}').json()['stack']
    except sdk_exc.NotFoundException:
        return None
    return None if stack['stack_status'] == 'DELETE_COMPLETE' else stack


def get_stack(conn: Any, name: str, id_: str) -> dict[str, Any] | None:
    return find_stack(conn, f'{name}/{id_}')


def project_of(stack: dict[str, Any]) -> str:
    """The owner: listed by an admin a stack says it, shown it does not,
    but its link is in its own project's URL space."""
    if stack.get('project'):
        return stack['project']
    for link in stack.get('links', []):
        m = _PROJECT_IN_LINK.search(link.get('href', ''))
        if m:
            return m.group(1)
    return ''


def resources(conn: Any, name: str, id_: str) -> list[dict[str, Any]]:
    """The resources Heat holds for the stack and its nested stacks. Unlike
    export and abandon, the list still shows what a stack being deleted
    holds: it reads the resources' rows, not the current template."""
    return call(
        conn,
        'GET',
        stack_path(name, id_) + '/resources',
        params={'nested_depth': ALL_NESTED},
    ).json()['resources']


def export_stack(conn: Any, name: str, id_: str) -> dict[str, Any]:
    """What an abandon would return, without changing anything."""
    return call(conn, 'GET', stack_path(name, id_) + '/export').json()


def abandon_stack(conn: Any, name: str, id_: str) -> dict[str, Any]:
    """Heat forgets the stack and keeps what it made; the stack's data
    (its resources' ids...) is all that is left of it in Heat."""
    return call(conn, 'DELETE', stack_path(name, id_) + '/abandon').json()


def error_of(exc: sdk_exc.HttpException) -> dict[str, Any]:
    """Heat's error of a failed call: its ``type`` (``NotSupported``...)
    and ``message``."""
    try:
        return exc.response.json().get('error') or {}
    except ValueError:
        return {}
