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

"""The simulated cloud: the unit tests' stateful fakes (every service, two
regions), with what the simulation adds to watch the tool and the world.

- a ledger of every resource that leaves the cloud, with its owner at that
  moment and the request that made it leave (the tool's DELETE, a
  service's own cascade behind it, or another actor);
- hooks: other actors' actions, fired when a request matches (before it is
  answered, or after), as a user or an operator acting while the tool works;
- a kill: from the k-th change the tool asks for on, every request fails as
  a dead process's would never arrive, and the run is then made again.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import re
import threading
from typing import Any

import requests

from tests.unit.fakes.cloud import _owner
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.scoped import ScopedCloud, ScopedTokens

#: the fakes' IDs (``new_id``: 32 hex digits, after a prefix) and UUIDs
_ID = re.compile(
    r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
    r'|[0-9a-f]{32}'
)
#: what changes the world: the kill counts these
CHANGES = ('POST', 'PUT', 'PATCH', 'DELETE')


@dataclasses.dataclass(frozen=True)
class Removal:
    """A resource that left the cloud."""

    region: str
    collection: str
    id: str
    #: its owner at the moment it left
    owner: str | None
    #: the request being answered then (METHOD path), '' for an actor's
    request: str
    #: who made it leave: 'tool' or an actor's name
    by: str
    #: the owners of what used it at that moment (``users``)
    users: tuple[str, ...] = ()


@dataclasses.dataclass
class Hook:
    """Another actor's action, fired once when a request matches."""

    name: str
    method: str
    #: a regex searched in the request's path and query
    pattern: str
    action: Callable[[SimCloud], Any]
    #: 'before' the request is answered, or 'after'
    when: str = 'after'
    #: the status the answer must have for an 'after' hook (None: any)
    status: int | None = None
    fired: bool = False


class Killed(requests.exceptions.ConnectionError):
    """The tool's process is gone: nothing it sends arrives."""


def _mentions(value, id_) -> bool:
    if isinstance(value, dict):
        return any(_mentions(v, id_) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, id_) for v in value)
    return value == id_


def users(cloud, collection: str, obj: dict) -> set[str]:
    """The owners of what uses ``obj`` (its own owner left out): whoever
    names it (a server its volume, a port its network and subnet, a rule
    its remote group, a floating IP its port), whoever it serves (a port
    plugged into a server, a volume attached to one), and whoever's
    traffic a router carries (its interfaces' subnets' other ports)."""
    own = owner_of(collection, obj)
    found = set()
    for coll, items in cloud.db.items():
        for other in items.values():
            if other is not obj and _mentions(other, obj['id']):
                found.add(owner_of(coll, other))
    servers = cloud.db.get('servers', {})
    if collection == 'ports' and obj.get('device_id') in servers:
        found.add(owner_of('servers', servers[obj['device_id']]))
    for attachment in obj.get('attachments') or ():
        server = servers.get(attachment.get('server_id'))
        if server is not None:
            found.add(owner_of('servers', server))
    if collection == 'routers':
        interfaces = [
            p for p in cloud.all('ports') if p.get('device_id') == obj['id']
        ]
    elif str(obj.get('device_owner', '')).startswith('network:router_'):
        interfaces = [obj]
    else:
        interfaces = []
    subnets = {
        ip.get('subnet_id')
        for p in interfaces
        for ip in p.get('fixed_ips') or ()
    }
    for port in cloud.all('ports'):
        if any(
            ip.get('subnet_id') in subnets
            for ip in port.get('fixed_ips') or ()
        ):
            found.add(owner_of('ports', port))
    found.discard(own)
    found.discard(None)
    return found


def owner_of(collection: str, obj: dict) -> str | None:
    """Whose the resource is, as the services say it."""
    if collection == 'projects':
        return obj['id']
    if collection == 'containers':
        # Swift: the account is the owner (``AUTH_<project>/<name>``)
        return obj['id'].split('/')[0].removeprefix('AUTH_')
    return _owner(obj)


