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

"""``openstack project delete --cascade`` against ``openstack project
cleanup`` on the simulated cloud (benchmarks.simcloud).

    python -m benchmarks.sim --sweep 1000,10000 --repeats 3
    python -m benchmarks.sim --sweep 100000 --repeats 1 --tools cascade \
        --append
    python -m benchmarks.sim --sweep 100000 --repeats 1 \
        --tools cascade-dry-run --append
    python -m benchmarks.sim --sweep 1000 --delete-scale 10 --append
    python -m benchmarks.sim --report-only

For each N, delete scale and repeat: a fresh simulated cloud with two
identical projects of N resources; ``openstack project cleanup --project
A --auto-approve`` (with run.py's skips, under ``--cleanup-limit``
seconds: a run that hits it did not finish) on one, ``openstack project
delete --cascade --yes`` on the other, the order alternating between
repeats. Per run: wall (the whole command), the requests the cloud
answered, the tool's CPU seconds and peak RSS (its rusage), what is left
of the project and whether the twin was touched, the simulator's own CPU
and how many of a service's workers were ever busy at once; for the
cascade also its critical-path bound (benchmarks.bound, from its
``--report-file``) and its discovery and planning time.

Results: ``<out>/sim-results.json`` (every run), ``sim-results.md`` and
``sim-results.rst`` (the tables), ``sim-time-vs-n.png`` (log-log); where
``<out>`` is the repository's ``benchmarks/results``, README.rst's
Performance section too (its table and plot, at every run and with
``--report-only``)."""

from __future__ import annotations

import argparse
import collections
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import Any
import urllib.request

from benchmarks import bound, run
from benchmarks.results import (
    load_results,
    replace_section,
    save_results,
    write_tables,
)

HERE = os.path.dirname(os.path.abspath(__file__))
CLEANUP, CASCADE = run.CLEANUP, run.CASCADE
#: the cascade's --dry-run: how long discovery and planning take
DRY_RUN = 'cascade-dry-run'
RESULTS = 'sim-results.json'


