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

"""The release of a deleted project's frozen quotas, once the services'
token cache window after its delete has passed (issue #29, item 8).

The quota rows keyed by a project's ID outlive the project in Nova,
Cinder, Neutron, ...; while they stay frozen they refuse what a token a
service validated before the drain (and keeps for its token cache time,
``WINDOW`` by default) would create. So a cascade without ``--settle``
does not reset them at exit (``hold``): it leaves them frozen (the project
is gone: they harm nothing), says after which time what is to be run, and
writes that down in a file of its own beside the runs' records
(``osc-cascade-pending/<project id>.json`` in the state directory) and in
the run's record.

Whatever a service with no quota (Glance) or a freeze that did not take
accepted in the window is owned by the deleted project's ID: the later
purge finds it, as an orphan, and deletes it. Only then, when a purge finds
nothing left, are the quotas released (``QuotaRelease``: every quota API in
every region of the catalog, for an owner Keystone answers 404 for):

* the reaper, on Keystone's notification, after its grace period (at
  least the window), or the window after its sweep found the owner;
* ``openstack orphan purge --project <id>``, which keeps the quotas of an
  owner whose pending file says the window has not passed yet
  (``hold_back``, ``release_after_purge``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import contextlib
import datetime
import email.utils
import json
import os
from typing import Any

from osc_cascade.api import keystone
from osc_cascade.engine import report
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.reconcile import parse_time
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.kinds.quota import QUOTA_APIS, QuotaApi, without_quotas
from osc_cascade.workflows import drain as drain_mod
from osc_cascade.workflows import orphans

#: keystonemiddleware's ``token_cache_time`` by default: how long after a
#: project's delete a service may still accept a token it validated before
WINDOW = 300.0

#: the run record's key of the releases left for later
PENDING = 'pending_release'


def purge_line(project_id: str) -> str:
    return f'openstack orphan purge --project {project_id}'


def pending_dir() -> str:
    """Beside the runs' records (that directory has records only):
    ``$XDG_STATE_HOME/osc-cascade-pending``."""
    return report.default_dir() + '-pending'


def pending_path(project_id: str) -> str:
    """The pending release of one deleted project, on this host."""
    return os.path.join(pending_dir(), f'{project_id}.json')


def cloud_now(
    conn: Any, retry: RetryPolicy, clock: Clock
) -> datetime.datetime:
    """Now, by Keystone's clock (its answer's Date header)."""
    answer = checked(
        'reading the time of the cloud',
        lambda: keystone.version_answer(conn),
        retry=retry,
        clock=clock,
    )
    date = answer.headers.get('Date')
    if date:
        return email.utils.parsedate_to_datetime(date)
    return datetime.datetime.now(datetime.UTC)


def _iso(at: datetime.datetime) -> str:
    return at.astimezone(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')


def hold(
    projects: Sequence[ResourceRef],
    records: Mapping[str, dict[str, Any]],
    deleted_by: datetime.datetime,
    report_file: str | None = None,
) -> list[str]:
    """After the cascade deleted ``projects`` (without ``--settle``): their
    quotas stay frozen. Each one with a frozen quota is written down as a
    pending release (its file, the run's record); a note for each, with
    the time after which the purge that releases it is to be run (of
    several: one note for all, which says where they are listed, and a
    note for each that could not be written down)."""
    after = _iso(deleted_by + datetime.timedelta(seconds=WINDOW))
    notes, entries, unwritten_notes = [], [], []
    for project in projects:
        quotas = (records.get(project.id) or {}).get('quotas') or {}
        if not quotas:
            continue  # nothing was frozen: nothing to release
        entry = {
            'project_id': project.id,
            'name': project.name,
            'deleted_by': _iso(deleted_by),
            'release_after': after,
            'quotas': {r: sorted(e) for r, e in sorted(quotas.items())},
            'run': purge_line(project.id),
        }
        entries.append(entry)
        unwritten = _write(pending_path(project.id), entry)
        if unwritten:
            unwritten_notes.append(f'project {project.id}: {unwritten}')
        notes.append(
            f'project {project.name} ({project.id}) is deleted; its quotas '
            'stay frozen at 0, so that a token issued before the drain '
            f'creates nothing they count, until {after} (the services\' '
            'token cache window) and a later purge: the reaper purges and '
            'releases them after its grace period; without a reaper, run '
            f'after {after}: {purge_line(project.id)}'
            + (f' ({unwritten})' if unwritten else '')
        )
    if entries and report_file:
        _add_to_record(report_file, entries)
    if len(entries) > 1:
        return [_held_many(len(entries), after, report_file), *unwritten_notes]
    return notes


def _held_many(count: int, after: str, report_file: str | None) -> str:
    """The one note of ``hold`` for ``count`` projects (a domain's, a
    sweep's: a line each would bury the rest)."""
    listed = f'{pending_dir()}/<ID>.json' + (
        f' and under {PENDING!r} in {report_file}' if report_file else ''
    )
    return (
        f'{count} projects are deleted; their quotas stay frozen at 0, so '
        'that a token issued before the drain creates nothing they count, '
        f"until {after} (the services' token cache window) and a later "
        'purge: the reaper purges and releases them after its grace '
        f'period; without a reaper, run after {after}, for each: '
        f'{purge_line("<ID>")} (the projects are listed in {listed})'
    )


def _write(path: str, entry: dict[str, Any]) -> str:
    """Write ``entry``; '' or why it could not be."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(json.dumps(entry, sort_keys=True) + '\n')
    except OSError as exc:
        return f'the pending release could not be written to {path}: {exc}'
    return ''


def _add_to_record(path: str, entries: list[dict[str, Any]]) -> None:
    """The pending releases in the run's record, written before the
    projects were deleted (a record that cannot be read is left alone)."""
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return
    if isinstance(record, dict):
        record[PENDING] = entries
        report.write(path, record)


def pending(project_id: str) -> dict[str, Any] | None:
    """The pending release of a deleted project on this host, or None."""
    try:
        with open(pending_path(project_id)) as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def not_yet(
    entry: dict[str, Any] | None, now: datetime.datetime
) -> str | None:
    """When the window of a pending release ends, if it has not yet."""
    if entry is None:
        return None
    after = parse_time(str(entry.get('release_after') or ''))
    if after is None or after <= now:
        return None
    return _iso(after)


def forget(project_id: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(pending_path(project_id))


class StillThere(CascadeError):
    """The owner exists: its quotas are its own, left alone."""


class QuotaRelease:
    """Reset (the quota APIs' DELETE) the quotas of a deleted project in
    every quota API and every region of the catalog that offers its
    service: the drain's freezes, whatever regions the cascade worked in.
    Only for an owner Keystone answers 404 for, asked right before."""

    def __init__(
        self,
        conn: Any,
        regions: Regions,
        *,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
        apis: Sequence[QuotaApi] = QUOTA_APIS,
    ):
        self.conn = conn
        self.regions = regions
        self.retry = retry or RetryPolicy()
        self.clock = clock or Clock()
        self.apis = apis

    def __call__(self, project_id: str) -> str:
        """What was done; ``CascadeError`` for an owner not proven gone
        (nothing is touched) and for a reset that failed (the reaper
        tries again)."""
        verdict = orphans.Owners(
            self.conn, retry=self.retry, clock=self.clock, parallel=1
        ).confirm([project_id])[project_id]
        if verdict.state != orphans.GONE:
            raise (
                StillThere if verdict.state == orphans.EXISTS else CascadeError
            )(
                f'project {project_id} '
                + (
                    'exists'
                    if verdict.state == orphans.EXISTS
                    else 'could not be proven gone'
                )
                + ': its quotas are left alone'
            )
        drainer = drain_mod.Drain(
            self.conn,
            self.regions,
            retry=self.retry,
            clock=self.clock,
            apis=self.apis,
        )
        record: dict[str, Any] = {'quotas': {}}
        for api in self.apis:
            for region in drainer.freezes.regions_of(api):
                record['quotas'].setdefault(region, {})[api.service_type] = {}
        failed = drainer.release_quotas(project_id, record)
        if failed:
            raise CascadeError(
                f'releasing the quotas of deleted project {project_id}: '
                + '; '.join(failed)
                + '; run it again'
            )
        return f'project {project_id}: its frozen quotas are released'


def hold_back(
    findings: orphans.Findings,
    kinds: Mapping[str, ResourceKind],
    now: datetime.datetime | None,
) -> tuple[orphans.Findings, list[str]]:
    """The findings of an orphan purge without the quota rows of owners
    whose pending release (on this host) says the window has not passed:
    their reset now would reopen what the freeze keeps shut. ``now``:
    the cloud's time (None: no pending release to look at)."""
    if now is None:
        return findings, []
    plain = without_quotas(dict(kinds))
    held: dict[str, str] = {}
    for owner in sorted({r.project_id for r in findings.owned_by_gone}):
        until = not_yet(pending(owner), now)
        if until:
            held[owner] = until

    def kept(ref: ResourceRef) -> bool:
        return ref.project_id not in held or ref.kind in plain

    notes = [
        f'project {owner}: its quotas stay frozen until {until} (the '
        'token cache window after its delete): run this again then'
        for owner, until in held.items()
    ]
    return (
        orphans.Findings(
            [o for o in findings.orphans if kept(o.ref)],
            findings.notes,
            [r for r in findings.owned_by_gone if kept(r)],
            findings.unconfirmed,
            # an owner whose Swift account was not listed is not clean
            findings.unlisted,
        ),
        notes,
    )


def any_pending(owners: Iterable[str]) -> bool:
    return any(os.path.exists(pending_path(o)) for o in owners)


def release_after_purge(
    search: orphans.OrphanSearch,
    owners: Sequence[str],
    *,
    purged: bool,
    dry_run: bool = False,
) -> tuple[list[str], list[str]]:
    """After ``orphan purge --project``: the quotas of each owner are
    released once a search finds nothing of it left (a new search when
    the purge deleted something) and its window has passed. Notes, and
    what the new search found left (it appeared during the purge: the
    purge is not done)."""
    if not owners:
        return [], []
    now = cloud_now(search.conn, search.retry, search.clock)
    left: set[str] = set()
    appeared: list[str] = []
    if purged:
        found = search.find(owners)
        plain = without_quotas(dict(search.kinds))
        again = [r for r in found.owned_by_gone if r.kind in plain]
        appeared = sorted(r.label() for r in again)
        left = {r.project_id for r in again} | set(found.unconfirmed)
    release = QuotaRelease(
        search.conn, search.regions, retry=search.retry, clock=search.clock
    )
    notes = []
    for owner in owners:
        until = not_yet(pending(owner), now)
        if owner in left:
            notes.append(
                f'project {owner}: something of it appeared during the '
                'purge: its quotas stay frozen; run this again'
            )
        elif until:
            notes.append(
                f'project {owner}: its quotas stay frozen until {until} '
                '(the token cache window after its delete): run this '
                'again then'
            )
        elif dry_run:
            notes.append(
                f'project {owner}: nothing left; its quotas would be released'
            )
        else:
            try:
                notes.append(release(owner))
            except CascadeError as exc:
                notes.append(str(exc))
                continue
            forget(owner)
    return notes, appeared
