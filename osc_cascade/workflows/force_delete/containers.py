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

"""The Swift containers a stack left: which container of that name each
was, and what Heat's own delete would refuse of them, read from one HEAD
each (in the stack's project's account).

Heat knows a container by its name alone, and a name can be taken again:
a manifest records when the stack's container was created and last PUT
(``incarnation``: Swift's ``X-Timestamp`` and ``X-PUT-Timestamp``). Swift
keeps a deleted container's database, and so its creation time, until it
is reclaimed (a week by default), so a container re-created meanwhile
tells only by a new ``X-PUT-Timestamp``: either differing keeps it.

Heat's OS::Swift::Container deletes a container that holds objects only
when its template says ``PurgeOnDelete: true``; otherwise its delete fails
(ResourceActionNotSupported), and so the leftovers' deletion keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
from typing import Any
from urllib import parse

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.retry import Clock, RetryPolicy, checked
from osc_cascade.kinds import object_store
from osc_cascade.workflows.clusters.records import StackResource

CONTAINER = 'OS::Swift::Container'


def head(
    conn: Any,
    res: StackResource,
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> Any:
    """The container's headers, in its project's account; None on a 404."""

    def call() -> Any:
        store = object_store.account(conn, res.project_id)
        try:
            # raw: in another project's account, which the SDK's proxy
            # does not address
            return request(
                store, 'HEAD', parse.quote(res.physical_id, safe='')
            ).headers
        except sdk_exc.NotFoundException:
            return None

    return checked(
        f'looking at container {res.physical_id}',
        call,
        retry=retry,
        clock=clock,
    )


def incarnation(headers: Any) -> str:
    """Which container of its name it is: when it was created and last
    PUT; '' when Swift does not say. The container server says when it was
    PUT in ``X-PUT-Timestamp``, which Swift's proxy does not pass on; the
    proxy's ``Last-Modified`` is that PUT's time (a container re-created
    under its name keeps its ``X-Timestamp`` until its old record is
    reclaimed, and its ``Last-Modified`` moves: seen on the minicloud)."""
    created = headers.get('X-Timestamp')
    put = headers.get('X-PUT-Timestamp') or headers.get('Last-Modified')
    return f'{created} {put}' if created and put else ''


def recorded(
    conn: Any,
    left: Sequence[StackResource],
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> list[StackResource]:
    """``left``, each container with its ``incarnation`` now (before the
    abandon, while the stack holds it); one that cannot be read has none,
    and a deletion of the leftovers keeps it."""
    if not any(r.type == CONTAINER for r in left) or not conn.has_service(
        'object-store'
    ):
        return list(left)
    out = []
    for res in left:
        if res.type == CONTAINER and res.physical_id:
            try:
                headers = head(conn, res, retry=retry, clock=clock)
            except CascadeError:
                headers = None
            if headers is not None:
                res = dataclasses.replace(
                    res, incarnation=incarnation(headers)
                )
        out.append(res)
    return out


def changed(res: StackResource, headers: Any) -> str:
    """Why the container found is not the one the manifest records, as a
    kept line; '' when it is."""
    if not res.incarnation:
        return (
            f'kept: container {res.physical_id}: the manifest does not say '
            f'when the stack\'s was created, so it may be another made since '
            f'under its name'
        )
    now = incarnation(headers)
    if now == res.incarnation:
        return ''
    was_created, _, was_put = res.incarnation.partition(' ')
    created, _, put = now.partition(' ')
    if created != was_created:
        return (
            f'kept: container {res.physical_id} was re-created since the '
            f'manifest was written (created {created or "(not said)"}, the '
            f'manifest says {was_created})'
        )
    return (
        f'kept: container {res.physical_id} was PUT again since the '
        f'manifest was written (last PUT {put}, the manifest says '
        f'{was_put}): it may have been deleted and re-created'
    )


def refused(res: StackResource, headers: Any) -> str:
    """Why Heat's delete would refuse the container, as a kept line; ''
    when it would delete it."""
    count = int(headers.get('X-Container-Object-Count') or 0)
    if not count or res.purge_on_delete:
        return ''
    objects = f'{count} object{"s" if count != 1 else ""}'
    if res.purge_on_delete is None:
        return (
            f'kept: container {res.physical_id} holds {objects} and the '
            f'template, which says whether Heat empties it on delete '
            f'(PurgeOnDelete), is not known'
        )
    return (
        f'kept: container {res.physical_id} holds {objects} and the '
        f'template does not purge it on delete (PurgeOnDelete)'
    )


def keeps(
    conn: Any,
    left: Sequence[StackResource],
    found: set[tuple[str, str]],
    kept: dict[str, str],
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> None:
    """Add to ``kept`` the containers of ``left`` that are ``found`` (by
    kind and name) and are not the ones the manifest records, or that
    Heat's delete would refuse: one HEAD each."""
    for res in left:
        if res.type != CONTAINER or res.key in kept:
            continue
        if (res.kind, res.physical_id) not in found:
            continue
        headers = head(conn, res, retry=retry, clock=clock)
        if headers is None:
            continue  # gone since the list: its delete finds it gone
        why = changed(res, headers) or refused(res, headers)
        if why:
            kept[res.key] = why
