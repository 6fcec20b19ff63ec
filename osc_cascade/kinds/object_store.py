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

"""Swift: a project's containers, each deleted with its objects.

A project's data lives in its account, ``AUTH_<project id>`` (the reseller
prefix is whatever the catalog's endpoint uses). The cascade reaches it
through the object-store endpoint of its own token with the account
swapped, which Swift allows only to its reseller admin role (``ResellerAdmin``
by default): the admin role is for one's own account. Without it Swift
answers 403, and discovery says what to grant; the cascade grants nothing.

A container's delete empties it first: through the bulk middleware in
batches of the size ``/info`` allows where the cluster has it, otherwise
object by object. These calls are the kind's ``parts``, which the executor
runs in its API slots as the listing's pages come. Objects are not steps of
the plan: a few hundred objects would drown it, and nothing outside their
container depends on them.

Versions: a legacy versioned container (``X-Versions-Location`` or
``X-History-Location``) has its versioning header removed before it is
emptied, so that deleting its objects neither brings old versions back from
the versions container nor copies them into it, and the versions container
goes after it. With object versioning (``X-Versions-Enabled``) the versions
are kept in a hidden container that goes with its container: versioning is
turned off and every version is deleted by its version id.

Segments of large objects (SLO/DLO) need no order: a manifest is deleted as
the plain object it is (its segments are not touched), and the segments are
objects of their own container, deleted with it.
"""

from __future__ import annotations

from collections.abc import Iterator
import functools
import itertools
import re
from typing import Any
from urllib import parse

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import (
    ResourceKind,
    delete_of,
    unless_absent,
)
from osc_cascade.kinds.calls import fan_out, retried
from osc_cascade.kinds.registry import register

#: the legacy versioning headers, and what removes each
_LEGACY = {
    'X-Versions-Location': 'X-Remove-Versions-Location',
    'X-History-Location': 'X-Remove-History-Location',
}


def account(conn: Any, project_id: str) -> Any:
    """An object-store proxy on the project's account: the endpoint of the
    caller's own account with the project swapped in."""
    store = conn.object_store
    mine = conn.current_project_id
    endpoint = store.get_endpoint() or ''
    url, found = re.subn(
        rf'{re.escape(mine)}(/?)$', rf'{project_id}\1', endpoint
    )
    if not found:
        raise CascadeError(
            f'cannot reach the Swift account of project '
            f'{project_id}: the object-store endpoint '
            f'{endpoint} does not end with your project\'s '
            f'account'
        )
    proxy = type(store)(
        session=store.session,
        service_type=store.service_type,
        interface=store.interface,
        region_name=store.region_name,
        endpoint_override=url,
    )
    proxy._connection = conn
    # clouds.yaml's object-store concurrency and rate_limit: keystoneauth
    # enforces them per adapter, so the account's proxy shares the
    # semaphore of the proxy it was made from, not a new one of its own
    shared = getattr(store, '_rate_semaphore', None)
    if shared is not None:
        proxy._rate_semaphore = shared
    return proxy


def _path(container: str, obj: str = '') -> str:
    return '/'.join(parse.quote(p, safe='') for p in (container, obj) if p)


def _names(store: Any, path: str) -> Iterator[str]:
    """The names a Swift listing holds (a container's objects, or at ''
    the account's containers), a page at a time (as Swift pages by
    marker), each page's read retried."""
    marker = ''
    while True:
        page = retried(
            request,
            store,
            'GET',
            path,
            params={'format': 'json', 'marker': marker},
        ).json()
        if not page:
            return
        for obj in page:
            yield obj['name']
        marker = page[-1]['name']


