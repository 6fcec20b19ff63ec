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

"""The drain's record, kept on the project itself: what the drain changed,
written down *before* each change is made.

An extra property ``cascade_drain`` (a JSON string: when and by whom,
whether the project was enabled, per region and service the quota values
of its own before and the frozen ones, and the stage), with
``cascade_state`` beside it for the eye (``openstack project show``:
``draining``, ``drained``, ``deleting``, ``failed at ...``). A run killed at
any point leaves a record that a later run continues (the values before are
never read again from a frozen project) and that ``restore`` reverses.

``DrainRecord`` reads and writes it (every call retried, and one line
saying what failed); ``drained_projects`` lists the projects that have one
(what ``project sweep`` selects from).
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import datetime
import json
from typing import Any

from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.reconcile import parse_time
from osc_cascade.engine.retry import Clock, RetryPolicy, checked

#: the project's extra property that holds the drain record
RECORD = 'cascade_drain'
#: the project's extra property that shows the stage
STATE = 'cascade_state'
#: the record's format
VERSION = 1

#: the record's fields of when the drain completed (the cloud's time,
#: ISO 8601), and who ran it: the sweep's age counts from it
DRAINED_AT = 'drained_at'
DRAINED_BY = 'drained_by'

DRAINING = 'draining'
DRAINED = 'drained'
DELETING = 'deleting'
#: a restore gave back part of the record: what is left in it did not
#: come back (no drain is complete: the sweep leaves it alone)
RESTORING = 'restore incomplete'

#: quota entry states
INTENT = 'intent'
FROZEN = 'frozen'
FAILED = 'failed'

NEEDS = 'the drain needs the admin role'
#: a restore is refused where the drain was allowed only to a caller
#: with the drainer's role: say so, not that the drain needs it
RESTORE_NEEDS = (
    "the restore needs the role that drained the project (admin, or "
    "its domain's manager for a drain without admin)"
)


class DrainRecord:
    """The drain record of projects: read, begun, marked, completed;
    ``now`` gives the record's time stamps (the cloud's)."""

    def __init__(
        self,
        conn: Any,
        *,
        retry: RetryPolicy,
        clock: Clock,
        now: Callable[[], str] | None = None,
    ):
        self.conn = conn
        self.retry = retry
        self.clock = clock
        self.now = now or _utc_now
        #: project ID -> a check of the project as ``begin`` reads it,
        #: before any change (the sweep's: still as it was listed); it
        #: raises to refuse the drain
        self.expected: dict[str, Callable[[dict[str, Any] | None], None]] = {}

    def _retried_api_call(
        self, what: str, call: Callable[[], Any], needs: str = NEEDS
    ) -> Any:
        """``call()`` retried; a failure that stays is one line saying
        ``what`` failed (and what it ``needs``)."""
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=needs
        )

    def _restore_call(self, what: str, call: Callable[[], Any]) -> Any:
        """``_retried_api_call`` for the way back: a refusal names what
        the restore needs."""
        return self._retried_api_call(what, call, needs=RESTORE_NEEDS)

    def record_of(self, project_id: str) -> dict[str, Any] | None:
        """The drain record on the project, or None (no drain, or no
        project)."""
        return self.record_in(project_id, self._project(project_id))

    def shown(self, project_id: str) -> dict[str, Any] | None:
        """The project as Keystone answers it, its drain record in it
        (``record_in``); None: gone."""
        return self._project(project_id)

    def _project(self, project_id: str) -> dict[str, Any] | None:
        return self._retried_api_call(
            f'reading project {project_id}',
            lambda: keystone.project_body(self.conn, project_id),
        )

    @staticmethod
    def record_in(
        project_id: str, body: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        text = (body or {}).get(RECORD)
        if not text:
            return None
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise CascadeError(
                f'The drain record of project {project_id} ({RECORD}) is '
                f'not JSON: {exc}. Fix or clear it by hand.'
            ) from exc
        return record if isinstance(record, dict) else None

    def _write(
        self, project_id: str, record: dict[str, Any] | None, **fields: Any
    ) -> None:
        state = record.get('stage') if record else None
        self._retried_api_call(
            f'writing the drain record of project {project_id}',
            lambda: keystone.update_project(
                self.conn,
                project_id,
                **{
                    RECORD: json.dumps(record, sort_keys=True)
                    if record
                    else None,
                    STATE: state,
                    **fields,
                },
            ),
        )

    def mark(
        self,
        project_id: str,
        stage: str,
        record: dict[str, Any] | None = None,
    ) -> None:
        """Set the record's stage (``deleting``, ``failed at ...``); the
        record as last written, or read from the project."""
        record = record or self.record_of(project_id)
        if record is None:
            return
        record['stage'] = stage
        self._write(project_id, record)

    def begin(self, project_id: str) -> dict[str, Any]:
        """The project's drain record at stage draining: the one an earlier
        run left, continued, or a new one, written before any change
        (after the check ``expected`` holds for the project, if any)."""
        body = self._project(project_id)
        if project_id in self.expected:
            self.expected[project_id](body)
        record = self.record_in(project_id, body)
        if record is not None:
            if record.get('stage') == RESTORING:
                # what a restore left: a new drain begins, its age and
                # what it finds enabled too
                record['started_at'] = self.now()
                record['started_by'] = self._caller()
                if body is not None:
                    record['enabled'] = bool(body.get('enabled', True))
            record['stage'] = DRAINING
            record.setdefault('quotas', {})
            return record
        if body is None:
            raise CascadeError(f'Project {project_id} does not exist.')
        record = {
            'version': VERSION,
            'started_at': self.now(),
            'started_by': self._caller(),
            'enabled': bool(body.get('enabled', True)),
            'quotas': {},
            'stage': DRAINING,
        }
        self._write(project_id, record)
        return record

    def complete(
        self, project_id: str, record: dict[str, Any], **fields: Any
    ) -> None:
        """The record at stage drained, with when and by whom the first
        drain completed (what the sweep's age counts from)."""
        record['stage'] = DRAINED
        record.setdefault(DRAINED_AT, self.now())
        record.setdefault(DRAINED_BY, self._caller())
        self._write(project_id, record, **fields)

    def _caller(self) -> dict[str, Any]:
        return {
            'user_id': self.conn.current_user_id,
            'project_id': self.conn.current_project_id,
        }


@dataclasses.dataclass(frozen=True)
class Drained:
    """A drained project as Keystone lists it, with its record."""

    project: dict[str, Any]
    record: dict[str, Any]

    @property
    def id(self) -> str:
        return self.project['id']

    @property
    def label(self) -> str:
        return f"{self.project.get('name') or ''} ({self.id})"

    @property
    def drained_at(self) -> datetime.datetime | None:
        """When the drain completed (when it began, for a drain that never
        completed or a record older than ``drained_at``)."""
        return parse_time(
            str(
                self.record.get(DRAINED_AT)
                or self.record.get('started_at')
                or ''
            )
        )

    @property
    def drained_by(self) -> str:
        by = self.record.get(DRAINED_BY) or self.record.get('started_by')
        return str((by or {}).get('user_id') or '')

    @property
    def stage(self) -> str:
        return str(self.record.get('stage') or self.project.get(STATE) or '')


def drained_projects(conn: Any) -> tuple[list[Drained], list[str]]:
    """Every disabled project that has a drain record (Keystone's project
    list shows extra properties), oldest drain first; notes on records that
    are not JSON. Only the disabled projects are listed: the drain disables
    a project with its first quota change, so a project it never disabled
    was never drained (it can still create: drain it again). Keystone's
    list_limit cuts the list (and says ``truncated`` whenever a page is
    full), so it is read page by page where Keystone pages
    (``keystone.paged``); an older Keystone's cut list is listed again per
    domain, and one still cut refuses (``keystone.complete``). Keystone's
    tag filter would not help: it is applied after the cut."""
    found = keystone.all_projects(conn, enabled='false')
    if found.truncated:
        items = []
        for domain in keystone.complete(
            'The list of domains', keystone.paged(conn, '/domains', 'domains')
        ):
            items.extend(
                keystone.complete(
                    f"The list of the disabled projects of domain "
                    f"{domain['id']}",
                    keystone.all_projects(
                        conn, domain_id=domain['id'], enabled='false'
                    ),
                )
            )
    else:
        items = found.items
    out, notes = [], []
    for item in items:
        text = item.get(RECORD)
        if not text:
            continue
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            notes.append(
                f"project {item.get('name')} ({item['id']}): its {RECORD} "
                'is not a JSON object: left alone'
            )
            continue
        out.append(Drained(item, record))
    far = datetime.datetime.max.replace(tzinfo=datetime.UTC)
    out.sort(key=lambda d: (d.drained_at or far, d.id))
    return out, notes


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')
