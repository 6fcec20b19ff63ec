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

"""Placement, answering the way the minicloud's placement 16.0.0 did
(shared notes, minicloud-compute-placement.md sections 5 and 9, and
anchors.md section 4): it deletes a provider with 409
``placement.resource_provider.cannot_delete_parent`` while it has children
and ``placement.resource_provider.inuse`` while it has allocations, a PUT of
allocations with a stale consumer generation is 409
``placement.concurrent_update``, and error bodies have Placement's
``{"errors": [...]}`` shape. Calls below microversion 1.28 are refused."""

from __future__ import annotations

import re

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    ADMIN_USER,
    PLACEMENT,
    Conflict,
    new_uuid,
    versions,
)


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


class Placement:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: consumer -> writes another client makes right before the next
        #: PUTs of its allocations (each a dict of provider -> resources
        #: added, or None for a write that only bumps the generation)
        self.concurrent_writes: dict[str, list] = {}
        #: providers that a running nova-compute re-creates after a delete
        self.respawn: set[str] = set()

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

    def allocations_of(self, consumer) -> dict:
        entry = self.get('consumers', consumer)
        return dict(entry['allocations']) if entry else {}

    def placement_versions(self) -> list[str]:
        return [
            r.headers.get('OpenStack-API-Version', '')
            for r in self.mocker.request_history
            if r.url.startswith(PLACEMENT) and r.path not in ('', '/')
        ]

    def _placement(self, method, path, query, body):
        if path in ('', '/'):
            return 200, versions(
                'v1.0', '', max_version='1.39', min_version='1.0'
            )
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
