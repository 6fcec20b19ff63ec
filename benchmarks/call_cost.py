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

"""The client's CPU per API call, layer by layer, measured apart.

    python -m benchmarks.call_cost [--calls 300] [--out DIR]

Against the simulated cloud (benchmarks.simcloud, in a process of its own
and without latency, so that none of its CPU is the client's; the
connection made ready as a run's is, unless ``--as-before``), one
project of resources, and from this process on one thread, the same GET
of a network and DELETEs of security group rules made through:

- ``resource``: openstacksdk's resource layer (``conn.network.get_network``,
  ``delete_security_group_rule``), as the kinds call it;
- ``proxy``: the proxy's raw request (``osc_cascade.api.http.request``:
  the SDK's adapter, endpoint, microversion header, auth and exceptions);
- ``session``: the connection's keystoneauth session on the endpoint the
  proxy resolved once, the answer checked by the SDK's exceptions;
- ``requests``: a bare ``requests.Session`` with the token (the floor: no
  keystoneauth, no SDK);
- ``workers``: the plan's own calls (``api.direct``) with their HTTP
  exchanges made by 2 worker processes (``api.workers``): this process's
  CPU per call, and the workers' apart (``/proc``).

The layers take turns call by call, so that a load that changes meanwhile
falls on all of them alike. Per layer and method: the client's CPU
(user+sys of this process) per call, in ms, and the wall per call. Then
the executor's own CPU per step (benchmarks.executor_cpu: the scheduling,
slots, events, on kinds that answer at once), which is what the run wraps
around each call. Prints JSON and, with ``--out``, writes
``call-cost.json``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

import openstack
from openstack import exceptions as sdk_exc
from openstack.network.v2 import network as sdk_network
from openstack.network.v2 import security_group_rule as sdk_rule
import requests

from benchmarks import cpu, executor_cpu, sim
from benchmarks.results import write_tables
from osc_cascade.api import direct, session_costs, workers
from osc_cascade.api.http import request

#: the worker processes of the ``workers`` layer
WORKERS = 2
LAYERS = ('resource', 'proxy', 'session', 'requests', 'workers')


def _cpu() -> float:
    return time.process_time()  # os.times() counts in 10 ms ticks


def _layers(conn: Any, base: str) -> dict[str, dict[str, Any]]:
    """Per layer, its GET and DELETE (each takes a path under the network
    endpoint and an id)."""
    net = conn.network
    session = conn.session
    bare = requests.Session()
    bare.headers['X-Auth-Token'] = conn.auth_token

    def via_session(method: str, path: str) -> Any:
        response = session.request(base + path, method, raise_exc=False)
        sdk_exc.raise_from_response(response)
        return response

    return {
        'resource': {
            'GET': lambda id_: net.get_network(id_),
            'DELETE': lambda id_: net.delete_security_group_rule(
                id_, ignore_missing=False
            ),
        },
        'proxy': {
            'GET': lambda id_: request(net, 'GET', f'/networks/{id_}').json(),
            'DELETE': lambda id_: request(
                net, 'DELETE', f'/security-group-rules/{id_}'
            ),
        },
        'session': {
            'GET': lambda id_: via_session('GET', f'/networks/{id_}').json(),
            'DELETE': lambda id_: via_session(
                'DELETE', f'/security-group-rules/{id_}'
            ),
        },
        'requests': {
            'GET': lambda id_: bare.get(f'{base}/networks/{id_}').json(),
            'DELETE': lambda id_: bare.delete(
                f'{base}/security-group-rules/{id_}'
            ).raise_for_status(),
        },
        # the plan's own calls (api.direct) made by the run's worker
        # processes: this process's share (the workers' is counted apart)
        'workers': {
            'GET': lambda id_: direct.get(net, sdk_network.Network, id_),
            'DELETE': lambda id_: direct.delete(
                net, sdk_rule.SecurityGroupRule, id_, ignore_missing=False
            ),
        },
    }


def measure(conn: Any, project_id: str, calls: int) -> dict[str, Any]:
    with workers.running(conn, WORKERS, 10, on_lost=print) as pool:
        pids = [w.process.pid for w in pool.workers]
        before = _settled(pids)
        out = _measure(conn, project_id, calls)
        spent = sum(cpu.process(p) for p in pids) - before
    made = sum(out[m]['workers']['calls'] for m in out)
    out['workers_processes'] = {
        'workers': WORKERS,
        'cpu_ms_per_call': round(1000 * spent / max(1, made), 3),
    }
    return out


def _settled(pids: list[int]) -> float:
    """The workers' CPU once they are started (their imports are not
    what a call costs)."""
    spent = -1.0
    while True:
        time.sleep(0.5)
        now = sum(cpu.process(p) for p in pids)
        if now - spent < 0.02:
            return now
        spent = now


def _measure(conn: Any, project_id: str, calls: int) -> dict[str, Any]:
    base = conn.network.get_endpoint().rstrip('/')
    layers = _layers(conn, base)
    network = request(
        conn.network, 'GET', '/networks', params={'project_id': project_id}
    ).json()['networks'][0]['id']
    rules = [
        r['id']
        for r in request(
            conn.network,
            'GET',
            '/security-group-rules',
            params={'project_id': project_id},
        ).json()['security_group_rules']
    ]
    out: dict[str, Any] = {}
    for method in ('GET', 'DELETE'):
        cpu = dict.fromkeys(LAYERS, 0.0)
        wall = dict.fromkeys(LAYERS, 0.0)
        count = dict.fromkeys(LAYERS, 0)
        ids = iter(rules)
        for _ in range(calls if method == 'GET' else len(rules)):
            for layer in LAYERS:
                id_ = network if method == 'GET' else next(ids, None)
                if id_ is None:
                    break
                c, w = _cpu(), time.perf_counter()
                layers[layer][method](id_)
                cpu[layer] += _cpu() - c
                wall[layer] += time.perf_counter() - w
                count[layer] += 1
        out[method] = {
            layer: {
                'calls': count[layer],
                'cpu_ms_per_call': round(
                    1000 * cpu[layer] / max(1, count[layer]), 3
                ),
                'wall_ms_per_call': round(
                    1000 * wall[layer] / max(1, count[layer]), 3
                ),
            }
            for layer in LAYERS
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--calls', type=int, default=300)
    parser.add_argument(
        '--blocks',
        type=int,
        default=60,
        help='blocks of 100 resources (10 security group rules each: the '
        'DELETEs)',
    )
    parser.add_argument('--executor-n', type=int, default=10000)
    parser.add_argument(
        '--as-before',
        action='store_true',
        help='without what a run works out once per session '
        '(osc_cascade.api.session_costs): the per-call figures before it',
    )
    parser.add_argument('--out')
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        simulator = sim.Simulator(
            workdir, latency_ms=0, workers=100, delete_scale=1.0
        )
        try:
            project = simulator.call(
                'POST',
                '/seed',
                {'n': 100 * args.blocks, 'twins': 1, 'prefix': 'cost'},
            )[0]
            os.environ['OS_CLIENT_CONFIG_FILE'] = simulator.state[
                'clouds_yaml'
            ]
            conn = openstack.connect(cloud='sim-admin')
            if not args.as_before:
                # as a run's connection is (engine.limiter.size_pools)
                session_costs.once_per_run(conn)
            simulator.call('GET', '/stats?reset=1')
            result: dict[str, Any] = {
                'load_before': os.getloadavg()[0],
                'calls': measure(conn, project['id'], args.calls),
            }
            stats = simulator.call('GET', '/stats')
            result['simulator'] = {
                'requests': stats['requests'],
                'handler_cpu_ms_per_request': stats[
                    'handler_cpu_ms_per_request'
                ],
                'process_cpu_s': stats['process_cpu_s'],
            }
        finally:
            simulator.stop()
    block = executor_cpu.block_plan()
    result['executor'] = executor_cpu.measure(args.executor_n, block, 10)
    result['load_after'] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    if args.out:
        with open(os.path.join(args.out, 'call-cost.json'), 'w') as f:
            json.dump(result, f, indent=1)
        table = markdown(result)
        write_tables(args.out, 'call-cost', table)
        print(table)
    return 0


def markdown(result: dict[str, Any]) -> str:
    """One row per layer: the client's CPU and wall per call, GET and
    DELETE; then the executor's own CPU per step."""
    lines = [
        '| layer | GET: CPU ms per call | GET: wall ms | DELETE: CPU ms '
        'per call | DELETE: wall ms |',
        '|---|---|---|---|---|',
    ]
    calls = result['calls']
    for layer in LAYERS:
        get, delete = calls['GET'][layer], calls['DELETE'][layer]
        lines.append(
            f'| {layer} | {get["cpu_ms_per_call"]:.2f} | '
            f'{get["wall_ms_per_call"]:.2f} | '
            f'{delete["cpu_ms_per_call"]:.2f} | '
            f'{delete["wall_ms_per_call"]:.2f} |'
        )
    apart = calls.get('workers_processes')
    if apart:
        lines.append(
            f'| (the {apart["workers"]} worker processes of the layer above, '
            f'per call) | {apart["cpu_ms_per_call"]:.2f} | | | |'
        )
    ex = result['executor']
    lines.append(
        f'| the executor around each step (N={ex["n"]:,}, no HTTP) | '
        f'{ex["executor_ms_per_step"]:.3f} | | | |'
    )
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    sys.exit(main())