class Simulator:
    """benchmarks.simcloud in a process of its own, so that its CPU is
    not the client's and the client's is not its."""

    def __init__(
        self, workdir, *, latency_ms, workers, delete_scale, regions=1
    ):
        self.state_file = os.path.join(workdir, 'sim-state.json')
        self.log = open(os.path.join(workdir, 'sim.log'), 'w')
        self.proc = subprocess.Popen(
            [
                sys.executable,
                '-m',
                'benchmarks.simcloud',
                '--latency-ms',
                str(latency_ms),
                '--workers',
                str(workers),
                '--delete-scale',
                str(delete_scale),
                '--state-file',
                self.state_file,
                '--regions',
                str(regions),
            ],
            cwd=run.REPO,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while not os.path.exists(self.state_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'simcloud did not start: {self.log.name}')
            time.sleep(0.1)
        with open(self.state_file) as f:
            self.state = json.load(f)

    def call(self, method: str, path: str, data: Any = None) -> Any:
        req = urllib.request.Request(
            self.state['control'] + path,
            method=method,
            data=None if data is None else json.dumps(data).encode(),
        )
        with urllib.request.urlopen(req, timeout=600) as resp:
            return json.load(resp)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def run_measured(cmd, env, logfile, limit):
    """Run ``cmd``; (exit code or -1 at the limit, wall s, CPU s, peak RSS
    MiB) from its own rusage."""
    with open(logfile, 'w') as out:
        out.write('$ ' + ' '.join(cmd) + '\n')
        out.flush()
        started = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - started > limit:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                code = -1
                out.write(f'\n[benchmark] killed at the limit, {limit}s\n')
                break
            time.sleep(0.05)
        wall = time.monotonic() - started
        proc.returncode = code  # reaped here, not by Popen
    return (
        code,
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
    )


def measure(sim, tool, project, twin, *, args, raw, tag):
    report = os.path.join(raw, f'{tag}-{tool}-report.json')
    cmd = run.tool_command(
        CASCADE if tool == DRY_RUN else tool,
        project['id'],
        cloud='sim-admin',
        parallel=args.parallel,
        report=None if tool == DRY_RUN else report,
    )
    if tool == DRY_RUN:  # discovery and planning alone
        cmd.insert(-1, '--dry-run')
    if tool in (CASCADE, DRY_RUN):  # e.g. --workers 0
        cmd[-1:-1] = shlex.split(getattr(args, 'cascade_args', '') or '')
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=sim.state['clouds_yaml'])
    twin_before = sim.call('GET', f'/owned?project={twin["id"]}')
    sim.call('GET', '/stats?reset=1')
    run.log(f'{tag}: {tool} on {project["name"]} ...')
    limit = args.cleanup_limit if tool == CLEANUP else args.cascade_limit
    code, wall, cpu, rss = run_measured(
        cmd, env, os.path.join(raw, f'{tag}-{tool}.log'), limit
    )
    stats = sim.call('GET', '/stats?reset=1')
    left = sim.call('GET', f'/owned?project={project["id"]}')
    row: dict[str, Any] = {
        'tool': tool,
        'exit_code': code,
        'hit_limit': code == -1,
        'limit': limit,
        'wall': round(wall, 2),
        'client_cpu_s': round(cpu, 2),
        'client_peak_rss_mib': round(rss, 1),
        'requests': stats['requests'],
        'by_method': stats['by_method'],
        'by_service': stats['by_service'],
        'routes': stats['routes'],
        'statuses': stats['statuses'],
        'sim': {
            k: stats[k]
            for k in (
                'handler_cpu_s',
                'handler_cpu_ms_per_request',
                'added_ms_mean',
                'added_ms_p50',
                'added_ms_p99',
                'process_cpu_s',
                'busy_max',
                'workers',
                'fanout_shards',
                'peak_rss_mib',
            )
        },
        'before': sum(project['before'].values()),
        'left': sum(left.values()),
        'left_by_kind': left,
        'twin_intact': sim.call('GET', f'/owned?project={twin["id"]}')
        == twin_before,
    }
    if tool == CASCADE and os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
        first = rep['rounds'][0] if rep['rounds'] else []
        b = bound.bounds(rep['plan'], first, rep['parallel'])
        row.update(
            bound=b['critical_path'],
            steps=b['steps'],
            executed_span=b['executed_span'],
            ready_delay_mean=b['ready_delay_mean'],
            discovery_and_plan_s=rep['phases']['plan'],
            execute_s=rep['phases']['execute'],
            rounds=len(rep['rounds']),
            attempts=sum(r['attempts'] for rd in rep['rounds'] for r in rd),
        )
    run.log(
        f'{tag}: {tool}: exit {code}, {wall:.1f}s, client CPU {cpu:.1f}s, '
        f'RSS {rss:.0f} MiB, {stats["requests"]} requests, '
        f'{row["left"]} left; simulator CPU {stats["process_cpu_s"]:.1f}s, '
        f'busy at most {max(stats["busy_max"].values(), default=0)}'
        f'/{stats["workers"]}, added {stats["added_ms_mean"]:.2f} ms per '
        f'request (p99 {stats["added_ms_p99"]:.1f})'
        + (f', bound {row["bound"]:.1f}s' if 'bound' in row else '')
    )
    return row


def sweep(args) -> list[dict]:
    results_file = os.path.join(args.out, RESULTS)
    runs = load_results(results_file) if args.append else []
    raw = os.path.join(args.out, 'raw')
    os.makedirs(raw, exist_ok=True)
    for scale in args.delete_scale:
        for n in args.sweep:
            for rep in range(args.repeats):
                tag = f'sim-n{n}-x{scale:g}-r{rep}-{time.strftime("%H%M%S")}'
                with tempfile.TemporaryDirectory() as workdir:
                    sim = Simulator(
                        workdir,
                        latency_ms=args.latency_ms,
                        workers=args.workers,
                        delete_scale=scale,
                    )
                    try:
                        runs.append(
                            one_repeat(sim, n, scale, rep, args, raw, tag)
                        )
                    finally:
                        sim.stop()
                save_results(results_file, runs)
                report(runs, args.out)
    return runs


