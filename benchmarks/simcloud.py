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

"""A simulated cloud for benchmarks: the unit tests' stateful fake services
(tests/unit/fakes) answering over real HTTP on loopback, with per-request
latency, asynchronous deletes that take (simulated) time, and a number of
workers per service.

    python -m benchmarks.simcloud --latency-ms 50 --state-file S.json

Keystone, Nova, Cinder, Neutron, Glance, Heat, Octavia and Swift each
listen on a port of their own (a client pools its connections per
service, as against a real cloud). Every request waits the latency while
it holds one of its service's workers (``--workers``; by default so many
that the cloud is never the bottleneck), then the fake service answers
it, with its refusals (409 in use, 400 invalid state). The deletes of
servers, volumes, snapshots, backups, stacks and load balancers go on for
the seconds of ``DELETE_SECONDS`` (times ``--delete-scale``) and then
finish the way the fake finishes them.

The fake's rules scan a whole collection (the ports of a network, the
snapshots of a volume), which at 100,000 resources would make the
simulator, not the client, what is measured. So the state is kept in
shards of the fake cloud: one for Keystone, quotas and the external
network, and one per block of 100 resources of a project (what refers to
each other lives in one block). A request that names a resource goes to
its shard (an index of every id, and of stack and container names); a
listing goes to the shards of the project it asks for (the query's
project, the account in the path, or the token's project when the token
is scoped to another project than the admin's, as real services scope
listings), and their answers are put together.

A control port answers ``GET /stats``, ``POST /seed`` (``{"n": N,
"twins": 2}``: identical projects of N resources in benchmarks.generate's
mix), ``GET /owned?project=ID`` (what the project still owns, by kind)
and ``POST /stop``."""

from __future__ import annotations

import argparse
import collections
import http.server
import itertools
import json
import os
import re
import resource
import socketserver
import sys
import threading
import time
from typing import Any
from urllib import parse

from keystoneauth1 import fixture as ks_fixture
from requests.structures import CaseInsensitiveDict

from benchmarks import generate
from tests.unit import scenarios
from tests.unit.fakes import common
from tests.unit.fakes.clouds import UsersCloud
from tests.unit.fakes.common import ADMIN_PROJECT, ADMIN_USER, catalog

SERVICES = (
    'identity',
    'compute',
    'network',
    'block-storage',
    'image',
    'orchestration',
    'load-balancer',
    'object-store',
)
#: the fake's URL of each service -> the part of the path that is its
#: endpoint's (Heat's and Swift's endpoints add the project)
FAKE_BASES = {
    'identity': ('http://keystone.test', '/v3'),
    'compute': ('http://nova.test', '/v2.1'),
    'network': ('http://neutron.test', ''),
    'block-storage': ('http://cinder.test', '/v3'),
    'image': ('http://glance.test', ''),
    'orchestration': ('http://heat.test', ''),
    'load-balancer': ('http://octavia.test', ''),
    'object-store': ('http://swift.test', ''),
}
#: seconds a delete goes on before the resource is gone, per collection:
#: the mean seconds of the step on the minicloud at N=100 (both repeats of
#: benchmarks/results/results.json, 'slowest_kinds': the delete call and
#: the polls until it was gone, on a cloud that was not yet queueing);
#: assumptions, which ``--delete-scale`` multiplies
DELETE_SECONDS = {
    'servers': 9.79,
    'volumes': 3.23,
    'snapshots': 0.45,
    'backups': 3.58,
    'stacks': 10.02,
    'loadbalancers': 1.54,
}
#: listings answered by every shard of the project (GET only)
LISTINGS = {
    'compute': re.compile(r'/servers(/detail)?|/os-server-groups'),
    'network': re.compile(r'/v2\.0/(?!extensions$|quotas)[a-z_-]+'),
    'block-storage': re.compile(r'/(volumes|snapshots|backups)(/detail)?'),
    'image': re.compile(r'/v2/images'),
    'orchestration': re.compile(r'/v1/[^/]+/stacks'),
    'load-balancer': re.compile(r'(/v2(\.0)?)?/lbaas/(?!quotas)[a-z0-9]+'),
    'object-store': re.compile(r'/v1/AUTH_[^/]+/?'),
}
#: the query keys that name a project: a listing with one reads that
#: project's shards alone (Heat's is ``tenant``)
PROJECT_QUERY_KEYS = ('project_id', 'tenant_id', 'owner', 'project', 'tenant')
#: the catalog's regions (``--regions`` of them): every service but
#: Keystone (one, the first's, listed in each) has its endpoints in each
REGIONS = ('RegionOne', 'RegionTwo')
#: a port for each service: enough workers that no service is a bottleneck
DEFAULT_WORKERS = 1000


