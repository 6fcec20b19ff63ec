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

"""The drain without the cloud-admin role (``ScopedCascade``'s stage 1):
it cannot disable the project first, since Keystone refuses tokens for a
disabled project, the cascade's own included; it removes every other role
assignment on the project the caller may (recorded first, put back by the
restore) and freezes no quota.
"""

from __future__ import annotations

from typing import Any

from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError, status_code
from osc_cascade.workflows import assignments
from osc_cascade.workflows import drain as drain_mod

#: what a failed revoke leaves (``ScopedDrain._revoke_failed``)
REFUSED, GONE, STAYS = 'refused', 'gone', 'stays'


class ScopedDrain(drain_mod.Drain):
    """The drain without admin: the project's role assignments taken away
    (recorded first), no quota frozen, the project left enabled until it is
    deleted (``ScopedCascade.disable_last``)."""

    def unfrozen(self, service_types: Any) -> list[str]:
        return []  # no quota is frozen: STAYS_OPEN says so, once

    def drain(self, project_id: str) -> tuple[dict[str, Any], list[str]]:
        record = self.begin(project_id)
        record['scoped'] = True
        mine = self.conn.current_user_id
        removed = record.setdefault(assignments.ASSIGNMENTS, [])
        present = self._retried_api_call(
            f'listing the role assignments on project {project_id}',
            lambda: assignments.on_project(self.conn, project_id),
        )
        kept, unsure = [], []
        for assignment in present:
            if assignment.get('user_id') == mine:
                continue  # the cascade's own: taken back before the delete
            if assignment not in removed:
                removed.append(assignment)
                self._write(project_id, record)  # the intent first
            try:
                self._retried_api_call(
                    'removing the role assignment '
                    f'{assignments.label(assignment)} on project {project_id}',
                    lambda a=assignment: keystone.revoke(
                        self.conn, project_id, a
                    ),
                )
            except CascadeError as exc:
                failed = self._revoke_failed(project_id, assignment, exc)
                if failed == REFUSED:
                    removed.remove(assignment)
                    kept.append(f'{assignments.label(assignment)} ({exc})')
                elif failed == STAYS:
                    unsure.append(f'{assignments.label(assignment)} ({exc})')
                # GONE: its answer was lost; it is recorded, as removed
        notes = []
        if kept:
            notes.append(
                'role assignments the caller may not remove stay on the '
                'project: ' + '; '.join(kept)
            )
        if unsure:
            notes.append(
                'role assignments whose removal failed may stay on the '
                'project (kept in the drain record, which the restore puts '
                'back): ' + '; '.join(unsure)
            )
        others = self._retried_api_call(
            f'listing the users with a role on project {project_id}',
            lambda: assignments.effective_users(self.conn, project_id),
        ) - {mine}
        if others:
            notes.append(
                f'{len(others)} other user(s) keep a role on the project '
                'through its domain, a parent or an assignment that stays: '
                + ', '.join(sorted(others))
            )
        self.complete(project_id, record)
        return record, notes

    def _revoke_failed(
        self, project_id: str, assignment: dict[str, Any], exc: CascadeError
    ) -> str:
        """After a failed revoke, what the record does with the assignment:
        REFUSED (a 4xx but 429: nothing changed, it stays on the project
        and leaves the record), else it stays in the record: Keystone may
        have taken the revoke and lost its answer (a timeout, then 5xx),
        or take it later; putting back an assignment that is there is no
        change. Checked (one HEAD, only then) to say whether it is GONE
        or may STAY."""
        code = status_code(exc.__cause__)
        if code is not None and 400 <= code < 500 and code != 429:
            return REFUSED
        try:
            there = self._retried_api_call(
                'checking the role assignment '
                f'{assignments.label(assignment)} on project {project_id}',
                lambda: keystone.has_grant(self.conn, project_id, assignment),
            )
        except CascadeError:
            return STAYS
        return STAYS if there else GONE
