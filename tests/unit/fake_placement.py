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

"""Placement and nova's compute-host APIs for the fake cloud (see
fakecloud.FakeCloud).

They answer the way the minicloud's nova 34.0.0 and placement 16.0.0 did
(shared notes, minicloud-compute-placement.md sections 5 and 9, and anchors.md
section 4): Placement deletes a provider with 409
``placement.resource_provider.cannot_delete_parent`` while it has children
and ``placement.resource_provider.inuse`` while it has allocations, a PUT of
allocations with a stale consumer generation is 409
``placement.concurrent_update``, and error bodies have Placement's
``{"errors": [...]}`` shape. Nova refuses to delete a compute service that
hosts instances or has unfinished migrations, and otherwise deletes the
service after a provider delete that swallows Placement's 409, which orphans
the provider, and answers 500 if a compute node has no provider (nova 34's
``ValueError: No such provider``). Hypervisors and migrations are paged
like nova's
(``page_size`` items, then a ``next`` link).

The fake checks the microversions it is asked for: Placement calls below
1.28 and a service delete by UUID below 2.53 are refused.
"""

from __future__ import annotations

import re
import threading
from types import SimpleNamespace
import uuid as uuid_mod

from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    ADMIN_USER,
    ENDPOINTS,
    Conflict,
)
from tests.unit.fakes.compute import server_view

PLACEMENT = 'http://placement.test'
ENDPOINTS_WITH_PLACEMENT = {**FakeCloud.endpoints, 'placement': PLACEMENT}
ENDED = {
    'confirmed',
    'reverted',
    'error',
    'failed',
    'completed',
    'cancelled',
    'done',
}


def new_uuid() -> str:
    return str(uuid_mod.uuid4())


def placement_error(status: int, code: str, detail: str) -> Conflict:
    title = {400: 'Bad Request', 404: 'Not Found', 409: 'Conflict'}[status]
    return Conflict(
        status,
        {
            'errors': [
                {
                    'status': status,
                    'title': title,
                    'code': code,
                    'detail': f'There was a conflict when trying to complete your '
                    f'request.\n\n {detail}  ',
                    'request_id': 'req-fake',
                }
            ]
        },
    )


def nova_error(status: int, message: str) -> Conflict:
    key = {400: 'badRequest', 404: 'itemNotFound', 409: 'conflictingRequest'}[
        status
    ]
    return Conflict(status, {key: {'code': status, 'message': message}})


