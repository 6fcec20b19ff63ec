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

"""Placement's calls for ``compute service delete --purge-allocations``,
the microversions the purge pins in Placement and nova, what must hold
in Placement right before nova deletes a service, and nova's switch that
disables a compute service while the purge runs.

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
from osc_cascade.engine.errors import CascadeError

#: consumer generations (1.28); error codes (1.23); the ``required`` trait
#: filter of the provider list (1.18); in_tree and root/parent provider
#: UUIDs (1.14); traits (1.6)
PLACEMENT_VERSION = '1.28'
#: service and hypervisor UUIDs (2.53), migration UUIDs (2.59), instance
#: actions of deleted instances (2.21)
NOVA_VERSION = '2.59'
#: the os-traits namespace of the traits that name who created a provider
#: (os-traits 2.8.0 added OWNER_CYBORG and OWNER_NOVA); nova sets
#: OWNER_NOVA on every provider it creates from nova 34 (compute service
#: version 73), and nova's own service delete removes the node's whole tree
#: whoever owns it
OWNER_PREFIX = 'OWNER_'
OWNER_NOVA = 'OWNER_NOVA'
#: Placement's code for a generation conflict: another writer changed the
#: consumer (or a provider) since it was read
CONCURRENT_UPDATE = 'placement.concurrent_update'


def call(conn: Any, method: str, path: str, body: dict | None = None) -> dict:
    """One Placement call; an error answer raises the SDK's exception."""
    # raw: at PLACEMENT_VERSION whatever the SDK would negotiate, and for
    # allocations and consumer generations, which the SDK has no calls for
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


def set_service_status(
    conn: Any, service_id: str, status: str, reason: str | None = None
) -> dict[str, Any]:
    """Enable or disable a compute service (by UUID: 2.53 or later,
    whatever ``--os-compute-api-version`` says); ``reason`` only with
    ``disabled`` (nova clears it on enabling). The service as nova now
    has it."""
    # raw: the SDK's enable_service and disable_service send the actions
    # nova removed at 2.53 (PUT /os-services/enable, host and binary), and
    # its update_service takes --os-compute-api-version's microversion first
    body: dict[str, Any] = {'status': status}
    if reason is not None:
        body['disabled_reason'] = reason
    return request(
        conn.compute,
        'PUT',
        f'/os-services/{service_id}',
        json=body,
        microversion=NOVA_VERSION,
    ).json()['service']


def list_providers(conn: Any) -> list[dict]:
    """Every resource provider, in one call (Placement does not page)."""
    return call(conn, 'GET', '/resource_providers')['resource_providers']


def owner_traits(conn: Any) -> list[str]:
    """The OWNER_* traits Placement knows, in one call: none with an
    os-traits older than 2.8, and then no provider has one."""
    return call(conn, 'GET', f'/traits?name=startswith:{OWNER_PREFIX}')[
        'traits'
    ]


def providers_with(conn: Any, trait: str) -> list[str]:
    """The UUIDs of every provider that carries ``trait``, in one call
    (whatever the number of providers)."""
    return [
        p['uuid']
        for p in call(conn, 'GET', f'/resource_providers?required={trait}')[
            'resource_providers'
        ]
    ]


def allocations_on(conn: Any, provider: str) -> dict[str, Any]:
    """The consumers with allocations on one provider, by consumer UUID;
    NotFoundException if there is no such provider."""
    return call(conn, 'GET', f'/resource_providers/{provider}/allocations')[
        'allocations'
    ]


def check_only_bare_nodes(
    conn: Any, host: str, nodes: dict[str, str], roots: list[str]
) -> None:
    """What must hold right before nova deletes the service of ``host``:
    the trees of ``roots`` keep only the providers of its ``nodes`` (UUID:
    name), each without allocations.

    nova ignores Placement's 409 for a provider that still has allocations
    and deletes the service anyway, orphaning it; and it answers 500 when a
    node has no provider at all, so a missing one is created empty for nova
    to delete."""
    trees = set(roots)
    left = [
        p
        for p in list_providers(conn)
        if p['root_provider_uuid'] in trees and p['uuid'] not in nodes
    ]
    if left:
        raise CascadeError(
            'resource provider(s) '
            + ', '.join(f'{p["name"]} ({p["uuid"]})' for p in left)
            + f' exist after their delete or appeared since the plan: '
            f'something creates them (is nova-compute on {host} '
            f'still running? Stop it first), so the service was not '
            f'deleted'
        )
    for uuid, name in nodes.items():
        try:
            held = allocations_on(conn, uuid)
        except sdk_exc.NotFoundException:
            call(
                conn,
                'POST',
                '/resource_providers',
                {'uuid': uuid, 'name': name},
            )
            continue
        if held:
            raise CascadeError(
                f'resource provider {name} ({uuid}) has allocations '
                f'that appeared after the plan (consumers '
                f'{", ".join(sorted(held))}), so the service was not '
                f'deleted; run the command again'
            )
