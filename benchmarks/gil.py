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

"""Where a cascade's CPU goes, by library: who holds the GIL.

    python -m benchmarks.gil --sweep 1000,10000 [--out DIR]

At N=10,000 on the simulated cloud the cascade's wall time is its own CPU
(one core, under the GIL), not the cloud's. This says whose code that CPU
runs. Per N: a fresh simulated cloud (benchmarks.simcloud, as
benchmarks.sim sets it up), one project of N resources, and ``openstack
project delete --cascade --yes`` run under py-spy (``record --gil
--nonblocking``: a sample is the stack of the thread that holds the GIL,
taken without stopping the process). Each sample counts once in two
tables:

- *called from osc-cascade*: the library of the first frame below the
  innermost osc-cascade frame (all the time under a call into
  openstacksdk is openstacksdk's, the keystoneauth1, requests and urllib3
  frames beneath it included); ``osc-cascade`` when an osc-cascade frame is
  the innermost; ``outside osc-cascade`` when the stack has none (start-up,
  the client's shell, idle pool threads);
- *innermost frame*: the library of the frame that was running.

And of the samples under a call into openstacksdk, those with a
keystoneauth1 frame (the HTTP call: keystoneauth1, requests, urllib3,
http.client) and those without (openstacksdk's own work: its resource
objects, proxies, microversions).

py-spy's sampling costs the run some wall time: these runs are not the
sweep's timings (benchmarks.sim). Needs py-spy (``pip install py-spy``)
and ptrace (root, or ``kernel.yama.ptrace_scope`` 0). Results:
``<out>/gil.json`` and ``gil.md``.
"""

from __future__ import annotations

import argparse
import collections
from collections.abc import Iterable
import json
import os
import shutil
import sys
import tempfile
import time

from benchmarks import run, sim

OWN = 'osc-cascade'
SDK = 'openstacksdk'
#: the library under openstacksdk that makes its HTTP calls
HTTP = 'keystoneauth1'
#: a path fragment of a frame -> its library (the first that matches)
LIBRARIES = (
    ('osc_cascade/', OWN),
    ('openstack/', SDK),
    ('keystoneauth1/', HTTP),
    ('requests/', 'requests'),
    ('urllib3/', 'urllib3'),
    ('iso8601/', 'iso8601'),
)
SDK_HTTP = 'the HTTP call (keystoneauth1 and below)'
SDK_OWN = "openstacksdk's own work"
OUTSIDE = 'outside osc-cascade'
OTHER = 'Python and other packages'


def library(frame: str) -> str:
    return next((name for part, name in LIBRARIES if part in frame), OTHER)


def shares(raw_lines: Iterable[str]) -> dict[str, dict[str, int]]:
    """py-spy's raw output (``frame;frame;... count``, outermost first)
    -> samples per library, in each of the module doc's views."""
    called: collections.Counter[str] = collections.Counter()
    innermost: collections.Counter[str] = collections.Counter()
    sdk: collections.Counter[str] = collections.Counter()
    for line in raw_lines:
        stack, _, count = line.rstrip('\n').rpartition(' ')
        if not count.isdigit():
            continue
        frames = [f for f in stack.split(';') if f]
        n = int(count)
        innermost[library(frames[-1]) if frames else OTHER] += n
        own = [i for i, f in enumerate(frames) if library(f) == OWN]
        if not own:
            called[OUTSIDE] += n
        elif own[-1] == len(frames) - 1:
            called[OWN] += n
        else:
            callee = library(frames[own[-1] + 1])
            called[callee] += n
            if callee == SDK:
                below = frames[own[-1] + 1 :]
                http = any(library(f) == HTTP for f in below)
                sdk[SDK_HTTP if http else SDK_OWN] += n
    return {
        'called': dict(called),
        'innermost': dict(innermost),
        'sdk': dict(sdk),
    }


def py_spy() -> str:
    here = os.path.join(os.path.dirname(sys.executable), 'py-spy')
    found = here if os.path.exists(here) else shutil.which('py-spy')
    if not found:
        raise SystemExit('benchmarks.gil needs py-spy: pip install py-spy')
    return found


