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

"""Placement allocations and providers, and the nova compute service, for
``compute service delete --purge-allocations``.

These kinds are not in the project-cascade registry (``kinds.KIND_CLASSES``):
nothing here is owned by a project. ``purge`` finds them and builds its own
kinds with ``build()``.

Placement is called through the SDK connection's adapter for the
``placement`` service with an explicit microversion. openstacksdk's own
allocation resource is recent (not in every SDK >= 4.0 this plugin accepts)
and negotiates up to 1.38, where a PUT must also carry ``consumer_type``;
1.28 is all a rewrite needs and leaves the consumer type as it is.
"""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import SERVICE, ResourceKind, delete_of
from osc_cascade.kinds.registry import register

#: consumer generations (1.28); error codes (1.23); in_tree and root/parent
#: provider UUIDs (1.14)
PLACEMENT_VERSION = '1.28'
#: service and hypervisor UUIDs (2.53), migration UUIDs (2.59), instance
#: actions of deleted instances (2.21)
NOVA_VERSION = '2.59'
#: Placement's code for a generation conflict: another writer changed the
#: consumer (or a provider) since it was read
CONCURRENT_UPDATE = 'placement.concurrent_update'


def placement(
    conn: Any, method: str, path: str, body: dict | None = None
) -> dict:
    """One Placement call; an error answer raises the SDK's exception."""
    kwargs: dict[str, Any] = {'microversion': PLACEMENT_VERSION}
    if body is not None:
        kwargs['json'] = body
    try:
        response = request(conn.placement, method, path, **kwargs)
    except sdk_exc.HttpException as exc:
        # the SDK finds no message in Placement's error format
        detail = _error(exc.response).get('detail')
        if detail:
            exc.details = ' '.join(detail.split())
        raise
    return response.json() if response.content else {}


def _error(response: Any) -> dict:
    try:
        return response.json()['errors'][0]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return {}


def error_code(exc: Exception) -> str | None:
    response = getattr(exc, 'response', None)
    return _error(response).get('code') if response is not None else None


def list_providers(conn: Any) -> list[dict]:
    """Every resource provider, in one call (Placement does not page)."""
    return placement(conn, 'GET', '/resource_providers')['resource_providers']


@register
class Allocation(ResourceKind):
    """A consumer's share on the provider trees being deleted.

    ``attrs``: ``providers`` (its providers in those trees), ``services``
    (whose trees they are), ``blocks``
    (it must not be touched: the plan keeps it and the purge refuses),
    ``class`` and ``detail`` (what nova says of it, for the plan).
    Its delete rewrites the consumer's allocations without those providers:
    what it holds elsewhere (an evacuated instance on its new host) stays.
    """

    name = 'placement.allocation'
    scope = SERVICE
    service_type = 'placement'
    synchronous_delete = True

    def primary_step(self, ref):
        if ref.attrs.get('blocks'):
            return resource.keep(ref, ref.attrs.get('detail', ''))
        return resource.delete(ref)

    def relations(self, ref, inventory):
        mine = self.primary_step(ref)
        for provider in ref.attrs.get('providers', []):
            yield Edge(mine, delete_of(ResourceProvider.name, provider))
        for service in ref.attrs.get('services', []):
            yield Edge(mine, delete_of(ComputeService.name, service))

    def delete(self, conn, ref):
        drop = set(ref.attrs.get('providers', []))
        current = placement(conn, 'GET', f'/allocations/{ref.id}')
        held = current.get('allocations') or {}
        if not drop & held.keys():
            return  # nothing of it left on these trees
        # the generation makes the write fail (409) if anyone changed the
        # consumer since the read: is_in_use has the executor read again
        placement(
            conn,
            'PUT',
            f'/allocations/{ref.id}',
            {
                'allocations': {
                    rp: {'resources': alloc['resources']}
                    for rp, alloc in held.items()
                    if rp not in drop
                },
                'consumer_generation': current.get('consumer_generation'),
                'project_id': current.get('project_id'),
                'user_id': current.get('user_id'),
            },
        )

    def is_in_use(self, exc):
        return error_code(exc) == CONCURRENT_UPDATE


