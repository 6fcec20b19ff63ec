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

"""The drain: a recorded, reversible set of changes that stops a project
from creating anything, whatever token a caller holds.

1. the project is disabled (Keystone then refuses new tokens for it from
   every credential);
2. its quotas are frozen in every region that offers each service with
   per-project quotas (``kinds.quota.QUOTA_APIS`` says how each service
   takes it), so that a token a service validated before the drain (and
   keeps in its cache for keystonemiddleware's ``token_cache_time``, 300 s
   by default) can create nothing either. Every value is read back; one
   that did not take is a note, and the cascade's verification rounds (and
   ``--settle``) still catch what is created.

Each change is written down on the project itself *before* it is made: an
extra property ``cascade_drain`` (a JSON string: when and by whom, whether
the project was enabled, per region and service the quota values of its
own before and the frozen ones, and the stage), with ``cascade_state``
beside it for the eye (``openstack project show``: ``draining``,
``drained``, ``deleting``, ``failed at ...``). A run killed at any point
leaves a record that a later run continues (the values before are never
read again from a frozen project) and that ``restore`` reverses.

Cinder refuses a limit below usage, so its freeze is at usage, and
``Lowering`` brings it down as the cascade's deletes progress, to 0 once
the project's volumes are gone.

What a freeze cannot cover (the plan's note, ``Drain.unfrozen``):

* Swift's account quota middleware checks object PUTs only (and not those
  of a reseller admin): containers, and objects under a reseller's token,
  are not stopped;
* Glance has no quota set of its own: it limits a project only through
  Keystone unified limits, which the drain freezes (a project limit of 0
  for every registered limit) only where Keystone has them registered;
* Designate's and Trove's quotas are not frozen, nor anything of a
  service without per-project quotas (Heat, Aodh, Mistral, ...);
* Cinder's room between a delete and the lowering that follows it.

While the cascade runs, its verification rounds delete what is created
there all the same; after the project is gone, ``--settle`` does.

After the project is gone (and after ``--settle``), ``release_quotas``
resets the recorded quotas (the quota APIs' DELETE): the last thing the
cascade does. If it never gets there, the quota rows of the deleted project
are orphans that ``openstack orphan list`` finds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import dataclasses
import datetime
import json
import threading
from typing import Any

from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import DONE, Event
from osc_cascade.engine.reconcile import parse_time
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.quota import QUOTA_APIS
from osc_cascade.kinds.quota.base import QuotaApi
from osc_cascade.workflows import assignments

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

#: quota entry states
INTENT = 'intent'
FROZEN = 'frozen'
FAILED = 'failed'

NEEDS = 'the drain needs the admin role'

#: why the drain freezes no quota of a service, where it is more than
#: "no per-project quota" (what the plan's note says)
WHY_UNFROZEN = {
    'object-store': "Swift's account quota checks object PUTs only, not "
    "containers nor a reseller admin's PUTs",
    'image': 'Glance limits a project only through Keystone unified limits, '
    'frozen only where Keystone has them registered',
    'dns': "Designate's quotas are not frozen",
    'database': "Trove's quotas are not frozen",
}


@dataclasses.dataclass
class _Freeze:
    """One service's freeze in one region, as the drain's phases find and
    make it and the release resets it (each in a thread of its own)."""

    api: QuotaApi
    region: str
    conn: Any
    #: read: whether there is a freeze to record and make
    due: bool = False
    before: dict[str, Any] = dataclasses.field(default_factory=dict)
    frozen: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: made: FROZEN or FAILED, and the values that did not take
    state: str = INTENT
    missed: dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def service_type(self) -> str:
        return self.api.service_type

    @property
    def where(self) -> str:
        return _where(self.service_type, self.region)


class Drain:
    """The drain of projects, its record, its restore and the release of
    its quotas; ``now`` gives the record's time stamps (the cloud's)."""

    def __init__(
        self,
        conn: Any,
        regions: Regions,
        *,
        retry: RetryPolicy,
        clock: Clock,
        now: Callable[[], str] | None = None,
        apis: Sequence[QuotaApi] = QUOTA_APIS,
    ):
        self.conn = conn
        self.regions = regions
        self.retry = retry
        self.clock = clock
        self.now = now or _utc_now
        self.apis = apis

    def _call(self, what: str, call: Callable[[], Any]) -> Any:
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=NEEDS
        )

    # -- the record --------------------------------------------------------

    def record_of(self, project_id: str) -> dict[str, Any] | None:
        """The drain record on the project, or None (no drain, or no
        project)."""
        return self._record_in(project_id, self._project(project_id))

    def _project(self, project_id: str) -> dict[str, Any] | None:
        return self._call(
            f'reading project {project_id}',
            lambda: keystone.project_body(self.conn, project_id),
        )

    @staticmethod
    def _record_in(
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
        self._call(
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

    # -- the drain ---------------------------------------------------------

    def drain(self, project_id: str) -> tuple[dict[str, Any], list[str]]:
        """Disable the project and freeze its quotas, each change recorded
        before it is made; a record left by an earlier run is continued.
        The record, and a note for each value that did not take.

        The services answer on their own, so each phase asks all of them
        at once: their quotas are read, the intents of every freeze (and
        the disable) written in one record, then the freezes made and read
        back; a freeze is never made before the record that has its intent
        is written."""
        record = self.begin(project_id)
        freezes = [
            _Freeze(api, region, self.regions.connection(region))
            for api in self.apis
            for region in self.regions.of_service(
                api.service_type, self.regions.catalog
            )
        ]
        fan_out(lambda f: self._read(project_id, record, f), freezes)
        due = [f for f in freezes if f.due]
        for f in due:
            record['quotas'].setdefault(f.region, {})[f.service_type] = {
                'before': f.before,
                'frozen': f.frozen,
                'state': INTENT,
            }
        if due:  # the intents, and the disable with them
            self._write(project_id, record, enabled=False)
        fan_out(lambda f: self._set(project_id, f), due)
        for f in due:
            entry = record['quotas'][f.region][f.service_type]
            entry['state'] = f.state
            if f.missed:
                entry['missed'] = f.missed
        self.complete(project_id, record, enabled=False)
        after = self._project(project_id)
        if after is None or after.get('enabled'):
            raise CascadeError(
                f'Project {project_id} is still enabled after the drain '
                'disabled it; nothing was deleted.'
            )
        return record, [note for f in freezes for note in f.notes]

    def begin(self, project_id: str) -> dict[str, Any]:
        """The project's drain record at stage draining: the one an earlier
        run left, continued, or a new one, written before any change."""
        body = self._project(project_id)
        record = self._record_in(project_id, body)
        if record is not None:
            record['stage'] = DRAINING
            record.setdefault('quotas', {})
            return record
        if body is None:
            raise CascadeError(f'Project {project_id} does not exist.')
        record = {
            'version': VERSION,
            'started_at': self.now(),
            'started_by': {
                'user_id': self.conn.current_user_id,
                'project_id': self.conn.current_project_id,
            },
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
        record.setdefault(
            DRAINED_BY,
            {
                'user_id': self.conn.current_user_id,
                'project_id': self.conn.current_project_id,
            },
        )
        self._write(project_id, record, **fields)

    def _read(
        self, project_id: str, record: dict[str, Any], freeze: _Freeze
    ) -> None:
        """What one service's freeze in one region is to be: the project's
        own values before (an earlier run's record has them: the values
        now are frozen ones) and the frozen ones. The record is not
        changed: it is written once every service is read."""
        entry = (
            record['quotas'].get(freeze.region, {}).get(freeze.service_type)
        )
        try:
            before = (
                entry['before']
                if entry
                else self._call(
                    f'reading the quotas of {freeze.where}',
                    lambda: freeze.api.own(freeze.conn, project_id),
                )
            )
            frozen = self._call(
                f'reading the quotas of {freeze.where}',
                lambda: freeze.api.frozen(freeze.conn, project_id),
            )
        except CascadeError as exc:
            freeze.notes.append(f'quotas of {freeze.where} not frozen: {exc}')
            return
        # nothing to freeze: no registered unified limits
        freeze.due = bool(frozen or entry)
        freeze.before, freeze.frozen = before, frozen

    def _set(self, project_id: str, freeze: _Freeze) -> None:
        """Make one freeze whose intent is recorded, and read it back."""
        try:
            self._call(
                f'freezing the quotas of {freeze.where}',
                lambda: freeze.api.set(freeze.conn, project_id, freeze.frozen),
            )
            now = self._call(
                f'reading back the quotas of {freeze.where}',
                lambda: freeze.api.current(freeze.conn, project_id),
            )
        except CascadeError as exc:
            freeze.state = FAILED
            freeze.notes.append(f'quotas of {freeze.where} not frozen: {exc}')
            return
        freeze.state = FROZEN
        freeze.missed = {
            k: now.get(k)
            for k, v in sorted(freeze.frozen.items())
            if now.get(k) != v
        }
        if freeze.missed:
            freeze.notes.append(
                f'quotas of {freeze.where} did not take: '
                + ', '.join(f'{k} is {v}' for k, v in freeze.missed.items())
                + ' (the verification rounds catch what is created)'
            )

    def lower(
        self,
        project_id: str,
        region: str,
        api: QuotaApi,
        frozen: dict[str, Any],
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A freeze at usage (``api.lowered_by``) lowered to the usage now,
        never raised: the limits now in force, and those the read-back
        found otherwise (``missed``)."""
        conn = self.regions.connection(region)
        where = _where(api.service_type, region)
        usage = self._call(
            f'reading the usage of {where}',
            lambda: api.frozen(conn, project_id),
        )
        lowered = {k: min(v, usage.get(k, v)) for k, v in frozen.items()}
        down = {k: v for k, v in lowered.items() if v < frozen[k]}
        if not down:
            return frozen, {}
        self._call(
            f'lowering the quotas of {where}',
            lambda: api.set(conn, project_id, down),
        )
        now = self._call(
            f'reading back the quotas of {where}',
            lambda: api.current(conn, project_id),
        )
        return lowered, {
            k: now.get(k) for k, v in sorted(down.items()) if now.get(k) != v
        }

    def unfrozen(self, service_types: Iterable[str]) -> list[str]:
        """The plan's note of what the freeze cannot cover: the services
        of the cascade's kinds in the catalog whose quotas the drain does
        not freeze (Keystone's are the disable's), and how the run covers
        them instead."""
        frozen = {api.service_type for api in self.apis} | {'identity'}
        gaps = sorted(
            s
            for s in set(service_types) - frozen
            if self.regions.of_service(s, self.regions.catalog)
        )
        if not gaps:
            return []
        return [
            'the drain freezes no quota of '
            + ', '.join(
                f'{s} ({WHY_UNFROZEN[s]})' if s in WHY_UNFROZEN else s
                for s in gaps
            )
            + ': what a token that a service validated before the drain '
            'creates there is deleted by the verification rounds while the '
            'cascade runs, and once the project is gone only by --settle'
        ]

    # -- the way back ------------------------------------------------------

    def restore(self, project_id: str) -> list[str]:
        """Reverse exactly what the record says: the quotas back to the
        project's own values before the drain, the project enabled again
        if it was; then the record is cleared. A note for each value that
        did not come back."""
        record = self.record_of(project_id)
        if record is None:
            raise CascadeError(
                f'Project {project_id} has no drain record ({RECORD}): '
                'nothing to restore.'
            )
        notes = []
        for region, entries in sorted(record.get('quotas', {}).items()):
            conn = self.regions.connection(region)
            for api in self.apis:
                entry = entries.get(api.service_type)
                if entry is None:
                    continue
                where = _where(api.service_type, region)
                before = entry['before']
                self._call(
                    f'restoring the quotas of {where}',
                    lambda a=api, c=conn, b=before: a.restore(
                        c, project_id, b
                    ),
                )
                now = self._call(
                    f'reading back the quotas of {where}',
                    lambda a=api, c=conn: a.own(c, project_id),
                )
                if now != before:
                    notes.append(
                        f'quotas of {where} are {now} after the restore, '
                        f'not {before}'
                    )
        # the role assignments the drain without admin took away
        notes.extend(
            assignments.restore(self.conn, project_id, record, self._call)
        )
        self._write(project_id, None, enabled=record.get('enabled', True))
        return notes

    def release_quotas(
        self, project_id: str, record: dict[str, Any]
    ) -> list[str]:
        """Reset (the quota APIs' DELETE) every quota the record froze, all
        at once: after the project is gone, so the record is the copy read
        before. A failure is a note: the rows are orphans ``orphan list``
        finds."""
        resets = [
            _Freeze(api, region, self.regions.connection(region))
            for region, entries in sorted(record.get('quotas', {}).items())
            for api in self.apis
            if api.service_type in entries
        ]

        def reset(freeze: _Freeze) -> str:
            try:
                self._call(
                    f'resetting the quotas of {freeze.where} of deleted '
                    f'project {project_id}',
                    lambda: freeze.api.reset(freeze.conn, project_id),
                )
            except CascadeError as exc:
                return (
                    f'{exc} (its quota rows are orphans: '
                    '`openstack orphan list` finds them)'
                )
            return ''

        return [note for note in fan_out(reset, resets) if note]