def one(n: int, args: argparse.Namespace, workdir: str) -> dict:
    simulator = sim.Simulator(
        workdir, latency_ms=args.latency_ms, workers=1000, delete_scale=1.0
    )
    try:
        [project] = simulator.call(
            'POST', '/seed', {'n': n, 'twins': 1, 'prefix': f'gil-{n}'}
        )
        raw = os.path.join(workdir, f'n{n}.spy')
        cmd = [
            py_spy(),
            'record',
            '--gil',
            '--nonblocking',
            '--rate',
            str(args.rate),
            '--format',
            'raw',
            '--output',
            raw,
            '--',
            *run.tool_command(
                run.CASCADE,
                project['id'],
                cloud='sim-admin',
                parallel=args.parallel,
            ),
        ]
        env = dict(
            os.environ, OS_CLIENT_CONFIG_FILE=simulator.state['clouds_yaml']
        )
        simulator.call('GET', '/stats?reset=1')
        run.log(f'N={n}: the cascade under py-spy ...')
        code, wall, _cpu, _rss = sim.run_measured(
            cmd, env, os.path.join(workdir, f'n{n}.log'), args.limit
        )
        stats = simulator.call('GET', '/stats?reset=1')
        left = simulator.call('GET', f'/owned?project={project["id"]}')
    finally:
        simulator.stop()
    if code != 0 or not os.path.exists(raw):
        raise SystemExit(f'N={n}: the run failed (exit {code}): {workdir}')
    with open(raw, encoding='utf-8', errors='replace') as f:
        samples = shares(f)
    return {
        'n': n,
        'wall_under_py_spy': round(wall, 1),
        'requests': stats['requests'],
        'left': sum(left.values()),
        'rate': args.rate,
        'samples': sum(samples['called'].values()),
        **samples,
    }


def markdown(rows: list[dict]) -> str:
    out = []
    for view, title in (
        ('called', 'called from osc-cascade'),
        ('innermost', 'innermost frame'),
        ('sdk', 'under a call into openstacksdk'),
    ):
        names = sorted(
            {k for r in rows for k in r[view]},
            key=lambda k: -sum(r[view].get(k, 0) / r['samples'] for r in rows),
        )
        out += [
            f'GIL samples by library, {title}:',
            '',
            '| library | ' + ' | '.join(f'N={r["n"]}' for r in rows) + ' |',
            '|---|' + '---|' * len(rows),
        ]
        for name in names:
            cells = [
                f'{100 * r[view].get(name, 0) / r["samples"]:.1f} %'
                for r in rows
            ]
            out.append(f'| {name} | ' + ' | '.join(cells) + ' |')
        out.append('')
    out.append(
        '| N | samples | requests | left | wall under py-spy s |\n'
        '|---|---|---|---|---|'
    )
    for r in rows:
        out.append(
            f'| {r["n"]} | {r["samples"]} | {r["requests"]} | {r["left"]} '
            f'| {r["wall_under_py_spy"]} |'
        )
    return '\n'.join(out) + '\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument('--sweep', default=[1000, 10000], type=run.counts)
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument('--parallel', type=int, default=50)
    parser.add_argument('--rate', type=int, default=250, help='samples/s')
    parser.add_argument('--limit', type=float, default=1800.0)
    parser.add_argument('--out', default=os.path.join(sim.HERE, 'results'))
    args = parser.parse_args(argv)
    py_spy()  # refused before anything is seeded
    rows = []
    for n in args.sweep:
        rows.append(one(n, args, tempfile.mkdtemp(prefix=f'gil-{n}-')))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'gil.json'), 'w') as f:
        json.dump(
            {'measured': time.strftime('%Y-%m-%d'), 'runs': rows},
            f,
            indent=1,
            sort_keys=True,
        )
    text = markdown(rows)
    with open(os.path.join(args.out, 'gil.md'), 'w') as f:
        f.write(text)
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
