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
``{"errors": [...]}`` shape. Calls below microversion 1.28 are refused.

Traits answer as that placement did (with os-traits 3.9.0: its standard
traits include OWNER_CYBORG and OWNER_NOVA): ``GET /traits`` with
``name=startswith:`` or ``name=in:``, ``GET`` and ``PUT
/resource_providers/{uuid}/traits`` (with the provider's generation), and
``GET /resource_providers?required=A,B`` (``!A`` forbids), which is 400
for a trait Placement does not know. Placement offers them from 1.6
(traits) and 1.18 (``required``), so the 1.28 floor covers them."""

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

#: standard traits Placement knows (os-traits syncs them into its database);
#: a few of os-traits 3.9.0's. ``Placement.without_owner_traits``
#: drops the OWNER_* ones: a placement with os-traits before 2.8 had none
STANDARD_TRAITS = frozenset(
    {
        'COMPUTE_NODE',
        'COMPUTE_STATUS_DISABLED',
        'HW_CPU_X86_AVX2',
        'HW_GPU_API_CUDA_V10_0',
        'OWNER_CYBORG',
        'OWNER_NOVA',
    }
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
        #: the traits Placement knows: the standard ones, and CUSTOM_* ones
        #: as they are created
        self.known_traits: set[str] = set(STANDARD_TRAITS)

    def without_owner_traits(self) -> None:
        """A placement whose os-traits predates OWNER_* (before 2.8)."""
        self.known_traits = {
            t for t in self.known_traits if not t.startswith('OWNER_')
        }

    def tag(self, provider, *traits) -> dict:
        """Add traits to a provider, as a client's PUT of its traits does
        (a CUSTOM_* trait is created first, as ``PUT /traits/{name}``)."""
        rp = self.get('resource_providers', provider)
        for trait in traits:
            if trait.startswith('CUSTOM_'):
                self.known_traits.add(trait)
            assert trait in self.known_traits, f'fake: no trait {trait}'
        rp['traits'] = sorted(set(rp['traits']) | set(traits))
        rp['generation'] += 1
        return rp

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
            traits=[],
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
            required, forbidden = self._required(query.get('required'))
            items = [
                self._rp_view(p)
                for p in self.all('resource_providers')
                if query.get('in_tree') in (None, p['root_provider_uuid'])
                and required <= set(p['traits'])
                and not forbidden & set(p['traits'])
            ]
            return 200, {'resource_providers': items}
        if path == '/traits' and method == 'GET':
            return 200, {'traits': self._traits_named(query.get('name'))}
        m = re.fullmatch(r'/resource_providers/([^/]+)/traits', path)
        if m:
            return self._provider_traits(method, m.group(1), body)
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

    def _required(self, value):
        """``required=A,!B``: the traits required and forbidden; 400 for
        one Placement does not know, as the real one answers."""
        names = [t.strip() for t in value.split(',')] if value else []
        required = {t for t in names if not t.startswith('!')}
        forbidden = {t[1:] for t in names if t.startswith('!')}
        unknown = sorted((required | forbidden) - self.known_traits)
        if unknown:
            raise placement_error(
                400,
                'placement.undefined_code',
                f'Invalid trait(s) in "required" parameter: No such '
                f'trait(s): {", ".join(unknown)}.',
            )
        return required, forbidden

    def _traits_named(self, name):
        """``GET /traits``: all, ``name=startswith:P`` or ``name=in:A,B``."""
        known = sorted(self.known_traits)
        if not name:
            return known
        if name.startswith('startswith:'):
            prefix = name[len('startswith:') :]
            return [t for t in known if t.startswith(prefix)]
        if name.startswith('in:'):
            wanted = set(name[len('in:') :].split(','))
            return [t for t in known if t in wanted]
        raise placement_error(
            400,
            'placement.undefined_code',
            f"Badly formatted name parameter. Expected name query string "
            f"parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. "
            f"Got: \"{name}\"",
        )

    def _provider_traits(self, method, uuid, body):
        rp = self.get('resource_providers', uuid)
        if rp is None:
            raise placement_error(
                404,
                'placement.undefined_code',
                f'No resource provider with uuid {uuid} found',
            )
        if method == 'PUT':
            if body.get('resource_provider_generation') != rp['generation']:
                raise placement_error(
                    409,
                    'placement.concurrent_update',
                    f'resource provider generation conflict - expected '
                    f'{rp["generation"]} but got '
                    f'{body.get("resource_provider_generation")}',
                )
            unknown = sorted(set(body['traits']) - self.known_traits)
            if unknown:
                raise placement_error(
                    400,
                    'placement.undefined_code',
                    f'No such trait(s): {", ".join(unknown)}',
                )
            rp['traits'] = sorted(set(body['traits']))
            rp['generation'] += 1
        elif method != 'GET':
            raise placement_error(404, 'placement.undefined_code', 'no route')
        return 200, {
            'traits': list(rp['traits']),
            'resource_provider_generation': rp['generation'],
        }

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
