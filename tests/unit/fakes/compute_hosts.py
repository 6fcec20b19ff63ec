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

"""Nova's compute-host APIs, answering the way the minicloud's nova 34.0.0
did (shared notes, minicloud-compute-placement.md sections 5 and 9):
compute services, hypervisors, migrations and instance actions. Nova
refuses to delete a compute service that hosts instances or has
unfinished migrations, and otherwise deletes the service after a delete of
its providers (placement.py) that swallows Placement's 409, which orphans
the provider, and answers 500 if a compute node has no provider (nova
34's ``ValueError: No such provider``). Hypervisors and migrations are
paged like nova's (``page_size`` items, then a ``next`` link). A service
delete or update by UUID below microversion 2.53 is refused; an update
sets ``status`` and ``disabled_reason`` as nova's does (a reason only
with ``disabled``; enabling clears it)."""

from __future__ import annotations

import re

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    ADMIN_USER,
    Conflict,
    new_uuid,
)
from tests.unit.fakes.compute import server_view

ENDED = {
    'confirmed',
    'reverted',
    'error',
    'failed',
    'completed',
    'cancelled',
    'done',
}


def nova_error(status: int, message: str) -> Conflict:
    key = {400: 'badRequest', 404: 'itemNotFound', 409: 'conflictingRequest'}[
        status
    ]
    return Conflict(status, {key: {'code': status, 'message': message}})