class Shard(UsersCloud):
    """The fake cloud with the services of the simulated catalog, whose
    asynchronous deletes take time rather than a number of polls; its
    Keystone has domains, users and groups, its Nova users' keypairs
    (benchmarks.simdomain)."""

    endpoints = catalog(*SERVICES)
    #: collection -> seconds a delete goes on (the simulator's)
    delete_seconds: dict[str, float] = DELETE_SECONDS

    def __init__(self):
        super().__init__()
        # nobody reads the logs of the requests a test would check
        self.requests = collections.deque(maxlen=0)
        self.changes = collections.deque(maxlen=0)

    def _due(self, collection: str) -> float:
        return time.monotonic() + self.delete_seconds.get(collection, 0.0)

    def _start_delete(self, collection, id_):
        self._deleting[(collection, id_)] = self._due(collection)

    def _async_get(self, collection, id_, status_while_deleting):
        obj = self.get(collection, id_)
        if obj is None:
            return None
        due = self._deleting.get((collection, id_))
        if due is not None:
            if time.monotonic() >= due:
                self._finish_delete(collection, id_)
                return None
            obj['status'] = status_while_deleting
        return obj

    def delete_stack(self, stack):
        if stack['stack_status'] != 'DELETE_IN_PROGRESS':
            stack['due'] = self._due('stacks')
        super().delete_stack(stack)

    def _poll_stack(self, id_):
        stack = self.get('stacks', id_)
        if stack is not None and 'due' in stack:
            stack['polls_left'] = int(time.monotonic() < stack['due'])
        return super()._poll_stack(id_)

    def _delete_lb(self, lb, query):
        answer = super()._delete_lb(lb, query)
        lb['due'] = self._due('loadbalancers')
        return answer

    def _poll_lb(self, lb_id):
        lb = self.get('loadbalancers', lb_id)
        if lb is not None and 'due' in lb:
            lb['pending_left'] = int(time.monotonic() < lb['due'])
        return super()._poll_lb(lb_id)

    def _network(self, method, path, query, body):
        if path == '/v2.0/service-providers':
            # no VPNaaS (as on the minicloud): project cleanup asks
            return 200, {'service_providers': []}
        return super()._network(method, path, query, body)

    def _cinder_project(self) -> str:
        # Cinder lists a token's own project's without all_tenants (project
        # cleanup's connection is scoped to the project); the simulator's
        # tokens name their project (SimCloud.token)
        token = self.header('X-Auth-Token') or ''
        if token.startswith('sim-'):
            return token.split('-', 2)[2]
        return ADMIN_PROJECT

    def _block_storage(self, method, path, query, body):
        if method == 'GET' and path in ('/volumes', '/snapshots', '/backups'):
            # the short listing (project cleanup's): the detailed one has
            # every field of it
            path += '/detail'
        return super()._block_storage(method, path, query, body)

    def finish_deletes(self) -> None:
        """Finish every delete the cloud accepted, as it would in the end:
        what is left after that is what the tool did not delete."""
        for collection, id_ in list(self._deleting):
            self._finish_delete(collection, id_)
        for stack in list(self.all('stacks')):
            if stack['stack_status'] == 'DELETE_IN_PROGRESS':
                stack['due'] = 0.0
                self._poll_stack(stack['id'])
        for lb in list(self.all('loadbalancers')):
            if lb['provisioning_status'] == 'PENDING_DELETE':
                lb['due'] = 0.0
                self._poll_lb(lb['id'])

    def owned(self, project_id: str) -> collections.Counter:
        self.finish_deletes()
        kinds: collections.Counter = collections.Counter()
        for collection, _ in self.owned_by(project_id):
            kinds[collection] += 1
        for stack in self.all('stacks'):  # Heat's owner key is 'project'
            if stack['project'] == project_id:
                kinds['stacks'] += 1
        for container in self.all('containers'):
            if container['project_id'] == project_id:
                kinds['objects'] += len(container['objects'])
        return kinds


# -- the projects -------------------------------------------------------------


