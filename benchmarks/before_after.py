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

"""The cascade of two versions of osc-cascade side by side on the
simulated cloud: the client's CPU per request before and after a change.

    python -m benchmarks.before_after --before REV [--sweep 1000,10000]
        [--repeats 3] [--out DIR]
    python -m benchmarks.before_after --report-only [--out DIR]

``--before`` is a git revision of this repository (its tree is taken
with ``git archive`` into a temporary directory: the repository is not
changed); *after* is this working tree. Per N and repeat: a fresh
simulated cloud (benchmarks.sim's, a process of its own) with one
project per version and a twin that neither touches; ``openstack project
delete --cascade`` of each version (``PYTHONPATH`` naming its tree, the
same ``openstack`` and libraries), the order alternating between
repeats, measured as benchmarks.sim measures it: wall, the critical-path
bound of its own plan, requests, the client's CPU (user+sys, its
rusage) and peak RSS, the simulator's CPU, the load average before. The
machine may be busy with other work: CPU per request moves less with
load than wall. Results: ``<out>/before-after.json`` (every run),
``before-after.md`` and ``.rst`` (medians)."""

from __future__ import annotations

import argparse
import collections
from collections.abc import Iterator
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks import run, sim
from benchmarks.results import load_results, save_results, write_tables

RESULTS = 'before-after.json'
VERSIONS = ('before', 'after')


