"""Finds what projects own, in every service of the catalog.

Discovery runs as admin across projects with the project filter on every
list call, in parallel, and the kinds check each owner again client-side.
A service missing from the catalog is skipped with a note; one that is in
the catalog but answers errors is an error: a cascade must never plan on a
partial picture and then delete the project.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable, Mapping
from typing import Any

from osc_cascade.errors import CascadeError
from osc_cascade.executor import Clock, RetryPolicy, is_transient, status_code
from osc_cascade.kinds import PROJECT_KIND
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.resource import ResourceRef


class Discovery:
    def __init__(self, conn: Any, kinds: Mapping[str, ResourceKind], *,
                 parallel: int = 8, retry: RetryPolicy | None = None,
                 clock: Clock | None = None):
        self.conn = conn
        self.kinds = kinds
        self.parallel = parallel
        self.retry = retry or RetryPolicy(max_attempts=4)
        self.clock = clock or Clock()

    def available_kinds(self) -> tuple[list[ResourceKind], list[str]]:
        """The kinds whose service is in the catalog, and a note for each
        service that is not."""
        usable, notes = [], []
        missing: dict[str, list[str]] = {}
        unreachable: dict[str, list[str]] = {}
        for kind in self.kinds.values():
            if kind.name == PROJECT_KIND:
                continue
            if not self.conn.has_service(kind.service_type):
                missing.setdefault(kind.service_type, []).append(kind.name)
            elif kind.unreachable:
                unreachable.setdefault(kind.unreachable, []).append(
                    kind.name)
            else:
                usable.append(kind)
        for service, names in sorted(missing.items()):
            notes.append(f'service {service} is not in the catalog: '
                         f'skipped {", ".join(sorted(names))}')
        for reason, names in sorted(unreachable.items()):
            notes.append(f'not listed: {", ".join(sorted(names))}: {reason}')
        return usable, notes

    def run(self, project_ids: Iterable[str | None]
            ) -> tuple[list[ResourceRef], list[str]]:
        """What the projects own; a None project stands for all."""
        kinds, notes = self.available_kinds()
        jobs = [(kind, pid) for pid in project_ids for kind in kinds]
        refs: list[ResourceRef] = []
        with concurrent.futures.ThreadPoolExecutor(
                max_workers=self.parallel,
                thread_name_prefix='discover') as pool:
            futures = [pool.submit(self._list, kind, pid)
                       for kind, pid in jobs]
            for fut in futures:
                refs.extend(fut.result())
        return refs, notes

    def _list(self, kind: ResourceKind, project_id: str | None
              ) -> list[ResourceRef]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return list(kind.list(self.conn, project_id))
            except Exception as exc:
                if is_transient(exc) and attempt < self.retry.max_attempts:
                    self.clock.sleep(self.retry.delay(attempt))
                    continue
                raise CascadeError(describe_list_error(
                    kind, project_id, exc)) from exc


def describe_list_error(kind: ResourceKind, project_id: str | None,
                        exc: Exception) -> str:
    what = f'listing {kind.name} of ' + (
        f'project {project_id}' if project_id else 'all projects')
    code = status_code(exc)
    detail = ' '.join(str(exc).split())
    if code == 403:
        hint = kind.forbidden_hint.format(service_type=kind.service_type)
        return f'{what} was refused (HTTP 403): {hint}. {detail}'
    if code == 401:
        return f'{what} was not authorised (HTTP 401): {detail}'
    return f'{what} failed, so nothing was deleted: {detail}'