def one_repeat(sim, n, scale, rep, args, raw, tag):
    started = time.monotonic()
    tools = [t for t in (CLEANUP, CASCADE, DRY_RUN) if t in args.tools]
    # one project per tool, and one that no tool works on: every run's twin
    made = sim.call(
        'POST', '/seed', {'n': n, 'twins': len(tools) + 1, 'prefix': tag}
    )
    for p in made:
        p['before'] = sim.call('GET', f'/owned?project={p["id"]}')
    order = tools if rep % 2 == 0 else tools[::-1]
    result = {
        'n': n,
        'repeat': rep,
        'tag': tag,
        'when': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'delete_scale': scale,
        'latency_ms': args.latency_ms,
        'workers': args.workers,
        'parallel': args.parallel,
        'seed_seconds': round(time.monotonic() - started, 1),
        'order': order,
        'cores': os.cpu_count(),
        'load_before': os.getloadavg()[0],
        'tools': {},
    }
    for i, tool in enumerate(order):
        project, twin = made[i], made[-1]
        result['tools'][tool] = measure(
            sim, tool, project, twin, args=args, raw=raw, tag=tag
        )
    return result


# -- the report ---------------------------------------------------------------


def summarize(runs: list[dict]) -> list[dict]:
    """One row per (delete scale, N, tool): medians over the repeats."""
    groups: dict[tuple, list[dict]] = collections.defaultdict(list)
    for r in runs:
        for tool, row in r['tools'].items():
            groups[(r['delete_scale'], r['n'], tool)].append(row)
    med = statistics.median
    out = []
    for (scale, n, tool), rows in sorted(groups.items()):
        s: dict[str, Any] = {
            'delete_scale': scale,
            'n': n,
            'tool': tool,
            'repeats': len(rows),
            'wall': med(r['wall'] for r in rows),
            'wall_min': min(r['wall'] for r in rows),
            'wall_max': max(r['wall'] for r in rows),
            'hit_limit': sum(r['hit_limit'] for r in rows),
            'limit': rows[0]['limit'],
            'requests': med(r['requests'] for r in rows),
            'client_cpu_s': med(r['client_cpu_s'] for r in rows),
            'client_peak_rss_mib': max(r['client_peak_rss_mib'] for r in rows),
            'before': med(r['before'] for r in rows),
            'left': max(r['left'] for r in rows),
            'failed': sum(r['exit_code'] not in (0, -1) for r in rows),
            # None: a run without a twin
            'twin_intact': None
            if any(r['twin_intact'] is None for r in rows)
            else all(r['twin_intact'] for r in rows),
            'sim_cpu_s': med(r['sim']['process_cpu_s'] for r in rows),
            'sim_ms_per_request': med(
                r['sim']['handler_cpu_ms_per_request'] for r in rows
            ),
            'sim_busy_max': max(
                max(r['sim']['busy_max'].values(), default=0) for r in rows
            ),
            'workers': rows[0]['sim']['workers'],
        }
        if all('added_ms_mean' in r['sim'] for r in rows):
            # the simulator's own delay per request beyond the latency
            s['sim_added_ms'] = med(r['sim']['added_ms_mean'] for r in rows)
            s['sim_added_ms_p99'] = med(r['sim']['added_ms_p99'] for r in rows)
        if all('bound' in r for r in rows):
            s['bound'] = med(r['bound'] for r in rows)
            s['ratio'] = med(r['wall'] / r['bound'] for r in rows)
            s['plan_s'] = med(r['discovery_and_plan_s'] for r in rows)
            # all of the client's CPU over the steps: a bound on the
            # executor's own share per step
            s['cpu_ms_per_step'] = med(
                1000 * r['client_cpu_s'] / r['steps'] for r in rows
            )
        out.append(s)
    return out