def export(rev: str, into: str) -> str:
    """The tree of ``rev`` in ``into`` (``git archive``)."""
    archive = subprocess.run(
        ['git', '-C', run.REPO, 'archive', '--format=tar', rev],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(['tar', '-x', '-C', into], input=archive, check=True)
    return into


@contextlib.contextmanager
def python_path(tree: str) -> Iterator[None]:
    """Within it, the commands run (``openstack``) import osc-cascade
    from ``tree``."""
    saved = os.environ.get('PYTHONPATH')
    os.environ['PYTHONPATH'] = tree
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop('PYTHONPATH')
        else:
            os.environ['PYTHONPATH'] = saved


def one_repeat(n, rep, trees, args, raw) -> dict[str, Any]:
    tag = f'ba-n{n}-r{rep}-{time.strftime("%H%M%S")}'
    order = list(VERSIONS) if rep % 2 == 0 else list(VERSIONS)[::-1]
    result: dict[str, Any] = {
        'n': n,
        'repeat': rep,
        'order': order,
        'cores': os.cpu_count(),
        'versions': {},
    }
    with tempfile.TemporaryDirectory() as workdir:
        simulator = sim.Simulator(
            workdir,
            latency_ms=args.latency_ms,
            workers=args.workers,
            delete_scale=1.0,
        )
        try:
            made = simulator.call(
                'POST', '/seed', {'n': n, 'twins': 3, 'prefix': tag}
            )
            for p in made:
                p['before'] = simulator.call(
                    'GET', f'/owned?project={p["id"]}'
                )
            for i, version in enumerate(order):
                load = os.getloadavg()
                args.cascade_args = getattr(args, f'{version}_args')
                with python_path(trees[version]):
                    row = sim.measure(
                        simulator,
                        run.CASCADE,
                        made[i],
                        made[-1],
                        args=args,
                        raw=raw,
                        tag=f'{tag}-{version}',
                    )
                row['load_before'] = [round(x, 2) for x in load]
                result['versions'][version] = row
        finally:
            simulator.stop()
    return result


def summarize(runs: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = collections.defaultdict(list)
    for r in runs:
        for version, row in r['versions'].items():
            groups[(r['n'], VERSIONS.index(version))].append(row)
    med = statistics.median
    out = []
    for (n, v), rows in sorted(groups.items()):
        out.append(
            {
                'n': n,
                'version': VERSIONS[v],
                'repeats': len(rows),
                'wall': med(r['wall'] for r in rows),
                # 0: a dry run (``--before-args=--dry-run``) has no bound
                'bound': med(r.get('bound', 0) for r in rows),
                'ratio': med(r['wall'] / r['bound'] for r in rows)
                if all(r.get('bound') for r in rows)
                else 0.0,
                'requests': med(r['requests'] for r in rows),
                'client_cpu_s': med(r['client_cpu_s'] for r in rows),
                'ms_per_request': med(
                    1000 * r['client_cpu_s'] / r['requests'] for r in rows
                ),
                'rss': max(r['client_peak_rss_mib'] for r in rows),
                'sim_cpu_s': med(r['sim']['process_cpu_s'] for r in rows),
                'sim_ms_per_request': med(
                    1000 * r['sim']['process_cpu_s'] / r['requests']
                    for r in rows
                ),
                'left': max(r['left'] for r in rows),
                'failed': sum(r['exit_code'] != 0 for r in rows),
                'twin_intact': all(r['twin_intact'] for r in rows),
                'load': med(r['load_before'][0] for r in rows),
            }
        )
    return out


def markdown(summary: list[dict]) -> str:
    lines = [
        '| N | version | repeats | wall s | critical path s | wall / bound '
        '| requests | client CPU s | client CPU ms per request | client '
        'peak RSS MiB | simulator CPU s (ms per request) | left | failed '
        '| twin intact | load average (1 min, before) |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    for s in summary:
        lines.append(
            f'| {s["n"]} | {s["version"]} | {s["repeats"]} | '
            f'{s["wall"]:.1f} | {_figure(s["bound"], 1)} | '
            f'{_figure(s["ratio"], 2)} | '
            f'{s["requests"]:.0f} | {s["client_cpu_s"]:.1f} | '
            f'{s["ms_per_request"]:.2f} | {s["rss"]:.0f} | '
            f'{s["sim_cpu_s"]:.1f} ({s["sim_ms_per_request"]:.2f}) | '
            f'{s["left"]:.0f} | {s["failed"]} | '
            f'{"yes" if s["twin_intact"] else "NO"} | {s["load"]:.1f} |'
        )
    return '\n'.join(lines) + '\n'


def _figure(value: float, places: int) -> str:
    """A bound or a ratio, or '' where a dry run has none."""
    return f'{value:.{places}f}' if value else ''


def plot(summary: list[dict], path: str) -> bool:
    """Per N, the client's CPU per request and wall / bound, before and
    after (bars)."""
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        run.log('matplotlib is not installed: no plot')
        return False
    ns = sorted({s['n'] for s in summary})
    by = {(s['n'], s['version']): s for s in summary}
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    width = 0.38
    for ax, key, label in (
        (axes[0], 'ms_per_request', 'client CPU ms per request'),
        (axes[1], 'ratio', 'wall / critical-path bound'),
    ):
        for i, version in enumerate(VERSIONS):
            xs = [j + (i - 0.5) * width for j in range(len(ns))]
            ys = [
                by[(n, version)][key] if (n, version) in by else 0 for n in ns
            ]
            bars = ax.bar(xs, ys, width, label=version)
            ax.bar_label(bars, fmt='%.2f', fontsize=8)
        ax.set_xticks(range(len(ns)), [f'N={n:,}' for n in ns])
        ax.set_ylabel(label)
        ax.grid(True, axis='y', alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle('The cascade on the simulated cloud, before and after')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def report(runs: list[dict], out: str) -> str:
    summary = summarize(runs)
    table = markdown(summary)
    plot(summary, os.path.join(out, 'before-after.png'))
    write_tables(out, 'before-after', table)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument('--before', help='a git revision (e.g. main)')
    parser.add_argument(
        '--sweep',
        default=[1000, 10000],
        type=lambda s: [int(x) for x in s.split(',')],
    )
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument(
        '--before-args',
        default='',
        help="more of the cascade's options before (e.g. '--workers 0')",
    )
    parser.add_argument(
        '--after-args',
        default='',
        help="more of the cascade's options after (e.g. '--workers 2')",
    )
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument('--workers', type=int, default=1000)
    parser.add_argument('--parallel', type=int, default=50)
    parser.add_argument('--cascade-limit', type=float, default=3600.0)
    parser.add_argument('--out', default=os.path.join(sim.HERE, 'results'))
    parser.add_argument('--append', action='store_true')
    parser.add_argument('--report-only', action='store_true')
    args = parser.parse_args(argv)
    args.cleanup_limit = 0.0  # no cleanup here
    results = os.path.join(args.out, RESULTS)
    if args.report_only:
        print(report(load_results(results), args.out))
        return 0
    if not args.before:
        parser.error('--before is needed (a git revision)')
    runs = load_results(results) if args.append else []
    raw = os.path.join(args.out, 'raw')
    os.makedirs(raw, exist_ok=True)
    with tempfile.TemporaryDirectory() as before:
        trees = {'before': export(args.before, before), 'after': run.REPO}
        for n in args.sweep:
            for rep in range(args.repeats):
                runs.append(one_repeat(n, rep, trees, args, raw))
                save_results(results, runs)
                report(runs, args.out)
    print(report(runs, args.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
