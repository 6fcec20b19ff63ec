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
``compute service delete --purge-allocations`` (scope ``SERVICE``: nothing
here is owned by a project; ``workflows.service_purge`` finds them). Their
calls are in ``api.placement``.
"""

from __future__ import annotations

from osc_cascade.api import placement
from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import SERVICE, ResourceKind, delete_of
from osc_cascade.kinds.registry import register


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
        current = placement.call(conn, 'GET', f'/allocations/{ref.id}')
        held = current.get('allocations') or {}
        if not drop & held.keys():
            return  # nothing of it left on these trees
        # the generation makes the write fail (409) if anyone changed the
        # consumer since the read: is_in_use has the executor read again
        placement.call(
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
        return placement.error_code(exc) == placement.CONCURRENT_UPDATE


@register
class ResourceProvider(ResourceKind):
    """``attrs``: ``parent`` (deleted after it), ``service`` and ``host``
    (its compute service), ``node`` (it is the root provider of one of the
    service's compute nodes), ``keep`` (it is not nova's, by its owner
    traits: why, in one line; the plan keeps it and the purge refuses,
    since nova's service delete would take the whole tree).

    nova deletes a node's provider tree itself with the service, and
    answers 500 to the service delete if the node's provider is gone
    (nova 34: ``ValueError: No such provider``). So a node's root goes
    after the service (its delete finds it gone, or finishes what nova
    left), every other provider before it, children first.
    """

    name = 'placement.resource_provider'
    scope = SERVICE
    service_type = 'placement'

    def primary_step(self, ref):
        if ref.attrs.get('keep'):
            return resource.keep(ref, ref.attrs['keep'])
        return resource.delete(ref)

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
        placement.call(conn, 'DELETE', f'/resource_providers/{ref.id}')

    def status(self, conn, ref):
        # 404 when it is gone
        placement.call(conn, 'GET', f'/resource_providers/{ref.id}')
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
        # just before the delete, not at plan time: nova orphans whatever
        # provider still has allocations then
        placement.check_only_bare_nodes(
            conn,
            ref.name,
            ref.attrs.get('nodes', {}),
            ref.attrs.get('roots', []),
        )
        # by UUID at 2.53 or later, whatever --os-compute-api-version says;
        # raw: the SDK's delete_service takes that option's microversion
        # first (Resource._get_microversion)
        request(
            conn.compute,
            'DELETE',
            f'/os-services/{ref.id}',
            microversion=placement.NOVA_VERSION,
        )

    def is_in_use(self, exc):
        # nova's 409 (instances or migrations on the host) does not pass by
        # waiting
        return False
