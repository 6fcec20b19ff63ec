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
and ``POST /stop``.

Here: the simulator, its index and its answers. Its shards and what a
block of a project holds are benchmarks.simshard's, its counters
benchmarks.simstats', its HTTP servers benchmarks.simserver's."""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import re
import sys
import threading
import time
from typing import Any
from urllib import parse

from keystoneauth1 import fixture as ks_fixture

from benchmarks import simstats
from benchmarks.simserver import clouds_yaml, serve
from benchmarks.simshard import DELETE_SECONDS, SERVICES, Shard, fill_block
from tests.unit import scenarios
from tests.unit.fakes import common
from tests.unit.fakes.common import ADMIN_PROJECT, ADMIN_USER

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
        self.counters = simstats.Counters(
            lambda: {
                'workers': self.workers,
                'latency': self.latency,
                'delete_scale': self.delete_scale,
                'shards': len(self.shards),
            }
        )

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
        """Count again from now; what was counted until now."""
        return self.counters.reset()

    def stats(self) -> dict:
        return self.counters.snapshot()

    # -- answering --

    def answer(self, service, method, url, headers, body, region=REGIONS[0]):
        """(status, headers, body) of one request to ``region``'s
        endpoint, after the latency."""
        with self.slots[service]:
            self.counters.busy(service, 1)
            try:
                time.sleep(self.latency)
                cpu = time.thread_time()
                answer, fanout = self._answer(
                    service, method, url, headers, body, region
                )
                self.counters.count(
                    service,
                    f'{method} {simstats.route(url)}',
                    answer[0],
                    time.thread_time() - cpu,
                    fanout,
                    region,
                )
                return answer
            finally:
                self.counters.busy(service, -1)

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
