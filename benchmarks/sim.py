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
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any
import urllib.request

from benchmarks import bound, run, simreport
from benchmarks.results import (
    load_results,
    save_results,
)
from benchmarks.simreport import DRY_RUN

HERE = os.path.dirname(os.path.abspath(__file__))
CLEANUP, CASCADE = run.CLEANUP, run.CASCADE
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
                simreport.report(runs, args.out)
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
    print(simreport.report(runs, args.out, readme))
    return 0


if __name__ == '__main__':
    sys.exit(main())
