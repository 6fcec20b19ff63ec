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

"""What the fake services share: the admin's ids, the services' URLs, new
ids, the region, the ids of plan steps, and the exceptions a handler raises
to answer with an error."""

from __future__ import annotations

import itertools
from urllib import parse
import uuid

from osc_cascade.engine.resource import ResourceRef, Step

ADMIN_PROJECT = 'a0000000000000000000000000000000'
ADMIN_USER = 'u0000000000000000000000000000000'
AUTH_URL = 'http://keystone.test/v3'
HEAT = 'http://heat.test'
PLACEMENT = 'http://placement.test'
SWIFT = 'http://swift.test'
#: the endpoint of every service there is a fake of
ENDPOINTS = {
    'identity': AUTH_URL,
    'compute': 'http://nova.test/v2.1',
    'network': 'http://neutron.test',
    'block-storage': 'http://cinder.test/v3',
    'image': 'http://glance.test',
    'orchestration': f'{HEAT}/v1/{ADMIN_PROJECT}',
    'container-infra': 'http://magnum.test/v1',
    'data-processing': 'http://sahara.test/v2',
    'load-balancer': 'http://octavia.test',
    'object-store': f'{SWIFT}/v1/AUTH_{ADMIN_PROJECT}',
    'dns': 'http://designate.test',
    'key-manager': 'http://barbican.test',
    'shared-file-system': 'http://manila.test/v2',
    'placement': PLACEMENT,
    'database': f'http://trove.test/v1.0/{ADMIN_PROJECT}',
    'alarming': 'http://aodh.test',
    'workflow': 'http://mistral.test/v2',
    'baremetal': 'http://ironic.test',
}
#: the catalog region of every fake service but Keystone's (global)
REGION = 'RegionOne'
_ids = itertools.count(1)


def region_of(kind: str) -> str:
    """The fake cloud's region of a kind's resources: Keystone's (the
    projects, credentials) are global, in no region."""
    return '' if kind.startswith('identity.') else REGION


def step_id(
    action: str, kind: str, id_: str, region: str | None = None, **params
) -> str:
    """The id of a plan step, as ``Step.id`` makes it:
    ``action:kind:id@region[params]``, by default in the kind's region of
    the fake cloud."""
    ref = ResourceRef(
        kind, id_, region=region_of(kind) if region is None else region
    )
    return Step(action, ref, params).id


def new_id(prefix: str = '') -> str:
    return (prefix + uuid.UUID(int=next(_ids)).hex)[-32:]


def new_uuid() -> str:
    return str(uuid.uuid4())


class Conflict(Exception):
    def __init__(self, status: int, body):
        self.status = status
        self.body = body


class Redirect(Exception):
    def __init__(self, location):
        self.location = location


def matches(obj, query, keys, aliases=None):
    """Whether ``obj`` has the values ``query`` asks for in ``keys``."""
    aliases = aliases or {}
    for key in keys:
        if key not in query:
            continue
        value = obj.get(key, obj.get(aliases.get(key, ''), None))
        if str(value) != query[key] and value != query[key]:
            return False
    return True


def catalog(*services: str) -> dict[str, str]:
    """The catalog's endpoints of ``services``."""
    return {service: ENDPOINTS[service] for service in services}


def versions(id_: str, href: str, **fields) -> dict:
    """A service's version document that lists one version, the current
    one (``fields`` are its microversions)."""
    return {
        'versions': [
            {
                'id': id_,
                'status': 'CURRENT',
                **fields,
                'links': [{'rel': 'self', 'href': href}],
            }
        ]
    }


def paged_filters(query) -> str:
    """The query's filters (not its paging) to add to a next link that
    keeps them (Neutron's, Cinder's: the request's own, a filter given
    several times repeated): ``&k=v...``, or ''. ``query``: a value or a
    list of values by key."""
    kept = {k: v for k, v in query.items() if k not in ('limit', 'marker')}
    encoded = parse.urlencode(sorted(kept.items()), doseq=True)
    return '&' + encoded if encoded else ''


def page(items, query, size, key='id', url='', offset=False):
    """One page of ``items`` as a service cuts a list (at most ``size``,
    or the query's smaller ``limit``), after the query's ``marker`` (by
    ``key``) or from its ``offset``; with the URL of the next page, which
    carries only the paging (as Octavia's and Magnum's links do), or ''
    after the last."""
    limit = min(int(query.get('limit') or size), size)
    ordered = sorted(items, key=lambda i: str(i[key]))
    if offset:
        start = int(query.get('offset') or 0)
    else:
        marker = query.get('marker')
        start = next(
            (n + 1 for n, i in enumerate(ordered) if str(i[key]) == marker),
            0,
        )
    chunk = ordered[start : start + limit]
    if start + limit >= len(ordered):
        return chunk, ''
    paging = (
        f'offset={start + limit}' if offset else f'marker={chunk[-1][key]}'
    )
    return chunk, f'{url}?limit={limit}&{paging}'