def fill_block(
    shard: Shard, project_id: str, external: dict, tag: str, size: int = 100
):
    """One block of ``size`` (at most 100) resources of
    benchmarks.generate's mix (``generate.mix(size)``), built with the unit
    tests' scenarios."""
    # a kind the mix has none of at this size is absent from it
    counts = collections.Counter(generate.mix(size))
    pid = project_id
    nets = [
        scenarios.network(shard, pid, f'net-{i}', f'10.{i}.0.0/24')
        for i in range(counts['network.network'])
    ]
    groups: list[dict] = []
    rules = counts['network.security_group_rule']
    for i in range(counts['network.security_group']):
        group = scenarios.security_group(shard, pid, f'sg-{i}')
        groups.append(group)
    for i in range(rules):
        # a third of the rules name another group
        remote = groups[(i + 1) % len(groups)] if i % 3 == 0 else None
        rule = shard.add(
            'security_group_rules',
            security_group_id=groups[i % len(groups)]['id'],
            remote_group_id=remote['id'] if remote else None,
            project_id=pid,
            tenant_id=pid,
            direction='ingress',
        )
        groups[i % len(groups)]['security_group_rules'].append(rule)
    routers = []
    for i in range(counts['network.router']):
        router, _iface = scenarios.router(
            shard, pid, nets[i][1], external, f'router-{i}'
        )
        routers.append(router)
    servers = []
    for i in range(counts['compute.server']):
        # behind a router where there is one
        net, subnet = nets[i % (len(routers) or len(nets))]
        servers.append(
            scenarios.server(
                shard, pid, f'vm-{i}', net, subnet, groups[i % len(groups)]
            )
        )
    ports = []
    for i in range(counts['network.port']):
        net, subnet = nets[i % len(nets)]
        ports.append(
            scenarios.port(
                shard,
                pid,
                net,
                subnet,
                f'port-{i}',
                security_groups=[groups[i % len(groups)]['id']],
            )
        )
    for i in range(counts['network.floating_ip']):
        # half on servers' ports (behind a router), half only allocated
        if i % 2 == 0:
            server = servers[i % len(servers)]
            port = next(
                p
                for p in shard.all('ports')
                if p.get('device_id') == server['id']
            )
            router = routers[(i % len(servers)) % len(routers)]
            scenarios.floating_ip(shard, pid, external, router, port)
        else:
            scenarios.floating_ip(shard, pid, external)
    volumes = []
    for i in range(counts['block_storage.volume']):
        # one volume at least stays free, for the snapshots
        attach = (
            servers[i]
            if i % 4 == 0
            and i < len(servers)
            and counts['block_storage.volume'] > 1
            else None
        )
        volumes.append(
            scenarios.volume(shard, pid, f'vol-{i}', attach_to=attach)
        )
    free = [v for v in volumes if v['status'] == 'available']
    for i in range(counts['block_storage.snapshot']):
        scenarios.snapshot(shard, pid, free[i % len(free)], f'snap-{i}')
    for i in range(counts['block_storage.backup']):
        scenarios.backup(shard, pid, free[-1 - i], f'backup-{i}')
    for i in range(counts['image.image']):
        scenarios.image(shard, pid, f'image-{i}')
    for i in range(counts['orchestration.stack']):
        stack = shard.stack(f'stack-{tag}-{i}', pid)
        # the stack's network alone, as generate.STACK_TEMPLATE makes it
        net = shard.add(
            'networks',
            name=f'stack-net-{i}',
            project_id=pid,
            tenant_id=pid,
            shared=False,
            **{'router:external': False},
        )
        shard.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    for _ in range(counts['load_balancer.load_balancer']):
        shard.load_balancer(pid, nets[-1][1])
    containers = counts['object_store.container']
    objects = counts['object_store.object']
    for i in range(containers):
        shard.container(
            pid,
            f'c-{tag}-{i}',
            objects=objects // containers + (i < objects % containers),
        )


# -- the simulator ------------------------------------------------------------