class Lowering:
    """Cinder's freeze follows the deletes down. Cinder refuses a limit
    below usage, so the drain froze it at usage, and each volume, snapshot
    or backup deleted makes room that a token cached before the drain
    could take. Fed the executor's events (``notice``), it lowers the
    limits of a project and region to the usage after each such delete
    (``Drain.lower``: read, never raised, read back), so that they are 0
    once the project holds nothing there.

    The lowerings are coalesced, not one per delete: a lowering is three
    calls (the usage, the PUT, the read-back), more than a delete makes
    (its DELETE and a poll or two), so one per delete would double
    Cinder's calls. One lowering runs at a time, in a thread of its own,
    and covers every delete done before it began: the calls follow the
    time the deletes take, not their number, and the room a delete makes
    stays open for one lowering (a fraction of a second), not for the
    run. ``close`` lowers once more, after the last delete, merges what
    was lowered into the records, and says what stays above 0: what the
    freeze did not cover there, which the verification rounds (and
    ``--settle``) catch."""

    def __init__(
        self,
        drain: Drain,
        records: dict[str, dict[str, Any]],
        forward: Callable[[Event], None] | None = None,
    ):
        self.drain = drain
        self.records = records
        #: where the events go on to (the progress)
        self.forward = forward
        self._apis = {
            api.lowered_by + '.': api for api in drain.apis if api.lowered_by
        }
        self._due: set[tuple[str, str, str]] = set()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        #: (project, region, service) -> the limits in force, the missed
        self._lowered: dict[
            tuple[str, str, str], tuple[dict[str, Any], dict[str, Any]]
        ] = {}
        #: (project, region, service) -> why its last lowering failed
        self._failed: dict[tuple[str, str, str], str] = {}

    def _entry(self, key: tuple[str, str, str]) -> dict[str, Any] | None:
        project_id, region, service = key
        record = self.records.get(project_id) or {}
        entry = record.get('quotas', {}).get(region, {}).get(service)
        return entry if entry and entry.get('state') == FROZEN else None

    def notice(self, event: Event) -> None:
        """An event of the run: a delete done of a kind that lowers a
        freeze makes that project's and region's lowering due."""
        if self.forward is not None:
            self.forward(event)
        step = event.step
        if event.kind != DONE or step is None or step.is_break_action:
            return
        ref = step.target
        for prefix, api in self._apis.items():
            key = (ref.project_id, ref.region, api.service_type)
            if ref.kind.startswith(prefix) and self._entry(key):
                with self._cond:
                    self._due.add(key)
                    if self._thread is None and not self._closed:
                        self._thread = threading.Thread(
                            target=self._work,
                            name='cascade-lowering',
                            daemon=True,
                        )
                        self._thread.start()
                    self._cond.notify()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._due and not self._closed:
                    self._cond.wait()
                if not self._due:
                    return
                due, self._due = sorted(self._due), set()
            for key in due:
                self._lower(key)

    def _lower(self, key: tuple[str, str, str]) -> None:
        entry = self._entry(key)
        api = next(a for a in self._apis.values() if a.service_type == key[2])
        if entry is None:
            return
        frozen = self._lowered.get(key, (entry['frozen'], {}))[0]
        try:
            self._lowered[key] = self.drain.lower(key[0], key[1], api, frozen)
            self._failed.pop(key, None)
        except CascadeError as exc:
            self._failed[key] = str(exc)

    def close(self) -> list[str]:
        """After the last delete: stop the thread, lower every freeze at
        usage once more, keep the limits in force in the records. What
        stays above 0, or could not be lowered, one line each."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        notes = []
        for project_id, record in sorted(self.records.items()):
            for region, entries in sorted(record.get('quotas', {}).items()):
                for api in self._apis.values():
                    key = (project_id, region, api.service_type)
                    entry = self._entry(key)
                    if entry is None:
                        continue
                    self._lower(key)
                    where = _where(api.service_type, region)
                    if key in self._failed:
                        notes.append(
                            f'quotas of {where} of project {project_id} '
                            f'not lowered: {self._failed[key]}'
                        )
                    frozen, missed = self._lowered.get(
                        key, (entry['frozen'], {})
                    )
                    entry['frozen'] = frozen
                    if missed:
                        entry['missed'] = missed
                    above = {
                        k: missed.get(k, v)
                        for k, v in sorted(frozen.items())
                        if missed.get(k, v)
                    }
                    if above:
                        notes.append(
                            f'quotas of {where} of project {project_id} '
                            'stay at '
                            + ', '.join(f'{k}={v}' for k, v in above.items())
                            + ' (its usage: what it still holds there, or '
                            "Cinder's count of it): the freeze does not "
                            'cover that room; the verification rounds and '
                            '--settle catch what is created'
                        )
        return notes


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


def _where(service_type: str, region: str) -> str:
    """A service's name in a note, with its region where there is one."""
    return service_type + (f' in {region}' if region else '')


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')