def _version(headers, service: str) -> tuple[int, int] | None:
    value = headers.get('OpenStack-API-Version', '')
    m = re.fullmatch(rf'{service} (\d+)\.(\d+)', value.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


class FakePlacementCloud(FakeCloud):
    endpoints = ENDPOINTS_WITH_PLACEMENT

    def __init__(
        self,
        services=None,
        *,
        page_size: int = 1000,
        nova_max_version: str = '2.96',
        **kwargs,
    ):
        super().__init__(services, **kwargs)
        self.page_size = page_size
        self.nova_max_version = nova_max_version
        #: consumer -> writes another client makes right before the next
        #: PUTs of its allocations (each a dict of provider -> resources
        #: added, or None for a write that only bumps the generation)
        self.concurrent_writes: dict[str, list] = {}
        #: providers that a running nova-compute re-creates after a delete
        self.respawn: set[str] = set()
        self._local = threading.local()

    def _dispatch(self, service, base):
        respond = super()._dispatch(service, base)

        def with_headers(request, context):
            self._local.headers = request.headers
            return respond(request, context)

        return with_headers

    def _microversion(self, service):
        return _version(self._local.headers, service)

    # -- state helpers -----------------------------------------------------

    def provider(self, name, *, parent=None, uuid=None) -> dict:
        root = (
            self.get('resource_providers', parent)['root_provider_uuid']
            if parent
            else None
        )
        uuid = uuid or new_uuid()
        return self.add(
            'resource_providers',
            id=uuid,
            uuid=uuid,
            name=name,
            generation=1,
            parent_provider_uuid=parent,
            root_provider_uuid=root or uuid,
        )

    def compute(
        self,
        host,
        *,
        nodes=None,
        state='down',
        forced_down=True,
        binary='nova-compute',
    ) -> dict:
        """A nova-compute service with its compute nodes (by default one,
        named like the host) and their root providers."""
        service = self.add(
            'services',
            id=new_uuid(),
            binary=binary,
            host=host,
            zone='nova',
            status='disabled',
            state=state,
            forced_down=forced_down,
            disabled_reason=None,
            updated_at=None,
        )
        for node in nodes if nodes is not None else [host]:
            rp = self.provider(node)
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

    def allocate(
        self,
        consumer,
        allocations,
        *,
        project_id=ADMIN_PROJECT,
        user_id=ADMIN_USER,
    ) -> dict:
        entry = self.get('consumers', consumer) or self.add(
            'consumers',
            id=consumer,
            allocations={},
            generation=0,
            project_id=project_id,
            user_id=user_id,
        )
        entry['allocations'].update(allocations)
        entry['generation'] += 1
        return entry

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

    def allocations_of(self, consumer) -> dict:
        entry = self.get('consumers', consumer)
        return dict(entry['allocations']) if entry else {}

    def placement_versions(self) -> list[str]:
        return [
            r.headers.get('OpenStack-API-Version', '')
            for r in self.mocker.request_history
            if r.url.startswith(PLACEMENT) and r.path not in ('', '/')
        ]

    # -- placement ---------------------------------------------------------

    def _placement(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'versions': [
                    {
                        'id': 'v1.0',
                        'max_version': '1.39',
                        'min_version': '1.0',
                        'status': 'CURRENT',
                        'links': [{'rel': 'self', 'href': ''}],
                    }
                ]
            }
        version = self._microversion('placement')
        if version is None or version < (1, 28):
            raise placement_error(
                400,
                'placement.undefined_code',
                f'fake: microversion {version} < 1.28',
            )
        if path == '/resource_providers' and method == 'POST':
            if any(
                p['name'] == body['name']
                for p in self.all('resource_providers')
            ):
                raise placement_error(
                    409,
                    'placement.duplicate_name',
                    f'Conflicting resource provider name: {body["name"]} '
                    f'already exists.',
                )
            return 200, self._rp_view(
                self.provider(body['name'], uuid=body['uuid'])
            )
        if path == '/resource_providers':
            items = [
                self._rp_view(p)
                for p in self.all('resource_providers')
                if query.get('in_tree') in (None, p['root_provider_uuid'])
            ]
            return 200, {'resource_providers': items}
        m = re.fullmatch(r'/resource_providers/([^/]+)(/allocations)?', path)
        if m:
            rp = self.get('resource_providers', m.group(1))
            if rp is None:
                raise placement_error(
                    404,
                    'placement.undefined_code',
                    f'No resource provider with uuid {m.group(1)} found',
                )
            if m.group(2):
                return 200, {
                    'resource_provider_generation': rp['generation'],
                    'allocations': {
                        c['id']: {'resources': c['allocations'][rp['uuid']]}
                        for c in self.all('consumers')
                        if rp['uuid'] in c['allocations']
                    },
                }
            if method == 'GET':
                return 200, self._rp_view(rp)
            if method == 'DELETE':
                return self._delete_provider(rp)
        m = re.fullmatch(r'/allocations/([^/]+)', path)
        if m:
            return self._allocations(method, m.group(1), body)
        raise placement_error(404, 'placement.undefined_code', 'no route')

    def _rp_view(self, rp):
        return {
            k: rp[k]
            for k in (
                'uuid',
                'name',
                'generation',
                'parent_provider_uuid',
                'root_provider_uuid',
            )
        }

    def _delete_provider(self, rp):
        if any(
            p['parent_provider_uuid'] == rp['uuid']
            for p in self.all('resource_providers')
        ):
            raise placement_error(
                409,
                'placement.resource_provider.cannot_delete_parent',
                f'Unable to delete parent resource provider {rp["uuid"]}: '
                f'It has child resource providers.',
            )
        if any(rp['uuid'] in c['allocations'] for c in self.all('consumers')):
            raise placement_error(
                409,
                'placement.resource_provider.inuse',
                f'Unable to delete resource provider {rp["uuid"]}: '
                f'Resource provider has allocations.',
            )
        self._remove('resource_providers', rp['uuid'])
        if rp['uuid'] in self.respawn:
            self.add('resource_providers', **dict(rp, generation=0))
        return 204, None

    def _allocations(self, method, consumer, body):
        entry = self.get('consumers', consumer)
        if method == 'GET':
            if entry is None:
                return 200, {'allocations': {}}
            return 200, {
                'allocations': {
                    rp: {
                        'resources': res,
                        'generation': self.get('resource_providers', rp)[
                            'generation'
                        ],
                    }
                    for rp, res in entry['allocations'].items()
                },
                'consumer_generation': entry['generation'],
                'project_id': entry['project_id'],
                'user_id': entry['user_id'],
            }
        if method == 'DELETE':
            if entry is None:
                raise placement_error(
                    404,
                    'placement.undefined_code',
                    f'No allocations for consumer {consumer}',
                )
            self._remove('consumers', consumer)
            return 204, None
        for write in self._next_concurrent_write(consumer):
            self.allocate(consumer, write or {})
            entry = self.get('consumers', consumer)
        expected = entry['generation'] if entry else None
        if body.get('consumer_generation') != expected:
            raise placement_error(
                409,
                'placement.concurrent_update',
                f'consumer generation conflict - expected {expected} but '
                f'got {body.get("consumer_generation")}',
            )
        for rp in body['allocations']:
            if self.get('resource_providers', rp) is None:
                raise placement_error(
                    400,
                    'placement.undefined_code',
                    f'Unknown resource provider {rp}',
                )
        if not body['allocations']:
            self._remove('consumers', consumer)
            return 204, None
        entry = entry or self.add(
            'consumers',
            id=consumer,
            generation=0,
            project_id=body['project_id'],
            user_id=body['user_id'],
        )
        entry['allocations'] = {
            rp: a['resources'] for rp, a in body['allocations'].items()
        }
        entry['generation'] += 1
        return 204, None

    def _next_concurrent_write(self, consumer):
        writes = self.concurrent_writes.get(consumer)
        return [writes.pop(0)] if writes else []

    # -- nova --------------------------------------------------------------

    def _compute(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'version': {
                    'id': 'v2.1',
                    'status': 'CURRENT',
                    'min_version': '2.1',
                    'version': self.nova_max_version,
                    'links': [
                        {'rel': 'self', 'href': ENDPOINTS['compute'] + '/'}
                    ],
                }
            }
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
                    'href': f'{ENDPOINTS["compute"]}{path}'
                    f'?limit={limit}&marker={page[-1][marker_key]}',
                }
            ]
        return out

    def _migration_view(self, m):
        view = {k: v for k, v in m.items() if k != 'number'}
        view.update(id=m['number'], uuid=m['id'])
        return view

    def _delete_service(self, service_id):
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


def evacuation(cloud):
    """Scenario A of the notes: vm1 evacuated from compute-a (stopped and
    forced down) to compute-b, its allocation on compute-a left behind."""
    a = cloud.compute('compute-a')
    b = cloud.compute('compute-b', state='up', forced_down=False)
    vm = cloud.server('vm1', 'compute-b')
    rp_a, rp_b = cloud.node_of('compute-a'), cloud.node_of('compute-b')
    cloud.allocate(vm['id'], {rp_a: {'VCPU': 1, 'MEMORY_MB': 512}})
    moved = cloud.migration(vm, 'compute-a', 'compute-b')
    return SimpleNamespace(
        a=a, b=b, vm=vm, rp_a=rp_a, rp_b=rp_b, evacuation=moved
    )