def markdown(summary: list[dict]) -> str:
    lines = [
        '| delete durations | N | tool | repeats | wall s (median, min-max) '
        '| requests | client CPU s (ms per step) | client peak RSS MiB | '
        'discovery and '
        'plan s | critical path s | wall / bound | left behind | twin '
        'intact | simulator CPU s (ms per request, workers busy at most; '
        'the ms it added to a request beyond the latency, mean and p99, '
        'where measured) '
        '| speed-up vs cleanup |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    by_key = {(s['delete_scale'], s['n'], s['tool']): s for s in summary}
    for s in summary:
        wall = f'{s["wall"]:.1f} ({s["wall_min"]:.1f}-{s["wall_max"]:.1f})'
        if s['hit_limit']:
            wall += f', {s["hit_limit"]} at the {s["limit"]:g} s limit'
        speedup = ''
        cleanup = by_key.get((s['delete_scale'], s['n'], CLEANUP))
        if s['tool'] == CASCADE and cleanup:
            ratio = cleanup['wall'] / s['wall']
            if cleanup['failed'] * 2 > cleanup['repeats']:
                # it stopped early: its time says nothing of a cleanup
                speedup = (
                    f'none: cleanup failed {cleanup["failed"]} of '
                    f'{cleanup["repeats"]} times'
                )
            elif cleanup['hit_limit'] * 2 > cleanup['repeats']:
                speedup = f'more than {ratio:.1f}x (cleanup at its limit)'
            else:
                speedup = f'{ratio:.1f}x'
            if cleanup['left']:
                speedup += f'; cleanup left {cleanup["left"]:.0f}'
        lines.append(
            f'| x{s["delete_scale"]:g} | {s["n"]} | {s["tool"]} | '
            f'{s["repeats"]} | {wall} | {s["requests"]:.0f} | '
            f'{s["client_cpu_s"]:.1f}'
            + (
                f' ({s["cpu_ms_per_step"]:.1f})'
                if 'cpu_ms_per_step' in s
                else ''
            )
            + f' | {s["client_peak_rss_mib"]:.0f} | '
            + (f'{s["plan_s"]:.1f}' if 'plan_s' in s else '')
            + ' | '
            + (f'{s["bound"]:.1f}' if 'bound' in s else '')
            + ' | '
            + (f'{s["ratio"]:.2f}' if 'ratio' in s else '')
            + f' | {s["left"]:.0f} | {_yes_no(s["twin_intact"])} '
            f'| {s["sim_cpu_s"]:.1f} ({s["sim_ms_per_request"]:.2f}, '
            f'{s["sim_busy_max"]}/{s["workers"]}'
            + (
                f'; {s["sim_added_ms"]:.2f}, {s["sim_added_ms_p99"]:.1f}'
                if 'sim_added_ms' in s
                else ''
            )
            + f') | {speedup} |'
        )
    return '\n'.join(lines) + '\n'


def _yes_no(value: bool | None) -> str:
    return 'n/a' if value is None else 'yes' if value else 'NO'


def plot(summary: list[dict], path: str, latency_ms) -> bool:
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        run.log(
            'matplotlib is not installed: no plot (tox -e bench-sim has it)'
        )
        return False
    fig, ax = plt.subplots(figsize=(7.5, 5))
    styles = {1: '-', 10: '--'}
    for scale in sorted({s['delete_scale'] for s in summary}):
        line = styles.get(scale, ':')
        for tool, marker, label in (
            (CLEANUP, 'o', 'openstack project cleanup'),
            (CASCADE, 's', 'project delete --cascade'),
        ):
            rows = [
                s
                for s in summary
                if s['tool'] == tool and s['delete_scale'] == scale
            ]
            if not rows:
                continue
            ax.plot(
                [r['n'] for r in rows],
                [r['wall'] for r in rows],
                marker + line,
                label=f'{label}, deletes x{scale:g}',
            )
            for r in rows:
                if r['hit_limit'] or r['left'] or r['failed']:
                    ax.annotate(
                        'failed'
                        if r['failed']
                        else 'limit'
                        if r['hit_limit']
                        else f'{r["left"]:.0f} left',
                        (r['n'], r['wall']),
                        textcoords='offset points',
                        xytext=(6, -4),
                        fontsize=8,
                    )
            if tool == CASCADE and all('bound' in r for r in rows):
                ax.plot(
                    [r['n'] for r in rows],
                    [r['bound'] for r in rows],
                    'kx' + line,
                    label=f'critical-path bound, deletes x{scale:g}',
                )
    planning = sorted(
        (s['n'], s['plan_s'] if s['tool'] == CASCADE else s['wall'])
        for s in summary
        if s['delete_scale'] == 1 and ('plan_s' in s or s['tool'] == DRY_RUN)
    )
    if planning:
        ax.plot(
            [n for n, _ in planning],
            [t for _, t in planning],
            'v:',
            color='grey',
            label='cascade discovery and plan (alone: --dry-run)',
        )
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('resources per project (N)')
    ax.set_ylabel('wall time (s)')
    ax.set_title(f'Simulated cloud, {latency_ms:g} ms per request')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def readme_section(summary: list[dict], latency_ms) -> str:
    """README.rst's Performance section: each tool's medians at the
    minicloud's delete durations, the client's CPU per request beside
    them, and the plot."""
    header = [
        'N',
        'tool',
        'runs',
        'wall s',
        'bound s',
        'ratio',
        'requests',
        'CPU ms/req',
        'RSS MiB',
        'sim ms/req',
        'left',
    ]
    rows = []
    for s in summary:
        if s['delete_scale'] != 1:
            continue
        bound = 'bound' in s
        rows.append(
            [
                f'{s["n"]:,}',
                s['tool'],
                str(s['repeats']),
                f'{s["wall"]:.1f}',
                f'{s["bound"]:.1f}' if bound else '..',
                f'{s["ratio"]:.2f}' if bound else '..',
                f'{s["requests"]:,.0f}',
                f'{1000 * s["client_cpu_s"] / s["requests"]:.2f}',
                f'{s["client_peak_rss_mib"]:.0f}',
                f'{s["sim_ms_per_request"]:.2f}',
                '..'
                if s['tool'] == DRY_RUN
                else 'failed'
                if s['failed'] * 2 > s['repeats']
                else f'{s["left"]:.0f}',
            ]
        )
    widths = [max(map(len, column)) for column in zip(header, *rows)]
    rule = '  '.join('=' * w for w in widths)

    def line(cells):
        return '  '.join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    prose = (
        f'A project of N resources on the simulated cloud ({latency_ms:g} ms '
        "per request, the minicloud's delete durations), medians of the "
        'runs. bound: the plan\'s critical path; ratio: wall over bound; CPU '
        "and RSS: the client's; sim: the simulator's CPU; left: what the tool "
        'left; ``..``: does not apply. `What they mean '
        '<doc/source/contributor/performance.rst>`_.'
    )
    return (
        textwrap.fill(prose, 72)
        + '\n\n'
        + '\n'.join([rule, line(header), rule, *map(line, rows), rule])
        + '\n\n.. image:: benchmarks/results/sim-time-vs-n.png\n'
    )


def report(runs: list[dict], outdir: str, readme: str | None = None) -> str:
    """The tables and the plot in ``outdir``, and ``readme``'s Performance
    section (README.rst, where the results are the repository's own)."""
    summary = summarize(runs)
    table = markdown(summary)
    write_tables(outdir, 'sim-results', table)
    latency = runs[0]['latency_ms'] if runs else 0
    plot(summary, os.path.join(outdir, 'sim-time-vs-n.png'), latency)
    if readme:
        replace_section(
            readme, 'performance', readme_section(summary, latency)
        )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )

    def numbers(kind):
        return lambda s: [kind(x) for x in s.split(',')]

    parser.add_argument('--sweep', default=[1000, 10000], type=numbers(int))
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument(
        '--delete-scale',
        default=[1.0],
        type=numbers(float),
        help='multiply the assumed delete durations (default: 1; the '
        'sensitivity run: 10)',
    )
    parser.add_argument(
        '--tools',
        default=[CLEANUP, CASCADE],
        type=lambda s: s.split(','),
        help=f'of {CLEANUP}, {CASCADE} and {DRY_RUN} (default: the first two)',
    )
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument(
        '--workers',
        type=int,
        default=1000,
        help='workers per service of the simulated cloud',
    )
    parser.add_argument(
        '--parallel',
        type=int,
        default=50,
        help="the cascade's --parallel, the ceiling over its per-service "
        'slots (default: 50: the simulated cloud does not limit, and at 10 '
        'the ceiling is what the cascade waits for at N=10,000)',
    )
    parser.add_argument(
        '--cleanup-limit',
        type=float,
        default=600.0,
        help='seconds after which project cleanup is stopped: it did not '
        'finish (default: 600)',
    )
    parser.add_argument('--cascade-limit', type=float, default=7200.0)
    parser.add_argument('--out', default=os.path.join(HERE, 'results'))
    parser.add_argument(
        '--cascade-args',
        default='',
        help="more of the cascade's options (e.g. '--workers 0')",
    )
    parser.add_argument('--append', action='store_true')
    parser.add_argument('--report-only', action='store_true')
    args = parser.parse_args(argv)
    results_file = os.path.join(args.out, RESULTS)
    # README.rst's figures are the repository's results, no other's
    readme = (
        os.path.join(run.REPO, 'README.rst')
        if os.path.abspath(args.out) == os.path.join(HERE, 'results')
        else None
    )
    runs = load_results(results_file) if args.report_only else sweep(args)
    print(report(runs, args.out, readme))
    return 0


if __name__ == '__main__':
    sys.exit(main())