class SimCloud:
    """The shards, the index of what lives where, the tokens, and the
    counters; thread-safe (one lock around the fake state)."""

    def __init__(
        self,
        *,
        latency: float = 0.05,
        workers: int = DEFAULT_WORKERS,
        delete_scale: float = 1.0,
        host: str = '127.0.0.1',
        regions: int = 1,
    ):
        self.latency = latency
        self.workers = workers
        self.host = host
        self.delete_seconds = {
            k: v * delete_scale for k, v in DELETE_SECONDS.items()
        }
        self.delete_scale = delete_scale
        self.lock = threading.Lock()
        self.regions = REGIONS[:regions]
        #: region -> its shard of Keystone (the first's), quotas, keypairs
        #: and its external network
        self.mains: dict[str, Shard] = {}
        self.externals: dict[str, dict] = {}
        for region in self.regions:
            shard = self._shard(region)
            if self.mains:  # one Keystone
                shard.db['projects'] = self.main.db['projects']
            else:
                self.main = shard
            self.mains[region] = shard
            self.externals[region], _ = scenarios.external_network(shard)
        self.external = self.externals[self.regions[0]]
        self.shards: list[Shard] = list(self.mains.values())
        #: project id -> its shards
        self.project_shards: dict[str, list[Shard]] = {}
        #: a resource id, or a stack's or container's name -> its shard
        self.index: dict[str, Shard] = {}
        #: token -> the project it is scoped to
        self.tokens: dict[str, str] = {}
        #: region -> service -> its URL (Keystone's in the first only)
        self.region_urls: dict[str, dict[str, str]] = {
            r: {} for r in self.regions
        }
        self.urls = self.region_urls[self.regions[0]]
        self.slots = {s: threading.BoundedSemaphore(workers) for s in SERVICES}
        self.stats_lock = threading.Lock()
        self.reset_stats()

    # -- state --

    def seed(self, n: int, twins: int = 2, prefix: str = 'sim') -> list[dict]:
        """``twins`` identical projects of ``n`` resources (blocks of 100)."""
        made = []
        with self.lock:
            for t in range(twins):
                name = f'{prefix}-{len(self.project_shards)}-{"ab"[t % 2]}'
                project = scenarios.project(self.main, name)
                pid = project['id']
                shards = []
                for b in range(max(1, n // 100)):
                    shard = self._shard()
                    shard.db['projects'] = self.main.db['projects']
                    fill_block(shard, pid, self.external, f'{name}-{b}')
                    shards.append(shard)
                    self._index(shard)
                self.project_shards[pid] = shards
                self.shards.extend(shards)
                made.append({'id': pid, 'name': name, 'blocks': len(shards)})
        return made

    def _shard(self, region: str = REGIONS[0]) -> Shard:
        shard = Shard()
        shard.delete_seconds = self.delete_seconds
        shard.region = region
        return shard

    def _index(self, shard: Shard) -> None:
        for collection, items in shard.db.items():
            if collection == 'projects':
                continue
            for id_, obj in items.items():
                self.index[id_] = shard
                if collection == 'stacks':
                    self.index[obj['stack_name']] = shard
                elif collection == 'containers':
                    self.index[obj['name']] = shard

    def owned(self, project_id: str) -> dict[str, int]:
        kinds: collections.Counter = collections.Counter()
        with self.lock:
            for shard in [
                *self.mains.values(),
                *self.project_shards.get(project_id, []),
            ]:
                kinds.update(shard.owned(project_id))
            if self.main.exists('projects', project_id):
                kinds['projects'] += 1
        return dict(sorted(kinds.items()))

    # -- tokens --

    def token(self, body: dict) -> tuple[str, dict]:
        scope = (body.get('auth') or {}).get('scope') or {}
        project = scope.get('project') or {}
        pid = project.get('id')
        if pid is None and project.get('name'):
            with self.lock:
                pid = next(
                    (
                        p['id']
                        for p in self.main.all('projects')
                        if p['name'] == project['name']
                    ),
                    None,
                )
        pid = pid or ADMIN_PROJECT
        tok = ks_fixture.V3Token(
            project_id=pid,
            project_name=pid,
            user_id=ADMIN_USER,
            user_name='admin',
            project_domain_id='default',
            user_domain_id='default',
        )
        tok.add_role(name='admin')
        for service in SERVICES:
            entry = tok.add_service(service)
            for region, urls in self.region_urls.items():
                # one Keystone, listed in each region (as clouds do)
                url = urls.get(service, self.urls[service])
                if service == 'orchestration':
                    url += f'/v1/{pid}'
                elif service == 'object-store':
                    url += f'/v1/AUTH_{pid}'
                else:
                    url += FAKE_BASES[service][1]
                entry.add_endpoint(interface='public', url=url, region=region)
        token_id = f'sim-{len(self.tokens)}-{pid}'
        with self.lock:
            self.tokens[token_id] = pid
        return token_id, tok

    # -- routing --

    def targets(
        self,
        service: str,
        method: str,
        rest: str,
        query: dict,
        token: str,
        full_query: dict[str, list[str]] | None = None,
        region: str = REGIONS[0],
    ) -> list[Shard]:
        """The shards that answer a request (``rest``: its path after the
        service's base; ``query``: the last value of each key,
        ``full_query``: all of them) to ``region``'s endpoint: its own
        (what another region has, it does not know)."""
        if service == 'identity':
            return [self.main]
        main = self.mains[region]
        for segment in rest.split('/'):
            shard = self.index.get(parse.unquote(segment))
            if shard is not None:
                return [shard if shard.region == region else main]
        if method != 'GET' or not LISTINGS[service].fullmatch(rest):
            return [main]
        # a listing filtered by resources of the projects' blocks (the
        # ports of a network, the rules naming a group): what refers to a
        # resource lives in its block, or in the main shard (the external
        # network's). Not the paging marker: what comes after it is in
        # every block. At N=10,000 this took the shards that answered a
        # cascade's 17,136 requests from 283,444 to 49,695, and the
        # simulator's handlers from 1.20 to 0.38 ms of CPU per request.
        named = {
            self.index.get(part)
            for key, values in (full_query or {}).items()
            if key != 'marker'
            for value in values
            for part in value.split(',')
        } - {None}
        if named:
            return [main, *(s for s in named if s.region == region)]
        project = next(
            (query[k] for k in PROJECT_QUERY_KEYS if query.get(k)), None
        )
        if project is None:
            m = re.match(r'/v1/(?:AUTH_)?([^/]+)', rest)
            if m and service in ('orchestration', 'object-store'):
                project = m.group(1)
        if project in (None, ADMIN_PROJECT):
            scoped = self.tokens.get(token)
            project = scoped if scoped != ADMIN_PROJECT else None
        if project is None:
            return [s for s in self.shards if s.region == region]
        return [
            main,
            *(
                s
                for s in self.project_shards.get(project, [])
                if s.region == region
            ),
        ]

    def reset_stats(self) -> dict:
        with self.stats_lock:
            old = getattr(self, '_stats', None)
            self._stats: dict[str, Any] = {
                'requests': 0,
                'by_service': collections.Counter(),
                'by_region': collections.Counter(),
                'by_method': collections.Counter(),
                'routes': collections.Counter(),
                'statuses': collections.Counter(),
                # the simulator's own CPU seconds in its request threads
                'handler_cpu_s': 0.0,
                'busy': collections.Counter(),
                'busy_max': collections.Counter(),
                'fanout_shards': 0,
                'fanout_routes': collections.Counter(),
                # per request, what its answer took beyond the latency
                'added': [],
                'started': time.monotonic(),
                'cpu_at_start': _process_cpu(),
            }
        return self._snapshot(old) if old else {}

    def stats(self) -> dict:
        with self.stats_lock:
            return self._snapshot(self._stats)

    def _snapshot(self, s: dict) -> dict:
        wall = time.monotonic() - s['started']
        cpu = _process_cpu() - s['cpu_at_start']
        return {
            'requests': s['requests'],
            'by_service': dict(s['by_service']),
            'by_region': dict(s['by_region']),
            'by_method': dict(s['by_method']),
            'routes': dict(s['routes'].most_common()),
            'statuses': dict(s['statuses']),
            'handler_cpu_s': round(s['handler_cpu_s'], 3),
            'handler_cpu_ms_per_request': round(
                1000 * s['handler_cpu_s'] / max(1, s['requests']), 3
            ),
            **_added(s['added']),
            'process_cpu_s': round(cpu, 3),
            'wall_s': round(wall, 3),
            'workers': self.workers,
            'busy_max': dict(s['busy_max']),
            'fanout_shards': s['fanout_shards'],
            'fanout_routes': dict(s['fanout_routes'].most_common(12)),
            'latency': self.latency,
            'delete_scale': self.delete_scale,
            'shards': len(self.shards),
            'peak_rss_mib': round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
            ),
        }

    def _count(self, service, route, status, cpu, fanout, region):
        named = f'{service} {route}'
        with self.stats_lock:
            s = self._stats
            s['requests'] += 1
            s['by_service'][service] += 1
            s['by_region'][region] += 1
            s['by_method'][route.split(' ', 1)[0]] += 1
            s['routes'][named] += 1
            s['statuses'][str(status)] += 1
            s['handler_cpu_s'] += cpu
            s['fanout_shards'] += fanout
            if fanout > 1:
                s['fanout_routes'][named] += fanout

    def added(self, seconds: float) -> None:
        """A request was answered ``seconds`` later than the latency
        alone would have: the simulator's own delay (its lock, its CPU,
        the HTTP server's), which the client's wall time includes."""
        with self.stats_lock:
            self._stats['added'].append(seconds)

    def _busy(self, service, delta):
        with self.stats_lock:
            busy = self._stats['busy']
            busy[service] += delta
            if busy[service] > self._stats['busy_max'][service]:
                self._stats['busy_max'][service] = busy[service]

    # -- answering --

    def answer(self, service, method, url, headers, body, region=REGIONS[0]):
        """(status, headers, body) of one request to ``region``'s
        endpoint, after the latency."""
        with self.slots[service]:
            self._busy(service, 1)
            try:
                time.sleep(self.latency)
                cpu = time.thread_time()
                answer, fanout = self._answer(
                    service, method, url, headers, body, region
                )
                self._count(
                    service,
                    f'{method} {_route(url)}',
                    answer[0],
                    time.thread_time() - cpu,
                    fanout,
                    region,
                )
                return answer
            finally:
                self._busy(service, -1)

    def _answer(self, service, method, url, headers, body, region):
        split = parse.urlsplit(url)
        if service == 'identity' and split.path.rstrip('/').endswith(
            '/auth/tokens'
        ):
            if method == 'POST':
                token_id, tok = self.token(json.loads(body or b'{}'))
                return (
                    201,
                    {
                        'X-Subject-Token': token_id,
                        'Content-Type': 'application/json',
                    },
                    self._rewrite(json.dumps(tok).encode(), region),
                ), 0
            return (200, {'Content-Type': 'application/json'}, b'{}'), 0
        base_path = FAKE_BASES[service][1]
        rest = split.path
        if base_path and rest.startswith(base_path):
            rest = rest[len(base_path) :]
        full_query = parse.parse_qs(split.query)
        query = {k: v[-1] for k, v in full_query.items()}
        token = headers.get('X-Auth-Token', '')
        request = _Request(method, url, split, headers, body)
        if service == 'object-store' and 'bulk-delete' in split.query:
            return self._bulk_delete(request, split, region)
        with self.lock:
            shards = self.targets(
                service, method, rest, query, token, full_query, region
            )
            answers = [
                self._one(shard, service, request, region) for shard in shards
            ]
            # encoded within the lock: a payload holds the shards' objects
            return _merge(answers), len(shards)

    def _bulk_delete(self, request: _Request, split, region):
        """Swift's bulk delete: each shard deletes the objects of its
        containers, and the answer adds up theirs."""
        lines = [x for x in (request.body or b'').decode().split('\n') if x]
        groups: dict[int, tuple[Shard, list[str]]] = {}
        for line in lines:
            container = parse.unquote(line.lstrip('/').partition('/')[0])
            shard = self.index.get(container)
            if shard is None or shard.region != region:
                shard = self.mains[region]
            groups.setdefault(id(shard), (shard, []))[1].append(line)
        total = {'Number Deleted': 0, 'Number Not Found': 0, 'Errors': []}
        status, reply_headers = 200, {'Content-Type': 'application/json'}
        with self.lock:
            for shard, part in groups.values():
                sub = _Request(
                    request.method,
                    request.url,
                    split,
                    request.headers,
                    '\n'.join(part).encode(),
                )
                status, reply_headers, content = self._one(
                    shard, 'object-store', sub, region
                )
                if status != 200:
                    return (status, reply_headers, _encoded(content)), len(
                        groups
                    )
                answer = _decoded(content)
                for key in ('Number Deleted', 'Number Not Found'):
                    total[key] += answer[key]
                total['Errors'] += answer['Errors']
        total['Response Status'] = (
            '400 Bad Request' if total['Errors'] else '200 OK'
        )
        total['Response Body'] = ''
        return (status, reply_headers, json.dumps(total).encode()), len(groups)

    def _one(self, shard: Shard, service: str, request: _Request, region):
        respond = shard.__dict__.get(f'_respond_{service}')
        if respond is None:
            urls = self.region_urls[
                region if service != 'identity' else self.regions[0]
            ]
            respond = shard._dispatch(
                service, urls[service] + FAKE_BASES[service][1], _Payload
            )
            setattr(shard, f'_respond_{service}', respond)
        context = _Context()
        content = respond(request, context)
        return context.status_code, context.headers, content

    def _rewrite(self, content: bytes, region: str = REGIONS[0]) -> bytes:
        """The fake's URLs in an answer, as ``region``'s (Keystone's:
        the first's)."""
        if b'.test' not in content:
            return content
        urls = {**self.urls, **self.region_urls[region]}
        for service, (fake, _) in FAKE_BASES.items():
            content = content.replace(fake.encode(), urls[service].encode())
        return content

    def rewrite_location(self, location: str, region: str = REGIONS[0]) -> str:
        return self._rewrite(location.encode(), region).decode()


class _Request:
    """What the fake's dispatch reads of a requests-mock request."""

    def __init__(self, method, url, split, headers, body):
        self.method = method
        self.url = url
        self.path_url = split.path + (f'?{split.query}' if split.query else '')
        self.headers = headers
        self.body = body or None

    def json(self):
        return json.loads(self.body)


class _Context:
    def __init__(self):
        self.status_code = 200
        self.headers: dict[str, str] = {}


class _Payload:
    """A shard's answer before it is JSON: the shards' answers to one
    request are merged, then encoded once (decoding and encoding each
    shard's took half the simulator's CPU at N=100,000)."""

    __slots__ = ('value',)

    def __init__(self, value: Any):
        self.value = value


def _decoded(content: Any) -> Any:
    if isinstance(content, _Payload):
        return content.value
    return json.loads(content) if content else None


def _encoded(content: Any) -> bytes:
    if isinstance(content, _Payload):
        return json.dumps(content.value).encode()
    return content


def _merge(answers):
    """One answer from the shards' answers to a request: the one that found
    something, or a listing of what they all listed; its content JSON."""
    found = [a for a in answers if a[0] < 400]
    if not found:
        found = answers[:1]
    if len(found) == 1:
        status, headers, content = found[0]
        return status, headers, _encoded(content)
    status, headers, content = found[0]
    payloads = [_decoded(a[2]) for a in found]
    first = payloads[0]
    if isinstance(first, list):
        merged: Any = [x for p in payloads for x in p]
        merged.sort(key=lambda x: x.get('name', ''))
    elif isinstance(first, dict):
        merged = dict(first)
        for key, value in first.items():
            if isinstance(value, list):
                merged[key] = [
                    x for p in payloads for x in (p or {}).get(key, [])
                ]
    else:
        return status, headers, _encoded(content)
    return status, headers, json.dumps(merged).encode()


#: what varies in a path: ids, names of the generated resources
_VARYING = re.compile(
    r'/(?:[0-9a-f]{32}|AUTH_[0-9a-f]+|(?:c|stack|obj)-[^/?]+)'
)


def _route(url: str) -> str:
    """The path of ``url`` without its ids (as tools/cloudproxy counts)."""
    return _VARYING.sub('/{id}', parse.urlsplit(url).path)


def _added(seconds: list[float]) -> dict[str, float]:
    """The simulator's own delay per request, beyond the latency: its
    mean, median and 99th percentile in ms. Whether it keeps up: a
    saturated simulator queues requests behind its lock, and this grows
    to a sizeable part of the latency."""
    if not seconds:
        return {'added_ms_mean': 0.0, 'added_ms_p50': 0.0, 'added_ms_p99': 0.0}
    ordered = sorted(seconds)

    def at(fraction: float) -> float:
        index = min(len(ordered) - 1, int(fraction * len(ordered)))
        return round(1000 * ordered[index], 3)

    return {
        'added_ms_mean': round(1000 * sum(ordered) / len(ordered), 3),
        'added_ms_p50': at(0.5),
        'added_ms_p99': at(0.99),
    }


def _process_cpu() -> float:
    t = os.times()
    return t.user + t.system


# -- HTTP ---------------------------------------------------------------------


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


def _handler(sim: SimCloud, service: str, region: str):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        disable_nagle_algorithm = True

        def log_message(self, *args):  # quiet: every request is counted
            pass

        def _any(self):
            started = time.monotonic()
            try:
                self._answer()
            finally:
                sim.added(time.monotonic() - started - sim.latency)

        def _answer(self):
            length = int(self.headers.get('Content-Length') or 0)
            body = self.rfile.read(length) if length else b''
            headers = CaseInsensitiveDict(self.headers.items())
            url = f'{sim.region_urls[region][service]}{self.path}'
            status, reply_headers, content = sim.answer(
                service, self.command, url, headers, body, region
            )
            content = sim._rewrite(content or b'', region)
            self.send_response(status)
            for name, value in reply_headers.items():
                if name.lower() in ('content-length', 'date'):
                    continue
                if name.lower() == 'location':
                    value = sim.rewrite_location(value, region)
                self.send_header(name, value)
            # send_response wrote the one Date header (a second one made
            # the client's cloud_time a naive datetime)
            self.send_header(
                'Content-Length',
                '0' if self.command == 'HEAD' else str(len(content)),
            )
            self.end_headers()
            if self.command != 'HEAD':
                self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

    return Handler


def _control(sim: SimCloud, stop: threading.Event):
    class Control(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _reply(self, payload):
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            split = parse.urlsplit(self.path)
            query = dict(parse.parse_qsl(split.query))
            if split.path == '/stats':
                self._reply(
                    sim.reset_stats() if query.get('reset') else sim.stats()
                )
            elif split.path == '/owned':
                self._reply(sim.owned(query['project']))
            elif split.path == '/domain-left':
                from benchmarks import simdomain

                self._reply(simdomain.left(sim, sim.domains[query['id']]))
            else:
                self.send_error(404)

        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            body = json.loads(self.rfile.read(length) or b'{}')
            if self.path == '/seed':
                self._reply(
                    sim.seed(
                        body['n'],
                        body.get('twins', 2),
                        body.get('prefix', 'sim'),
                    )
                )
            elif self.path == '/seed-domain':
                from benchmarks import simdomain

                self._reply(simdomain.seed(sim, **body))
            elif self.path == '/stop':
                self._reply({'stopping': True})
                stop.set()
            else:
                self.send_error(404)

    return Control


def serve(sim: SimCloud, *, port: int = 0) -> tuple[list, dict]:
    """Start the services' servers (and the control server) in threads;
    returns the servers and the state (URLs, ports) to write."""
    servers = []
    stop = threading.Event()
    endpoints = [
        (region, service)
        for region in sim.regions
        for service in SERVICES
        if service != 'identity' or region == sim.regions[0]
    ]
    for i, (region, service) in enumerate(endpoints):
        server = _Server(
            (sim.host, port + 1 + i if port else 0),
            _handler(sim, service, region),
        )
        sim.region_urls[region][service] = (
            f'http://{sim.host}:{server.server_address[1]}'
        )
        servers.append(server)
    control = http.server.ThreadingHTTPServer(
        (sim.host, port if port else 0), _control(sim, stop)
    )
    servers.append(control)
    for server in servers:
        threading.Thread(
            target=server.serve_forever, args=(0.05,), daemon=True
        ).start()
    state = {
        'pid': os.getpid(),
        'control': f'http://{sim.host}:{control.server_address[1]}',
        'auth_url': sim.urls['identity'] + '/v3',
        'urls': dict(sim.urls),
        'region_urls': sim.region_urls,
        'stop': stop,
    }
    return servers, state


def clouds_yaml(auth_url: str) -> dict:
    """The clouds.yaml of the simulated cloud's admin."""
    return {
        'clouds': {
            'sim-admin': {
                'auth': {
                    'auth_url': auth_url,
                    'username': 'admin',
                    'password': 'secret',
                    'project_name': 'admin',
                    'user_domain_id': 'default',
                    'project_domain_id': 'default',
                },
                'region_name': 'RegionOne',
                'identity_api_version': '3',
                'interface': 'public',
            }
        }
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument('--workers', type=int, default=DEFAULT_WORKERS)
    parser.add_argument('--delete-scale', type=float, default=1.0)
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument(
        '--regions',
        type=int,
        default=1,
        choices=range(1, len(REGIONS) + 1),
        help="the catalog's regions (every service but Keystone in each)",
    )
    parser.add_argument(
        '--state-file',
        required=True,
        help='written once it listens: control URL, auth URL, clouds.yaml',
    )
    args = parser.parse_args(argv)
    # ids unique to this cloud: the fakes count from 1 in every process,
    # and the cascade locks a project by its id (two simulated clouds at
    # once would share their projects' locks)
    common._ids = itertools.count(time.time_ns() // 1000 << 16)
    sim = SimCloud(
        latency=args.latency_ms / 1000.0,
        workers=args.workers,
        delete_scale=args.delete_scale,
        regions=args.regions,
    )
    servers, state = serve(sim, port=args.port)
    stop = state.pop('stop')
    yaml_path = os.path.splitext(args.state_file)[0] + '-clouds.yaml'
    with open(yaml_path, 'w') as f:
        json.dump(clouds_yaml(state['auth_url']), f)  # JSON is YAML
    state['clouds_yaml'] = yaml_path
    tmp = args.state_file + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(state, f)
    os.replace(tmp, args.state_file)
    stop.wait()
    for server in servers:
        server.shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
