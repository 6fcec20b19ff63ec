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

"""Where the cascade's CPU goes, function by function, every thread.

    python -m benchmarks.profile_run -n 10000 [--top 40] [--out DIR]
    python -m benchmarks.profile_run --domain 50 [--size 20 --users 10]
    python -m benchmarks.profile_run -n 100000 --dry-run

A fresh simulated cloud (benchmarks.sim's), one project of N resources,
and ``openstack project delete --cascade --yes`` run in this process
under yappi with its CPU clock (cProfile sees the main thread alone; the
cascade's calls are made on the executor's threads). Prints the
functions with the most CPU of their own, the CPU per package (the file's
library: osc-cascade, openstacksdk, keystoneauth1, requests, urllib3, the
standard library's http and the rest), and the requests the simulator
answered, so as the client's CPU per request. The profiler slows the
run (about twice): compare shares, not the run's wall with benchmarks.sim.
Needs yappi (``pip install yappi``). With ``--out``: ``profile-N.json``
and ``profile-N.pstats``.

With ``--domain P``: a domain of P projects of ``--size`` resources and
``--users`` users in two regions (benchmarks.simdomain's) and ``domain
delete --cascade``; the requests are also counted by route (IDs as
``{id}``), so as what the cascade asks per project.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import sys
import tempfile
import time

from benchmarks import run, sim

PACKAGES = (
    ('osc_cascade', 'osc-cascade'),
    ('openstack/', 'openstacksdk'),
    ('keystoneauth1', 'keystoneauth1'),
    ('requests/', 'requests'),
    ('urllib3', 'urllib3'),
    ('/http/', 'http (stdlib)'),
    ('threading.py', 'threading (stdlib)'),
    ('concurrent/', 'concurrent (stdlib)'),
    ('json/', 'json (stdlib)'),
    ('socket.py', 'socket (stdlib)'),
    ('ssl.py', 'ssl (stdlib)'),
)


def package(path: str) -> str:
    for needle, name in PACKAGES:
        if needle in path:
            return name
    if '/site-packages/' in path:
        return path.split('/site-packages/', 1)[1].split('/', 1)[0]
    if path.startswith('..'):
        return 'builtins'
    return 'other (stdlib, builtins)'


def profile(
    n: int,
    parallel: int,
    top: int,
    out: str | None,
    domain: dict | None,
    dry_run: bool = False,
) -> dict:
    from openstackclient import shell
    import yappi

    with tempfile.TemporaryDirectory() as workdir:
        simulator = sim.Simulator(
            workdir,
            latency_ms=50,
            workers=1000,
            delete_scale=1.0,
            regions=2 if domain else 1,
        )
        try:
            if domain:
                seeded = simulator.call(
                    'POST', '/seed-domain', {**domain, 'twins': 1}
                )[0]
                cmd = [
                    '--os-cloud', 'sim-admin', 'domain', 'delete',
                    '--cascade', '--yes', '--parallel', str(parallel),
                    seeded['id'],
                ]  # fmt: skip
                owned = f'/domain-left?id={seeded["id"]}'
            else:
                project = simulator.call(
                    'POST', '/seed', {'n': n, 'twins': 1, 'prefix': 'prof'}
                )[0]
                cmd = run.tool_command(
                    run.CASCADE,
                    project['id'],
                    cloud='sim-admin',
                    parallel=parallel,
                )[1:] + (['--dry-run'] if dry_run else [])
                owned = f'/owned?project={project["id"]}'
            os.environ['OS_CLIENT_CONFIG_FILE'] = simulator.state[
                'clouds_yaml'
            ]
            simulator.call('GET', '/stats?reset=1')
            yappi.set_clock_type('cpu')
            cpu0, wall0 = os.times(), time.monotonic()
            yappi.start()
            with contextlib.redirect_stdout(io.StringIO()):
                code = shell.main(cmd)
            yappi.stop()
            wall = time.monotonic() - wall0
            cpu1 = os.times()
            stats = simulator.call('GET', '/stats')
            left = simulator.call('GET', owned)
        finally:
            simulator.stop()
    funcs = yappi.get_func_stats()
    by_package: collections.Counter[str] = collections.Counter()
    rows = []
    for f in funcs:
        by_package[package(f.module)] += f.tsub
        rows.append(
            (f.tsub, f.ttot, f.ncall, f'{f.module}:{f.lineno}', f.name)
        )
    rows.sort(reverse=True)
    total = sum(by_package.values())
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    result = {
        'n': n,
        'domain': domain,
        'exit_code': code,
        'left': sum(left.values()),
        'wall_s': round(wall, 1),
        'client_cpu_s': round(cpu, 2),
        'requests': stats['requests'],
        'client_cpu_ms_per_request': round(
            1000 * cpu / max(1, stats['requests']), 3
        ),
        'simulator_handler_ms_per_request': stats[
            'handler_cpu_ms_per_request'
        ],
        'by_region': stats.get('by_region'),
        'routes': stats['routes'] if domain else None,
        'profiled_cpu_s': round(total, 2),
        'by_package': {
            k: round(v / total, 3) for k, v in by_package.most_common()
        },
        'top_own': [
            {
                'own_s': round(t, 3),
                'total_s': round(tt, 3),
                'calls': c,
                'where': w,
                'function': name,
            }
            for t, tt, c, w, name in rows[:top]
        ],
    }
    if out:
        tag = f'domain-{domain["projects"]}' if domain else n
        tag = f'{tag}-dry-run' if dry_run else tag
        funcs.save(os.path.join(out, f'profile-{tag}.pstats'), type='pstat')
        with open(os.path.join(out, f'profile-{tag}.json'), 'w') as f:
            json.dump(result, f, indent=1)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('-n', type=int, default=10000)
    parser.add_argument('--parallel', type=int, default=50)
    parser.add_argument('--top', type=int, default=40)
    parser.add_argument('--out')
    parser.add_argument(
        '--domain',
        type=int,
        metavar='PROJECTS',
        help='a domain of this many projects, in two regions',
    )
    parser.add_argument('--size', type=int, default=20)
    parser.add_argument('--users', type=int, default=10)
    parser.add_argument(
        '--dry-run',
        action='store_true',
        help="the project's cascade with --dry-run: discovery and plan",
    )
    args = parser.parse_args(argv)
    domain = (
        {'projects': args.domain, 'size': args.size, 'users': args.users}
        if args.domain
        else None
    )
    result = profile(
        args.n, args.parallel, args.top, args.out, domain, args.dry_run
    )
    print(json.dumps(result, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