class ComputeHosts:
    def __init__(self, services=None, *, page_size: int = 1000, **kwargs):
        super().__init__(services, **kwargs)
        self.page_size = page_size

    def compute(
        self,
        host,
        *,
        nodes=None,
        state='down',
        forced_down=True,
        binary='nova-compute',
        status='disabled',
        disabled_reason=None,
        owner_traits=False,
    ) -> dict:
        """A nova-compute service with its compute nodes (by default one,
        named like the host) and their root providers. ``owner_traits``:
        the roots carry COMPUTE_NODE and OWNER_NOVA, as a nova-compute of
        service version 73 or later (nova 34.0.0) reports them
        (``ResourceTracker._get_traits``); without, as one before."""
        service = self.add(
            'services',
            id=new_uuid(),
            binary=binary,
            host=host,
            zone='nova',
            status=status,
            state=state,
            forced_down=forced_down,
            disabled_reason=disabled_reason,
            updated_at=None,
        )
        for node in nodes if nodes is not None else [host]:
            rp = self.provider(node)
            if owner_traits:
                self.tag(rp['uuid'], 'COMPUTE_NODE', 'OWNER_NOVA')
            self.add(
                'hypervisors',
                id=rp['uuid'],
                hypervisor_hostname=node,
                state=state,
                status='enabled',
                hypervisor_type='fake',
                service={
                    'id': service['id'],
                    'host': host,
                    'disabled_reason': None,
                },
            )
        return service

    def node_of(self, host) -> str:
        return next(
            h['id']
            for h in self.all('hypervisors')
            if h['service']['host'] == host
        )

    def server(
        self,
        name,
        host,
        *,
        flavor=None,
        project_id=ADMIN_PROJECT,
        allocate=True,
        **extra,
    ) -> dict:
        server = self.add(
            'servers',
            id=new_uuid(),
            name=name,
            project_id=project_id,
            status='ACTIVE',
            **{'OS-EXT-SRV-ATTR:host': host},
            **extra,
        )
        if allocate and host:
            self.allocate(
                server['id'],
                {
                    self.node_of(host): dict(
                        flavor or {'VCPU': 1, 'MEMORY_MB': 512}
                    )
                },
            )
        return server

    def migration(
        self,
        server,
        source,
        dest,
        *,
        status='done',
        migration_type='evacuation',
    ) -> dict:
        number = len(self.all('migrations')) + 1
        return self.add(
            'migrations',
            id=new_uuid(),
            number=number,
            instance_uuid=server['id'],
            status=status,
            migration_type=migration_type,
            source_compute=source,
            source_node=source,
            dest_compute=dest,
            dest_node=dest,
        )

    def delete_server(self, server):
        self._remove('servers', server['id'])
        self.add('deleted_servers', **server)

    def _compute(self, method, path, query, body):
        if path == '/os-services':
            items = [
                s
                for s in self.all('services')
                if query.get('binary') in (None, s['binary'])
                and query.get('host') in (None, s['host'])
            ]
            return 200, {'services': items}
        m = re.fullmatch(r'/os-services/([^/]+)', path)
        if m and method == 'DELETE':
            return self._delete_service(m.group(1))
        if m and method == 'PUT':
            return self._update_service(m.group(1), body or {})
        if path == '/os-hypervisors/detail':
            return 200, self._page(
                'hypervisors', self.all('hypervisors'), path, query, 'id'
            )
        if path == '/os-migrations':
            host = query.get('host')
            items = [
                self._migration_view(m)
                for m in self.all('migrations')
                if host in (None, m['source_compute'], m['dest_compute'])
            ]
            return 200, self._page('migrations', items, path, query, 'uuid')
        if path == '/servers/detail' and 'host' in query:
            return 200, {
                'servers': [
                    server_view(s)
                    for s in self.all('servers')
                    if s.get('OS-EXT-SRV-ATTR:host') == query['host']
                ]
            }
        m = re.fullmatch(r'/servers/([^/]+)/os-instance-actions', path)
        if m:
            if not (
                self.exists('servers', m.group(1))
                or self.exists('deleted_servers', m.group(1))
            ):
                raise nova_error(
                    404, f'Instance {m.group(1)} could not be found.'
                )
            return 200, {
                'instanceActions': [
                    {
                        'action': 'create',
                        'instance_uuid': m.group(1),
                        'request_id': 'req-fake',
                        'user_id': ADMIN_USER,
                        'project_id': ADMIN_PROJECT,
                        'start_time': None,
                        'message': None,
                    }
                ]
            }
        return super()._compute(method, path, query, body)

    def _page(self, key, items, path, query, marker_key):
        marker = query.get('marker')
        if marker is not None:
            ids = [i[marker_key] for i in items]
            items = items[ids.index(marker) + 1 :]
        limit = min(int(query.get('limit', self.page_size)), self.page_size)
        page = items[:limit]
        out = {key: page}
        if len(items) > limit:
            out[f'{key}_links'] = [
                {
                    'rel': 'next',
                    'href': f'{self.endpoints["compute"]}{path}'
                    f'?limit={limit}&marker={page[-1][marker_key]}',
                }
            ]
        return out

    def _migration_view(self, m):
        view = {k: v for k, v in m.items() if k != 'number'}
        view.update(id=m['number'], uuid=m['id'])
        return view

    def _service_by_uuid(self, service_id):
        version = self._microversion('compute')
        if version is None or version < (2, 53):
            raise nova_error(
                400,
                f'Invalid input for field/attribute id. '
                f'Value: {service_id}. fake: microversion '
                f'{version} < 2.53',
            )
        service = self.get('services', service_id)
        if service is None:
            raise nova_error(404, f'Service {service_id} not found.')
        return service

    def _update_service(self, service_id, body):
        service = self._service_by_uuid(service_id)
        status = body.get('status')
        if status not in (None, 'enabled', 'disabled') or (
            'disabled_reason' in body and status != 'disabled'
        ):
            raise nova_error(
                400,
                "Specifying 'disabled_reason' with status "
                f"{status!r} is invalid.",
            )
        if status == 'enabled':
            service.update(status='enabled', disabled_reason=None)
        elif status == 'disabled':
            service.update(
                status='disabled',
                disabled_reason=body.get('disabled_reason'),
            )
        return 200, {'service': dict(service)}

    def _delete_service(self, service_id):
        service = self._service_by_uuid(service_id)
        host = service['host']
        if any(
            s.get('OS-EXT-SRV-ATTR:host') == host for s in self.all('servers')
        ):
            raise nova_error(
                409,
                'Unable to delete compute service that is '
                'hosting instances. Migrate or delete the '
                'instances first.',
            )
        if any(
            m['status'] not in ENDED
            and host in (m['source_compute'], m['dest_compute'])
            for m in self.all('migrations')
        ):
            raise nova_error(
                409,
                'Unable to delete compute service that has '
                'in-progress migrations. Complete the '
                'migrations or delete the instances '
                'first.',
            )
        nodes = [
            h['id']
            for h in self.all('hypervisors')
            if h['service']['id'] == service_id
        ]
        if not all(self.exists('resource_providers', n) for n in nodes):
            # nova 34's delete_resource_provider: ValueError: No such
            # provider, from its provider tree cache
            raise Conflict(
                500,
                {
                    'computeFault': {
                        'code': 500,
                        'message': 'Unexpected API Error. Please '
                        'contact the administrator <class \'ValueError\'>',
                    }
                },
            )
        for node in nodes:
            self._nova_delete_tree(node)
            self._remove('hypervisors', node)
        self._remove('services', service_id)
        return 204, None

    def _nova_delete_tree(self, root):
        """nova's delete_resource_provider(cascade=True): the tree bottom
        up, Placement's 409 swallowed."""
        tree = [
            p
            for p in self.all('resource_providers')
            if p['root_provider_uuid'] == root
        ]
        depth = {p['uuid']: self._depth(p) for p in tree}
        for p in sorted(tree, key=lambda p: -depth[p['uuid']]):
            try:
                self._delete_provider(p)
            except Conflict:
                pass

    def _depth(self, rp):
        depth = 0
        while rp['parent_provider_uuid']:
            rp = self.get('resource_providers', rp['parent_provider_uuid'])
            depth += 1
        return depth