@register
class Container(ResourceKind):
    name = 'object_store.container'
    heat_types = ('OS::Swift::Container',)
    service_type = 'object-store'
    synchronous_delete = True
    #: Swift cannot list its accounts: the orphan search lists the
    #: account of each project it knows is gone (workflows.orphans)
    lists_one_project = True
    forbidden_hint = (
        "an admin reaches another project's Swift account only with Swift's "
        "reseller admin role (ResellerAdmin unless the proxy's "
        "reseller_admin_role says otherwise) on the project it is "
        "authenticated to: grant it with `openstack role add --user <you> "
        "--project <your project> ResellerAdmin`, then run again"
    )

    def list(self, conn, project_id):
        if project_id is None:
            return []  # Swift cannot list its accounts
        store = account(conn, project_id)

        def ref_of(container: str) -> ResourceRef | None:
            """None for a container deleted since the listing."""
            try:
                headers = retried(
                    request, store, 'HEAD', _path(container)
                ).headers
            except sdk_exc.NotFoundException:
                return None
            versions = headers.get('X-Versions-Location') or headers.get(
                'X-History-Location'
            )
            # A name is unique in its account only: the id says which, so
            # that two projects' namesakes are two resources. Heat knows it
            # by name (its physical id).
            return ResourceRef(
                kind=self.name,
                id=f'{project_id}/{container}',
                name=container,
                project_id=project_id,
                attrs={
                    'physical_id': container,
                    **(
                        {'versions': parse.unquote(versions)}
                        if versions
                        else {}
                    ),
                },
            )

        # 404: an account never used, where the proxy creates none on
        # demand (the names alone: an SDK resource per container cost
        # more than its HEAD); a HEAD per container, made at once
        # (kinds.calls)
        found = fan_out(
            ref_of,
            unless_absent(lambda: _names(store, '')),
            service=self.service_type,
        )
        return [ref for ref in found if ref is not None]

    def relations(self, ref, inventory):
        versions = ref.attrs.get('versions')
        if versions:
            # its objects' old versions are kept there
            yield Edge(
                delete_of(self.name, ref.id),
                delete_of(self.name, f'{ref.project_id}/{versions}'),
            )

    def parts(self, conn, ref):
        """Stop versioning, then every version and object, a bulk delete
        per batch where the cluster has it, page by page."""
        store = account(conn, ref.project_id)
        name = ref.name
        # these reads and settings are made by the executor's next() of
        # this generator, not as parts of their own: each is retried here
        headers = retried(request, store, 'HEAD', _path(name)).headers
        legacy = {_LEGACY[h]: 'x' for h in _LEGACY if headers.get(h)}
        if legacy:
            retried(request, store, 'POST', _path(name), headers=legacy)
        if headers.get('X-Versions-Enabled', '').lower() == 'true':
            retried(
                request,
                store,
                'POST',
                _path(name),
                headers={'X-Versions-Enabled': 'false'},
            )
            yield from self._version_deletes(store, name)
        objects = _names(store, _path(name))
        first = next(objects, None)
        if first is None:
            return
        objects = itertools.chain([first], objects)
        # the cluster's capabilities: one /info per run and region
        bulk = self.facts.get(
            'swift bulk delete',
            conn,
            lambda: retried(store.get_info).bulk_delete,
        )
        if bulk:
            size = int(bulk.get('max_deletes_per_request', 10000))
            while batch := list(itertools.islice(objects, size)):
                yield functools.partial(self._bulk_delete, store, name, batch)
            return
        for obj in objects:
            yield functools.partial(
                store.delete_object, obj, container=name, ignore_missing=True
            )

    def delete(self, conn, ref):
        # emptied by its parts; a 409 (an object added since) is retried,
        # and a verification round empties it again
        account(conn, ref.project_id).delete_container(
            ref.name, ignore_missing=False
        )

    @staticmethod
    def _version_deletes(store, name):
        marker, version_marker = '', ''
        while True:
            page = retried(
                request,
                store,
                'GET',
                _path(name),
                params={
                    'versions': '',
                    'format': 'json',
                    'marker': marker,
                    'version_marker': version_marker,
                },
            ).json()
            if not page:
                return
            for obj in page:
                # a version gone meanwhile is a 404: the executor's "done"
                # raw: the SDK's delete_object sends no version-id
                yield functools.partial(
                    request,
                    store,
                    'DELETE',
                    _path(name, obj['name']),
                    params={'version-id': obj['version_id']},
                )
            marker = page[-1]['name']
            version_marker = page[-1]['version_id']

    def _bulk_delete(self, store, name, objects):
        body = '\n'.join('/' + _path(name, obj) for obj in objects)
        # raw: openstacksdk has no public bulk delete (its own is private)
        result = request(
            store,
            'DELETE',
            '',
            params={'bulk-delete': ''},
            data=body.encode(),
            headers={
                'Content-Type': 'text/plain',
                'Accept': 'application/json',
            },
        ).json()
        # Swift answers 200 and lists the failures in the body
        errors = [
            e
            for e in result.get('Errors') or []
            if not str(e[1]).startswith('404')
        ]
        if errors:
            raise sdk_exc.ConflictException(
                f'bulk delete left {len(errors)} object(s) of container '
                f'{name}: ' + ', '.join(f'{p} ({s})' for p, s in errors[:5])
            )
