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

"""Role assignments on a project, in the drain record: the drain without
cloud admin (``workflows.scoped``) and the restore of any drain.

Without admin the drain cannot disable the project first (Keystone refuses
tokens for a disabled project, the cascade's own included), so it takes
away the roles instead: every assignment on the project itself (users' and
groups', inherited to its subtree or not) but the caller's is written into
the drain record (``assignments``), then removed. A user with no role left
on the project gets no new token for it, and its application credentials,
which act with their user's current roles, stop working too. The restore
(``Drain.restore``) puts them back. Keystone's calls (the listing, the
grants) are ``api.keystone``'s.

A domain manager who had no role on the project gives itself one for the
run (``temporary_role``, recorded before it is granted) and takes it back
at the end, also after a failure; a run killed before that leaves it in
the record, for the next run or the restore to take back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError

#: the drain record's list of the assignments removed, to put back
ASSIGNMENTS = 'assignments'
#: the drain record's role given to the caller for the run, to take back
TEMPORARY = 'temporary_role'


def label(assignment: dict[str, Any]) -> str:
    who = (
        f"user {assignment['user_id']}"
        if assignment.get('user_id')
        else f"group {assignment['group_id']}"
    )
    role = assignment.get('role') or assignment['role_id']
    inherited = (
        ', inherited by the subtree' if assignment.get('inherited') else ''
    )
    return f'{who}: {role}{inherited}'


def on_project(conn: Any, project_id: str) -> list[dict[str, Any]]:
    """The assignments on the project itself (not those it inherits from
    its domain or parents), as the record keeps them."""
    out = []
    for item in keystone.project_role_assignments(
        conn, project_id, include_names='true'
    ):
        scope = item.get('scope') or {}
        assignment = {
            'role_id': item['role']['id'],
            'role': item['role'].get('name') or '',
            'inherited': bool(scope.get('OS-INHERIT:inherited_to')),
        }
        if item.get('user'):
            assignment['user_id'] = item['user']['id']
        elif item.get('group'):
            assignment['group_id'] = item['group']['id']
        else:
            continue
        out.append(assignment)
    return sorted(out, key=label)


def effective_users(conn: Any, project_id: str) -> set[str]:
    """The users with any role on the project, however they have it."""
    return {
        item['user']['id']
        for item in keystone.project_role_assignments(
            conn, project_id, effective='true'
        )
        if item.get('user')
    }


def restore(
    conn: Any,
    project_id: str,
    record: dict[str, Any],
    call: Callable[[str, Callable[[], Any]], Any],
) -> list[str]:
    """Put back what the record says was removed, and take back the role
    given for the run; ``call(what, fn)`` runs each call (retried, one
    line on failure). Each comes out of the record only once it is done
    and read back so (Keystone's check of the grant); one that is not
    stays in it, for a second restore, and is a note."""
    notes, left = [], []
    for assignment in record.get(ASSIGNMENTS) or []:
        what = f'role assignment {label(assignment)}'
        try:
            call(
                f'putting back the {what}',
                lambda a=assignment: keystone.grant(conn, project_id, a),
            )
            back = call(
                f'reading back the {what}',
                lambda a=assignment: keystone.has_grant(conn, project_id, a),
            )
        except CascadeError as exc:  # one line each, the rest goes back
            back = False
            notes.append(str(exc))  # it names the assignment
        else:
            if not back:
                notes.append(
                    f'{what} not put back: Keystone answered the grant '
                    'but does not have it'
                )
        if not back:
            left.append(assignment)
    if ASSIGNMENTS in record:
        record[ASSIGNMENTS] = left
    temporary = record.get(TEMPORARY)
    if temporary:
        what = f'temporary role {label(temporary)}'
        try:
            call(
                f'taking back the {what}',
                lambda: keystone.revoke(conn, project_id, temporary),
            )
            still = call(
                f'reading back the {what}',
                lambda: keystone.has_grant(conn, project_id, temporary),
            )
        except CascadeError as exc:
            still = True
            notes.append(str(exc))
        else:
            if still:
                notes.append(
                    f'{what} not taken back: Keystone answered the revoke '
                    'but still has it'
                )
        if not still:
            del record[TEMPORARY]
    return notes
