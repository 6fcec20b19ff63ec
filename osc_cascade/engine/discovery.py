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

"""Finds what projects own, in every service and region of the catalog.

Discovery runs as admin across projects with the project filter on every
list call, in parallel, and the kinds check each owner again client-side.
A kind whose service has no project filter (``lists_every_project``) is
listed once for all the projects of a plan, not once for each.
A service missing from the catalog is skipped with a note; one that is in
the catalog but answers errors is an error: a cascade must never plan on a
partial picture and then delete the project; nor may it call a project
empty that a delete of the run kept something of (``ResourceKind.recheck``:
a volume given to another project meanwhile), though it lists nothing of
it now. The services of the catalog
that no kind covers are named in one note: what a project has there stays
behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import concurrent.futures
import contextlib
import contextvars
from typing import Any

import os_service_types

from osc_cascade.engine.errors import CascadeError, describe, status_code
from osc_cascade.engine.heap import with_few_collections
from osc_cascade.engine.regions import GLOBAL, Regions
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds import PROJECT_KIND, calls
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.kinds.registry import CLASSES

_SERVICE_TYPES = os_service_types.ServiceTypes()


def official(service_type: str) -> str:
    """The official name of a service type, its aliases' too
    (``volumev3`` is ``block-storage``)."""
    return _SERVICE_TYPES.get_service_type(service_type) or service_type


class Discovery:
    """``regions`` are the regions to list in (by default the client's):
    every kind is listed in each of them that offers its service, Keystone's
    kinds once, and what is found carries its region."""

    def __init__(
        self,
        conn: Any,
        kinds: Mapping[str, ResourceKind],
        *,
        regions: Regions | None = None,
        parallel: int = 8,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
    ):
        self.conn = conn
        self.kinds = kinds
        self.regions = regions or Regions.client(conn)
        self.parallel = parallel
        self.retry = retry or RetryPolicy(max_attempts=4)
        self.clock = clock or Clock()

    def regions_of(
        self, kind: ResourceKind, among: Sequence[str] = ()
    ) -> list[str]:
        """Where ``kind`` is listed: once for Keystone's kinds, else each
        region (of ``among``, by default those worked in) with its
        service."""
        if kind.is_global:
            return [GLOBAL]
        return self.regions.of_service(kind.service_type, among)

    def available_kinds(self) -> tuple[list[ResourceKind], list[str]]:
        """The kinds whose service is in the catalog, and a note for each
        service that is not."""
        usable, notes = [], []
        missing: dict[str, list[str]] = {}
        unreachable: dict[str, list[str]] = {}
        for kind in self.kinds.values():
            if kind.name == PROJECT_KIND:
                continue
            if not self.regions_of(kind):
                missing.setdefault(kind.service_type, []).append(kind.name)
            elif kind.unlisted:
                unreachable.setdefault(kind.unlisted, []).append(kind.name)
            else:
                usable.append(kind)
        for service, names in sorted(missing.items()):
            notes.append(
                f'service {service} is not in the catalog: '
                f'skipped {", ".join(sorted(names))}'
            )
        for reason, names in sorted(unreachable.items()):
            notes.append(f'not listed: {", ".join(sorted(names))}: {reason}')
        uncovered = self.uncovered_services()
        if uncovered:
            notes.append(
                f'no kind for the catalog\'s {", ".join(uncovered)}: what '
                f'a project has there stays behind'
            )
        return usable, notes

    def uncovered_services(self) -> list[str]:
        """The catalog's services (in the regions worked in) that no kind
        covers, as the catalog names them; aliases of a covered service
        (``volumev3``) are covered."""
        covered = {official(cls.service_type) for cls in CLASSES.values()}
        session = self.conn.session
        catalog = session.auth.get_access(session).service_catalog.catalog
        regions = set(self.regions.names)
        return sorted(
            {
                entry['type']
                for entry in catalog or []
                if entry.get('type')
                and official(entry['type']) not in covered
                and any(
                    (e.get('region_id') or e.get('region') or GLOBAL)
                    in regions
                    for e in entry.get('endpoints') or []
                )
            }
        )

    @with_few_collections
    def run(
        self,
        project_ids: Iterable[str | None],
        among: Sequence[str] = (),
    ) -> tuple[list[ResourceRef], list[str]]:
        """What the projects own (a None project stands for all) in the
        regions of ``among`` (by default those worked in)."""
        project_ids = list(project_ids)
        self.refuse_kept(project_ids)
        kinds, notes = self.available_kinds()
        # a kind whose list is the same for every project: one list for
        # them all (None), of which the projects' are kept
        together = [k for k in kinds if self._lists_once(k, project_ids)]
        wanted = frozenset(project_ids)
        jobs = [
            (kind, region, None, wanted)
            for kind in together
            for region in self.regions_of(kind, among)
        ] + [
            (kind, region, pid, None)
            for pid in project_ids
            for kind in kinds
            if kind not in together
            for region in self.regions_of(kind, among)
        ]
        refs: list[ResourceRef] = []
        unread: list[str] = []
        with (
            # the kinds' calls per item share one bound, of the same width
            # as the lists: at most twice ``parallel`` requests at once
            calls.shared_width(self.parallel),
            concurrent.futures.ThreadPoolExecutor(
                max_workers=self.parallel, thread_name_prefix='discover'
            ) as pool,
        ):
            # Each service's SDK proxy first, once: made lazily by the
            # first call that needs it, it costs a version discovery (a GET
            # of the service's root) in every thread that gets there before
            # it is cached (measured: up to six GETs of Cinder's and three
            # of Nova's version document per round). Submitted first, so
            # every list that waits for one waits for a running one.
            ready = {
                where: pool.submit(self._proxy, *where)
                for where in sorted(
                    {(k.service_type, region) for k, region, _, _ in jobs}
                )
            }
            futures = [
                (
                    pool.submit(
                        contextvars.copy_context().run,  # with the width
                        self._list,
                        kind,
                        pid,
                        region,
                        ready[kind.service_type, region],
                        unread,
                    ),
                    among_projects,
                )
                for kind, region, pid, among_projects in jobs
            ]
            for fut, among_projects in futures:
                refs.extend(
                    ref
                    for ref in fut.result()
                    if among_projects is None
                    or ref.project_id in among_projects
                )
        return refs, notes + sorted(unread)

    @staticmethod
    def _lists_once(
        kind: ResourceKind, project_ids: Sequence[str | None]
    ) -> bool:
        """Whether one list of every project's serves all of
        ``project_ids``: a kind that ``lists_every_project`` as admin (a
        project's token lists what it sees), for several projects."""
        return (
            kind.lists_every_project
            and not kind.scoped
            and len(project_ids) > 1
            and None not in project_ids
        )

    def refuse_kept(self, project_ids: Sequence[str | None]) -> None:
        """Raise if a delete of this run kept a resource of the projects
        (``Facts.kept``): what they own is not to be listed as done."""
        kept = {
            ref.key: (ref, why)
            for kind in self.kinds.values()
            for ref, why in kind.facts.kept()
            if ref.project_id in project_ids
        }
        if kept:
            raise CascadeError(
                'The projects were not deleted and stay drained (disabled): '
                'the run kept what was no longer theirs to delete: '
                + '; '.join(
                    f'{ref.label()}: {why}'
                    for ref, why in sorted(
                        kept.values(), key=lambda kept: kept[0].key
                    )
                )
            )

    def _proxy(self, service_type: str, region: str) -> None:
        # a failure here is the lists' to report, with what was listed
        with contextlib.suppress(Exception):
            conn = self.regions.connection(region)
            getattr(conn, service_type.replace('-', '_'), None)

    def _list(
        self,
        kind: ResourceKind,
        project_id: str | None,
        region: str = GLOBAL,
        proxy_ready: concurrent.futures.Future | None = None,
        unread: list[str] | None = None,
    ) -> list[ResourceRef]:
        """The kind's resources in the region; a kind whose refused
        listing is a note (``refused_listing_is_note``: the quota kinds,
        whose listing Barbican 18 keeps for its service admin) adds the
        note to ``unread`` and finds nothing, which deletes nothing more
        and, of the other kinds, nothing less; every other failure
        raises."""
        if proxy_ready is not None:
            proxy_ready.result()
        conn = self.regions.connection(region)
        what = (
            f'listing {kind.name} of '
            + (f'project {project_id}' if project_id else 'all projects')
            + (f' in {region}' if region else '')
        )
        needs = kind.forbidden_hint.format(service_type=kind.service_type)
        try:
            found = checked(
                what,
                lambda: list(kind.list(conn, project_id)),
                retry=self.retry,
                clock=self.clock,
                needs=needs,
                outcome='Nothing was deleted',
            )
        except CascadeError as exc:
            cause = exc.__cause__
            if not (
                unread is not None
                and getattr(kind, 'refused_listing_is_note', False)
                and isinstance(cause, Exception)
                and status_code(cause) == 403
            ):
                raise
            unread.append(
                f'{kind.name} not listed'
                + (f' in {region}' if region else '')
                + ': '
                + describe(
                    what,
                    cause,
                    needs=needs,
                    outcome='What it holds is neither reported nor purged',
                )
            )
            return []
        return [ref.in_region(region) for ref in found]
