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

"""What the plugin adds to ``openstack`` start-up.

    python -m benchmarks.startup --without /venv-a/bin/openstack \\
        --with /venv-b/bin/openstack --runs 20 [--args=--help]

Two installations of the same python-openstackclient, one without and one
with osc-cascade; their commands run interleaved (so that the load of the
machine weighs on both alike), each timed for wall and CPU (user + system
of the child). Then ``python -X importtime`` of the one with the plugin
gives the import time of the plugin's own modules, the part of the
difference that is the plugin's. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        check=False,
        env=dict(os.environ, OS_CLOUD=''),
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (
        after.ru_stime - before.ru_stime
    )
    return wall, cpu


def import_times(
    openstack: str, args: list[str], prefix: str = 'osc_cascade'
) -> dict[str, float]:
    """Cumulative import time (ms) of each top-level import of the
    plugin's modules in one start-up."""
    python = os.path.join(os.path.dirname(openstack), 'python')
    proc = subprocess.run(
        [python, '-X', 'importtime', openstack, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return parse_importtime(proc.stderr, prefix)


def parse_importtime(text: str, prefix: str) -> dict[str, float]:
    """``import time: self [us] | cumulative | name`` lines: the cumulative
    time (ms) of the outermost modules of ``prefix`` (a module imported by
    another of ``prefix`` is inside its parent's time, not counted
    twice)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith('import time:') or 'self [us]' in line:
            continue
        _self_us, cumulative, name = line.split(':', 1)[1].split('|', 2)
        name = name.rstrip()
        rows.append(
            (int(cumulative), len(name) - len(name.lstrip()), name.strip())
        )
    out: dict[str, float] = {}
    for i, (cumulative, indent, module) in enumerate(rows):
        if not module.startswith(prefix):
            continue
        # importtime prints a module after its children: the parent is
        # the next line with a smaller indent
        parent = next(
            (m for _c, ind, m in rows[i + 1 :] if ind < indent), None
        )
        if parent is None or not parent.startswith(prefix):
            out[module] = out.get(module, 0.0) + cumulative / 1000.0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument(
        '--without',
        required=True,
        help='openstack of an installation without it',
    )
    parser.add_argument(
        '--with',
        dest='with_',
        required=True,
        help='openstack of an installation with it',
    )
    parser.add_argument('--runs', type=int, default=20)
    parser.add_argument('--args', default='--help')
    args = parser.parse_args(argv)
    cmd_args = args.args.split()
    samples: dict[str, list[tuple[float, float]]] = {'without': [], 'with': []}
    for name, binary in (('without', args.without), ('with', args.with_)):
        timed([binary, *cmd_args])  # warm the page cache
    for _ in range(args.runs):
        for name, binary in (('without', args.without), ('with', args.with_)):
            samples[name].append(timed([binary, *cmd_args]))
    result: dict = {'command': 'openstack ' + args.args, 'runs': args.runs}
    for name, rows in samples.items():
        result[name] = {
            'wall_median_ms': round(
                statistics.median(w for w, _ in rows) * 1000, 1
            ),
            'cpu_median_ms': round(
                statistics.median(c for _, c in rows) * 1000, 1
            ),
            'wall_min_ms': round(min(w for w, _ in rows) * 1000, 1),
            'cpu_min_ms': round(min(c for _, c in rows) * 1000, 1),
        }
    for key in (
        'wall_median_ms',
        'cpu_median_ms',
        'wall_min_ms',
        'cpu_min_ms',
    ):
        result.setdefault('added', {})[key] = round(
            result['with'][key] - result['without'][key], 1
        )
    imports = [import_times(args.with_, cmd_args) for _ in range(5)]
    modules = sorted({m for i in imports for m in i})
    result['plugin_imports_ms'] = {
        m: round(statistics.median(i.get(m, 0.0) for i in imports), 2)
        for m in modules
    }
    result['plugin_imports_total_ms'] = round(
        sum(result['plugin_imports_ms'].values()), 2
    )
    print(json.dumps(result, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