@register
class ResourceProvider(ResourceKind):
    """``attrs``: ``parent`` (deleted after it), ``service`` and ``host``
    (its compute service), ``node`` (it is the root provider of one of the
    service's compute nodes).

    nova deletes a node's provider tree itself with the service, and
    answers 500 to the service delete if the node's provider is gone
    (nova 34: ``ValueError: No such provider``). So a node's root goes
    after the service (its delete finds it gone, or finishes what nova
    left), every other provider before it, children first.
    """

    name = 'placement.resource_provider'
    scope = SERVICE
    service_type = 'placement'

    def relations(self, ref, inventory):
        mine = resource.delete(ref)
        service = delete_of(ComputeService.name, ref.attrs['service'])
        if ref.attrs.get('parent'):
            yield Edge(mine, delete_of(self.name, ref.attrs['parent']))
        yield (
            Edge(service, mine)
            if ref.attrs.get('node')
            else Edge(mine, service)
        )

    def delete(self, conn, ref):
        placement(conn, 'DELETE', f'/resource_providers/{ref.id}')

    def status(self, conn, ref):
        placement(conn, 'GET', f'/resource_providers/{ref.id}')  # 404: gone
        raise CascadeError(
            f'resource provider {ref.name} ({ref.id}) is back after its '
            f'delete: something re-creates it (is nova-compute on '
            f'{ref.attrs.get("host")} still running? Stop it first)'
        )

    def is_in_use(self, exc):
        # an allocation or a child provider that appeared since the plan:
        # waiting does not remove it
        return False


@register
class ComputeService(ResourceKind):
    """A nova-compute service; ``attrs``: ``nodes`` (its compute nodes'
    UUIDs, which are their root providers', and names) and ``roots`` (the
    roots of every provider tree the plan deletes)."""

    name = 'compute.service'
    scope = SERVICE
    service_type = 'compute'
    synchronous_delete = True

    def delete(self, conn, ref):
        self._check_only_nodes_left(conn, ref)
        for uuid, name in ref.attrs.get('nodes', {}).items():
            try:
                held = placement(
                    conn, 'GET', f'/resource_providers/{uuid}/allocations'
                )['allocations']
            except sdk_exc.NotFoundException:
                # without a provider for each node, nova cannot delete the
                # service (500): an empty one, for nova to delete
                placement(
                    conn,
                    'POST',
                    '/resource_providers',
                    {'uuid': uuid, 'name': name},
                )
                continue
            if held:
                # nova would ignore Placement's 409 and orphan it
                raise CascadeError(
                    f'resource provider {name} ({uuid}) has allocations '
                    f'that appeared after the plan (consumers '
                    f'{", ".join(sorted(held))}), so the service was not '
                    f'deleted; run the command again'
                )
        # by UUID at 2.53 or later, whatever --os-compute-api-version says
        request(
            conn.compute,
            'DELETE',
            f'/os-services/{ref.id}',
            microversion=NOVA_VERSION,
        )

    @staticmethod
    def _check_only_nodes_left(conn, ref):
        """The plan deleted every other provider of the trees; one that is
        there again (or new) would be orphaned by nova."""
        nodes = ref.attrs.get('nodes', {})
        roots = set(ref.attrs.get('roots', []))
        left = [
            p
            for p in list_providers(conn)
            if p['root_provider_uuid'] in roots and p['uuid'] not in nodes
        ]
        if left:
            raise CascadeError(
                'resource provider(s) '
                + ', '.join(f'{p["name"]} ({p["uuid"]})' for p in left)
                + f' exist after their delete or appeared since the plan: '
                f'something creates them (is nova-compute on {ref.name} '
                f'still running? Stop it first), so the service was not '
                f'deleted'
            )

    def is_in_use(self, exc):
        # nova's 409 (instances or migrations on the host) does not pass by
        # waiting
        return False