class SimCloud(ServicesCloud):
    """Every fake service, watched."""

    # the services' pages, small: every listing of more than a few is
    # paged, as a large project's is (Neutron with a
    # pagination_max_limit, Cinder's osapi_max_limit, Glance's
    # limit_param_default)
    neutron_max_limit = 4
    cinder_max_limit = 3
    glance_page = 3

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ledger: list[Removal] = []
        self.hooks: list[Hook] = []
        #: the tool's changes from which on it is dead (None: never)
        self.kill_at: int | None = None
        self.tool_changes = 0
        self.killed = False
        #: every request the tool made, in order, with its answer's status
        #: (the primary's: every region's): what a replay must repeat
        self.journal: list[str] = []
        #: the actor acting now (its removals are not the tool's)
        self._actor = threading.local()
        self._hooks_lock = threading.RLock()
        #: the region a fake of this cloud serves (add_region sets it)
        self.region = 'RegionOne'
        #: the cloud whose hooks, kill and count every region shares
        self.primary = self

    # -- the ledger --------------------------------------------------------

    def _remove(self, collection, id_):
        obj = self.get(collection, id_)
        if obj is not None:
            request = getattr(self._request, 'line', '')
            self.ledger.append(
                Removal(
                    region=self.region,
                    collection=collection,
                    id=id_,
                    owner=owner_of(collection, obj),
                    request=request,
                    by=getattr(self._actor, 'name', '') or 'tool',
                    users=tuple(sorted(users(self, collection, obj))),
                )
            )
        super()._remove(collection, id_)

    def history(self) -> list[str]:
        """The journal and the ledger, the IDs numbered in the order they
        first appear (the fakes' IDs count on across scenarios): two plays
        of one scenario have the same history when they went the same
        way."""
        names: dict[str, str] = {}

        def named(match):
            return names.setdefault(match.group(0), f'<{len(names)}>')

        lines = [
            *self.primary.journal,
            *(
                f'{r.by} removed {r.collection} {r.id} of {r.owner} in '
                f'{r.region} ({r.request}; used by {r.users})'
                for r in self.primary.removals()
            ),
        ]
        return [_ID.sub(named, line) for line in lines]

    def regions(self) -> list[SimCloud]:
        """This cloud and the clouds of its other regions."""
        return [self, *getattr(self, 'other_regions', [])]

    def removals(self) -> list[Removal]:
        return [r for c in self.regions() for r in c.ledger]

    # -- other actors ------------------------------------------------------

    def act(self, name: str, action: Callable[[SimCloud], Any]) -> Any:
        """Do ``action`` as the actor ``name``: what it removes is the
        actor's, not the tool's."""
        previous = getattr(self._actor, 'name', '')
        self._actor.name = name
        try:
            return action(self)
        finally:
            self._actor.name = previous

    def _fire(self, method, url, when, status=None):
        with self._hooks_lock:
            due = [
                h
                for h in self.hooks
                if not h.fired
                and h.when == when
                and h.method in (method, '*')
                and re.search(h.pattern, url)
                and (h.status is None or status is None or h.status == status)
            ]
            for hook in due:
                hook.fired = True
                self.act(hook.name, hook.action)

    # -- the kill ----------------------------------------------------------

    def revive(self):
        """The tool runs again (a re-run after the kill)."""
        self.killed = False
        self.kill_at = None

    def _dispatch(self, service, base):
        respond = super()._dispatch(service, base)

        def watched(request, context):
            root = self.primary
            if root.killed:
                raise Killed(f'killed before {request.method} {request.url}')
            url = request.path_url
            self._request.line = f'{request.method} {url}'
            root._fire(request.method, url, 'before')
            body = respond(request, context)
            root._fire(request.method, url, 'after', context.status_code)
            root.journal.append(
                f'{self.region} {request.method} {url} {context.status_code}'
            )
            if request.method in CHANGES and not url.endswith('/auth/tokens'):
                root.tool_changes += 1
                if root.kill_at is not None and (
                    root.tool_changes >= root.kill_at
                ):
                    root.killed = True
            return body

        return watched

    def add_region(self, name, services, *, shared=()):
        other = super().add_region(name, services, shared=shared)
        other.region = name
        other.primary = self
        return other


class ScopedSimCloud(ScopedTokens, SimCloud):
    """The services whose fakes know the tokens of a project's scope that
    the cascade without admin works through (ScopedCloud's: Keystone,
    Nova, Cinder, Glance, Neutron), watched."""

    #: what the features may make in services this cloud has not: no
    #: run sees them (invariant 2 leaves them out)
    UNSERVED = frozenset(
        {
            'zones',
            'zone_transfer_requests',
            'shares',
            'share_transfers',
            'containers',
            'stacks',
            'stack_resources',
            'clusters',
            'cluster_templates',
        }
    )

    def __init__(self, services=None, **kwargs):
        super().__init__(services or ScopedCloud.endpoints, **kwargs)
