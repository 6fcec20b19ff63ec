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
cleanup``, on identical twin projects, through the latency proxy.

    python -m benchmarks.run --sweep 100,300 --repeats 2 --latency-ms 50

For each N of the sweep and each repeat it builds two identical projects
(benchmarks.generate), deletes one with ``openstack project cleanup
--project P --auto-approve`` and the other with ``openstack project delete
--cascade --yes``, the order alternating between repeats, both through
tools/cloudproxy (the same added latency, every request counted), and
records per tool: wall time, requests by service and method, what is left
of the project (admin listings by owner, independent of both tools) and
whether the twin was touched, and the CPU time of the cloud; for the
cascade also its critical-path bound, computed from its own plan and the
measured time of each step (``--report-file``), the bound of its cloud's
CPU time over the cores, and the ratio wall / the larger bound. What a
tool left behind is then deleted without the proxy (not timed), so that
the cloud is clean.

Results: ``<out>/results.json`` (every run, appended as it finishes),
``<out>/results.md`` (the table) and ``<out>/time-vs-n.png``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from typing import Any
import uuid

from benchmarks import bound, cpu, generate

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROXY = os.path.join(REPO, 'tools', 'cloudproxy')
CLEANUP = 'cleanup'
#: what project cleanup must not touch on a shared cloud (see tool_command)
CLEANUP_SKIPS = (
    '--skip-resource',
    'orchestration.stack',
    '--skip-resource',
    'load_balancer.load_balancer',
)
CASCADE = 'cascade'


def minicloud_home() -> str:
    return os.environ.get('MINICLOUD_HOME') or os.path.join(REPO, '.minicloud')


def default_clouds_yaml() -> str:
    return os.environ.get('OS_CLIENT_CONFIG_FILE') or os.path.join(
        minicloud_home(), 'clouds.yaml'
    )


def proxy_state_dir() -> str:
    """Where the proxy keeps its state and its clouds.yaml (which holds
    the cloud's credentials): beside the minicloud's, not in the results."""
    return os.path.join(minicloud_home(), 'proxy-bench')


def openstack_bin() -> str:
    here = os.path.join(os.path.dirname(sys.executable), 'openstack')
    return here if os.path.exists(here) else 'openstack'


def log(msg: str) -> None:
    print(time.strftime('%H:%M:%S ') + msg, file=sys.stderr, flush=True)


# -- the proxy ----------------------------------------------------------------


class ProxyProcess:
    """tools/cloudproxy as a child process, driven through its control
    port."""

    def __init__(
        self,
        state_dir: str,
        clouds_yaml: str,
        cloud: str,
        *,
        latency_ms: float,
        client_timeout: float,
        fault_rate: float = 0.0,
        seed: int = 0,
        extra: list[str] | None = None,
    ):
        self.state_dir = state_dir
        os.makedirs(state_dir, exist_ok=True)
        state = os.path.join(state_dir, 'state.json')
        if os.path.exists(state):
            os.unlink(state)
        cmd = [
            sys.executable,
            PROXY,
            '--state-dir',
            state_dir,
            'up',
            '--clouds-yaml',
            clouds_yaml,
            '--cloud',
            cloud,
            '--latency-ms',
            str(latency_ms),
            '--client-timeout',
            str(client_timeout),
            '--fault-rate',
            str(fault_rate),
            '--seed',
            str(seed),
            '--stats-file',
            os.path.join(state_dir, 'stats-at-exit.json'),
            *(extra or []),
        ]
        self.log = open(os.path.join(state_dir, 'proxy.log'), 'w')
        self.proc = subprocess.Popen(
            cmd, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 120
        while not os.path.exists(state):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f'cloudproxy did not start: see {self.log.name}'
                )
            time.sleep(0.2)
        time.sleep(0.2)
        with open(state) as f:
            self.state = json.load(f)
        self.clouds_yaml = self.state['clouds_yaml']

    def _call(self, method: str, path: str, data: Any = None) -> Any:
        import urllib.request

        req = urllib.request.Request(
            self.state['control'] + path,
            method=method,
            data=None if data is None else json.dumps(data).encode(),
            headers={'Content-Type': 'application/json'},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)

    def stats(self, reset: bool = False) -> dict:
        return self._call('GET', '/stats' + ('?reset=1' if reset else ''))

    def configure(self, **update: Any) -> dict:
        return self._call('POST', '/config', update)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


# -- one tool on one project --------------------------------------------------


def tool_command(
    tool: str,
    project_id: str,
    *,
    cloud: str,
    parallel: int,
    report: str | None = None,
) -> list[str]:
    base = [openstack_bin(), '--os-cloud', cloud]
    if tool == CLEANUP:
        # As admin, Heat and Octavia list every project's stacks and load
        # balancers to a token scoped to any project, and project cleanup
        # deletes what it lists: without these it deletes the stacks and
        # load balancers of the whole cloud (the twin's too: measured).
        return [
            *base,
            'project',
            'cleanup',
            '--project',
            project_id,
            '--auto-approve',
            *CLEANUP_SKIPS,
        ]
    cmd = [
        *base,
        'project',
        'delete',
        '--cascade',
        '--yes',
        '--parallel',
        str(parallel),
    ]
    if report:
        cmd += ['--report-file', report]
    return [*cmd, project_id]


def run_tool(
    cmd: list[str], clouds_yaml: str, logfile: str, timeout: float
) -> tuple[int, float]:
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=clouds_yaml)
    started = time.monotonic()
    with open(logfile, 'w') as out:
        out.write('$ ' + ' '.join(cmd) + '\n')
        out.flush()
        try:
            code = subprocess.run(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                timeout=timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            code = -1
            out.write(f'\n[benchmark] killed after {timeout}s\n')
    return code, time.monotonic() - started


def kinds_of(resources: set[tuple[str, str]]) -> dict[str, int]:
    return dict(sorted(collections.Counter(k for k, _ in resources).items()))


def tidy(admin: Any, project_id: str, logfile: str) -> bool:
    """Delete what a tool left (and the project), without the proxy."""
    if _project(admin, project_id) is None:
        return True
    code, _ = run_tool(
        [
            openstack_bin(),
            '--os-cloud',
            'minicloud-admin',
            'project',
            'delete',
            '--cascade',
            '--yes',
            project_id,
        ],
        default_clouds_yaml(),
        logfile,
        timeout=1800,
    )
    return code == 0


def _project(admin: Any, project_id: str) -> Any:
    try:
        return admin.identity.get_project(project_id)
    except Exception:  # gone
        return None


def measure(
    admin: Any,
    auditor: Any,
    proxy: ProxyProcess,
    tool: str,
    project: dict,
    twin: dict | None,
    *,
    outdir: str,
    tag: str,
    parallel: int,
    timeout: float,
    clouds_yaml: str | None = None,
) -> dict[str, Any]:
    """One tool on one project, through the proxy (``clouds_yaml``: a
    file of the proxy's clouds to use instead of its own), and whether it
    touched ``twin``, a project no tool has worked on (None: none is left
    to check; its ``twin_intact`` is None)."""
    pid = project['id']
    report = os.path.join(outdir, f'{tag}-{tool}-report.json')
    cmd = tool_command(
        tool,
        pid,
        cloud='minicloud-admin-proxied',
        parallel=parallel,
        report=report,
    )
    twin_before = owned(admin, auditor, twin) if twin else None
    proxy.stats(reset=True)
    meter = cpu.Meter(cpu.minicloud_groups(minicloud_home()), proxy.proc.pid)
    log(f'{tag}: {tool} on {project["name"]} ...')
    meter.start()
    code, wall = run_tool(
        cmd,
        clouds_yaml or proxy.clouds_yaml,
        os.path.join(outdir, f'{tag}-{tool}.log'),
        timeout,
    )
    used = meter.stop(wall)
    stats = proxy.stats(reset=True)
    left = owned(admin, auditor, project)
    twin_after = owned(admin, auditor, twin) if twin else None
    row: dict[str, Any] = {
        'tool': tool,
        'project': project['name'],
        'exit_code': code,
        'wall': round(wall, 2),
        'requests': stats['total'],
        'requests_by_service': stats['requests'],
        'routes': stats['routes'],
        'statuses': stats['statuses'],
        # seconds the services took to answer, summed per service and
        # route (concurrent requests overlap: a sum, not a busy time)
        'service_seconds': stats.get('service_seconds', {}),
        'route_seconds': stats.get('route_seconds', {}),
        'before': len(project['before']),
        'left': len(left),
        'left_by_kind': kinds_of(left),
        'project_deleted': _project(admin, pid) is None,
        'twin_intact': None if twin is None else twin_after == twin_before,
        'twin_lost': []
        if twin is None
        else sorted(f'{k} {i}' for k, i in twin_before - twin_after),
        # while the tool ran: a cloud near 100 % busy sets the wall time
        'cpu': used,
    }
    if tool == CASCADE and os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
        b = bound.bounds(
            rep['plan'],
            rep['rounds'][0] if rep['rounds'] else [],
            rep['parallel'],
        )
        row.update(
            {
                'bound': b['critical_path'],
                'graham': b['graham'],
                'work': b['work'],
                'executed_span': b['executed_span'],
                'steps': b['steps'],
                'critical_steps': b['critical_steps'],
                'ready_delay_mean': b['ready_delay_mean'],
                'ready_delay_max': b['ready_delay_max'],
                'queued_total': b['queued_total'],
                'queued_by_service': b['queued_by_service'],
                'phases': rep['phases'],
                'rounds': len(rep['rounds']),
                # the first round's, as the bound's: the API slots of
                # each service at its end, the fewest and the most
                'slots': (rep.get('slots') or [{}])[0],
                'attempts': sum(
                    r['attempts'] for rd in rep['rounds'] for r in rd
                ),
                'failed_steps': sum(
                    1
                    for rd in rep['rounds']
                    for r in rd
                    if r['outcome'] == 'failed'
                ),
                'slowest_kinds': slowest_kinds(
                    rep['rounds'][0] if rep['rounds'] else []
                ),
            }
        )
    log(
        f'{tag}: {tool}: exit {code}, {wall:.1f}s, {stats["total"]} '
        f'requests, {len(left)} left, cloud {used["cloud_busy"]:.0%} busy'
        + (f', bound {row["bound"]:.1f}s' if 'bound' in row else '')
    )
    return row


def slowest_kinds(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per step kind and action: count, mean and max seconds."""
    per: dict[str, list[float]] = collections.defaultdict(list)
    for r in rows:
        per[f'{r["action"]} {r["kind"]}'].append(r['seconds'])
    return {
        k: {
            'n': len(v),
            'mean': round(statistics.mean(v), 3),
            'max': round(max(v), 3),
        }
        for k, v in sorted(per.items(), key=lambda kv: -max(kv[1]))
    }


def owned(
    admin: Any, auditor: Any, project: dict, *, attempts: int = 4
) -> set[tuple[str, str]]:
    """What the project still owns; asked again when a service fails
    the question (a reset or a 5xx of an overloaded service)."""
    for attempt in range(1, attempts + 1):
        try:
            return generate.owned(
                admin,
                project['id'],
                auditor=auditor,
                stacks=project.get('ids', {}).get('orchestration.stack', []),
            )
        except Exception as exc:  # retried, then raised
            if attempt == attempts:
                raise
            log(f'listing what {project["name"]} owns failed, again: {exc}')
            time.sleep(5 * attempt)
    raise AssertionError('unreachable')


# -- the sweep ----------------------------------------------------------------


def sweep(args: argparse.Namespace) -> list[dict]:
    import openstack

    clouds_yaml = default_clouds_yaml()
    os.environ['OS_CLIENT_CONFIG_FILE'] = clouds_yaml
    admin = openstack.connect(cloud='minicloud-admin')
    auditor = generate.auditor(admin)
    os.makedirs(args.out, exist_ok=True)
    results_file = os.path.join(args.out, 'results.json')
    results = load_results(results_file) if args.append else []
    raw = os.path.join(args.out, 'raw')
    os.makedirs(raw, exist_ok=True)
    proxy = ProxyProcess(
        proxy_state_dir(),
        clouds_yaml,
        'minicloud-admin',
        latency_ms=args.latency_ms,
        client_timeout=args.client_timeout,
    )
    try:
        for n in args.sweep:
            for rep in range(
                args.start_repeat, args.start_repeat + args.repeats
            ):
                tag = f'n{n}-r{rep}-{uuid.uuid4().hex[:4]}'
                log(f'{tag}: building twins of {n} resources')
                started = time.monotonic()
                try:
                    made = generate.build_twins(
                        admin,
                        n,
                        f'cbench-{tag}',
                        twins=2,
                        threads=args.threads,
                        log=log,
                    )
                except Exception as exc:  # next repeat
                    # the cloud failed a create (an overloaded service
                    # resets connections): tidy, note, go on
                    log(f'{tag}: building failed, repeat skipped: {exc}')
                    # by name: Keystone's list_limit (the minicloud's is
                    # 2) cuts a listing of every project
                    for p in (
                        p
                        for twin in 'ab'
                        for p in admin.identity.projects(
                            name=f'cbench-{tag}-{twin}'
                        )
                    ):
                        if p.name.startswith(f'cbench-{tag}'):
                            tidy(
                                admin,
                                p.id,
                                os.path.join(
                                    raw, f'{tag}-build-failed-tidy.log'
                                ),
                            )
                    results.append(
                        {
                            'n': n,
                            'repeat': rep,
                            'tag': tag,
                            'build_failed': str(exc),
                            'tools': {},
                        }
                    )
                    save_results(results_file, results)
                    continue
                build_seconds = time.monotonic() - started
                for p in made:
                    p['before'] = owned(admin, auditor, p)
                order = (
                    [CLEANUP, CASCADE] if rep % 2 == 0 else [CASCADE, CLEANUP]
                )
                run = {
                    'n': n,
                    'repeat': rep,
                    'tag': tag,
                    'latency_ms': args.latency_ms,
                    'parallel': args.parallel,
                    'build_seconds': round(build_seconds, 1),
                    'mix': made[0]['counts'],
                    'listed_before': len(made[0]['before']),
                    'order': order,
                    'tools': {},
                }
                for i, tool in enumerate(order):
                    # the second tool's twin is the project the first
                    # worked on: nothing there to check
                    project, twin = made[i], (made[1] if i == 0 else None)
                    run['tools'][tool] = measure(
                        admin,
                        auditor,
                        proxy,
                        tool,
                        project,
                        twin,
                        outdir=raw,
                        tag=tag,
                        parallel=args.parallel,
                        timeout=args.tool_timeout,
                    )
                for i, tool in enumerate(order):
                    ok = tidy(
                        admin,
                        made[i]['id'],
                        os.path.join(raw, f'{tag}-{tool}-tidy.log'),
                    )
                    run['tools'][tool]['tidied'] = ok
                results.append(run)
                save_results(results_file, results)
                report(results, args.out)
    finally:
        proxy.stop()
    return results


def load_results(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)['runs']


def save_results(path: str, runs: list[dict]) -> None:
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump({'format': 1, 'runs': runs}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


# -- the report ---------------------------------------------------------------


def twin_intact(rows: list[dict]) -> bool | None:
    """Whether every run that had a twin left it intact (None: no run
    had one)."""
    checked = [r['twin_intact'] for r in rows if r['twin_intact'] is not None]
    return all(checked) if checked else None


def yes_no(intact: bool | None) -> str:
    return 'not checked' if intact is None else 'yes' if intact else 'NO'


def summarize(runs: list[dict]) -> list[dict]:
    """One row per (N, tool): medians over the repeats."""
    groups: dict[tuple[int, str], list[dict]] = collections.defaultdict(list)
    for run in runs:
        if run.get('superseded'):
            continue  # kept in results.json, with the reason
        for tool, row in run['tools'].items():
            groups[(run['n'], tool)].append(
                dict(row, latency=run.get('latency_ms'))
            )
    out = []
    for (n, tool), rows in sorted(groups.items()):
        walls = [r['wall'] for r in rows]
        s = {
            'n': n,
            'tool': tool,
            'repeats': len(rows),
            'wall': statistics.median(walls),
            'wall_min': min(walls),
            'wall_max': max(walls),
            'requests': statistics.median(r['requests'] for r in rows),
            'before': statistics.median(r['before'] for r in rows),
            'left': max(r['left'] for r in rows),
            'left_by_kind': rows[0]['left_by_kind'],
            'twin_intact': twin_intact(rows),
            'ok': all(r['exit_code'] == 0 for r in rows),
            'latency': rows[0].get('latency'),
        }
        by_method: dict[str, int] = collections.Counter()
        for service, methods in rows[0]['requests_by_service'].items():
            for method, count in methods.items():
                by_method[method] += count
        s['by_method'] = dict(sorted(by_method.items()))
        if all('cpu' in r for r in rows):
            s['cloud_cpu'] = statistics.median(
                r['cpu']['cloud_cpu_s'] for r in rows
            )
            s['cloud_busy'] = statistics.median(
                r['cpu']['cloud_busy'] for r in rows
            )
        if all('bound' in r for r in rows):
            s['bound'] = statistics.median(r['bound'] for r in rows)
            s['ratio'] = statistics.median(
                r['wall'] / lower_bound(r) if lower_bound(r) else 0
                for r in rows
            )
            if all('cpu' in r for r in rows):
                s['cpu_bound'] = statistics.median(cpu_bound(r) for r in rows)
        out.append(s)
    return out


def cpu_bound(row: dict) -> float:
    """No run that makes the cloud do this much work is over sooner on
    these cores: the cloud's CPU seconds over the machine's cores."""
    return row['cpu']['cloud_cpu_s'] / row['cpu']['cores']


def lower_bound(row: dict) -> float:
    """The tighter of the two bounds of a cascade run: its critical path,
    and its cloud's work over the cores."""
    return max(row['bound'], cpu_bound(row) if 'cpu' in row else 0.0)


def markdown(summary: list[dict]) -> str:
    lines = [
        '| N | tool | wall s (median, min-max) | requests (GET/POST/PUT/'
        'DELETE) | listed before | left behind | twin intact | '
        'cloud CPU s (busy) | critical path s | cloud CPU / cores s | '
        'wall / bound | speed-up vs cleanup |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    walls = {(s['n'], s['tool']): s['wall'] for s in summary}
    lefts = {(s['n'], s['tool']): s['left'] for s in summary}
    for s in summary:
        m = s['by_method']
        methods = '/'.join(
            str(m.get(k, 0)) for k in ('GET', 'POST', 'PUT', 'DELETE')
        )
        left = str(s['left'])
        if s['left']:
            left += (
                ' ('
                + ', '.join(
                    f'{v} {k.split(".")[-1]}'
                    for k, v in s['left_by_kind'].items()
                )
                + ')'
            )
        speedup = ''
        cleanup = walls.get((s['n'], CLEANUP))
        if s['tool'] == CASCADE and cleanup:
            speedup = f'{cleanup / s["wall"]:.1f}x'
            if s['left']:
                speedup += ' (left resources)'
            elif lefts.get((s['n'], CLEANUP)):
                # a tool that leaves resources does not win on time
                speedup += (
                    f' (cleanup left {lefts[(s["n"], CLEANUP)]}: '
                    f'it did not finish)'
                )
        bound_text = f'{s["bound"]:.1f}' if 'bound' in s else ''
        cpu_text = f'{s["cpu_bound"]:.1f}' if 'cpu_bound' in s else ''
        ratio = f'{s["ratio"]:.2f}' if 'ratio' in s else ''
        busy = (
            f'{s["cloud_cpu"]:.0f} ({s["cloud_busy"]:.0%})'
            if 'cloud_cpu' in s
            else ''
        )
        lines.append(
            f'| {s["n"]} | {s["tool"]} | {s["wall"]:.1f} '
            f'({s["wall_min"]:.1f}-{s["wall_max"]:.1f}) | '
            f'{s["requests"]:.0f} ({methods}) | {s["before"]:.0f} | {left} '
            f'| {yes_no(s["twin_intact"])} | {busy} | '
            f'{bound_text} | {cpu_text} | {ratio} | {speedup} |'
        )
    return '\n'.join(lines) + '\n'


def phases_markdown(runs: list[dict]) -> str:
    """Where the cascade's wall time goes, medians per N."""
    per_n: dict[int, list[dict]] = collections.defaultdict(list)
    for run in runs:
        if run.get('superseded'):
            continue
        row = run['tools'].get(CASCADE)
        if row and 'phases' in row:
            per_n[run['n']].append(row)
    lines = [
        '| N | wall s | client start, auth, project lookup and delete s | '
        'discovery and plan s | plan run (first to last step) s | drain '
        'and verification rounds s | critical path s | plan run / '
        'critical path | ready-step wait, mean s |',
        '|---|---|---|---|---|---|---|---|---|',
    ]
    med = statistics.median
    for n, rows in sorted(per_n.items()):
        wall = med(r['wall'] for r in rows)
        plan = med(r['phases']['plan'] for r in rows)
        span = med(r['executed_span'] for r in rows)
        cp = med(r['bound'] for r in rows)
        outside = med(
            r['wall'] - r['phases']['plan'] - r['phases']['execute']
            for r in rows
        )
        rest = med(r['phases']['execute'] - r['executed_span'] for r in rows)
        lines.append(
            f'| {n} | {wall:.1f} | {outside:.1f} | {plan:.1f} | {span:.1f} '
            f'| {rest:.1f} | {cp:.1f} | {span / cp if cp else 0:.2f} | '
            f'{med(r.get("ready_delay_mean", 0) for r in rows):.2f} |'
        )
    return '\n'.join(lines) + '\n'


def plot(summary: list[dict], path: str) -> bool:
    try:
        import matplotlib

        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        log('matplotlib is not installed: no plot (tox -e bench has it)')
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for tool, style in ((CLEANUP, 'o-'), (CASCADE, 's-')):
        rows = [s for s in summary if s['tool'] == tool]
        if not rows:
            continue
        xs = [r['n'] for r in rows]
        ax.errorbar(
            xs,
            [r['wall'] for r in rows],
            yerr=[
                [r['wall'] - r['wall_min'] for r in rows],
                [r['wall_max'] - r['wall'] for r in rows],
            ],
            fmt=style,
            capsize=3,
            label=(
                'openstack project cleanup'
                if tool == CLEANUP
                else 'project delete --cascade'
            ),
        )
        if tool == CASCADE and all('bound' in r for r in rows):
            ax.plot(
                xs,
                [r['bound'] for r in rows],
                'kx--',
                label='cascade critical-path bound',
            )
        if tool == CASCADE and all('cpu_bound' in r for r in rows):
            ax.plot(
                xs,
                [r['cpu_bound'] for r in rows],
                'g+:',
                label="the cascade's cloud CPU / cores",
            )
        for r in rows:
            if r['left']:
                ax.annotate(
                    f'{r["left"]} left',
                    (r['n'], r['wall']),
                    textcoords='offset points',
                    xytext=(6, -4),
                    fontsize=8,
                )
    latency = summary[0].get('latency') if summary else None
    ax.set_xlabel('resources per project (N)')
    ax.set_ylabel('wall time (s)')
    ax.set_title(
        f'Deleting a project, {latency:g} ms added latency'
        if latency is not None
        else 'Deleting a project'
    )
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def list_table(table: str) -> str:
    """A Markdown table as an RST list-table (for README.rst)."""
    rows = [
        [cell.strip() for cell in line.strip().strip('|').split('|')]
        for line in table.strip().splitlines()
        if not set(line) <= set('|-')
    ]
    out = ['.. list-table::', '   :header-rows: 1', '']
    for row in rows:
        out += [
            f'   {"*" if i == 0 else " "} - {cell}'.rstrip()
            for i, cell in enumerate(row)
        ]
    return '\n'.join(out) + '\n'


def report(runs: list[dict], outdir: str) -> None:
    summary = summarize(runs)
    tables = [markdown(summary), phases_markdown(runs)]
    with open(os.path.join(outdir, 'results.md'), 'w') as f:
        f.write('\n'.join(tables))
    with open(os.path.join(outdir, 'results.rst'), 'w') as f:
        f.write('\n'.join(list_table(t) for t in tables))
    plot(summary, os.path.join(outdir, 'time-vs-n.png'))


def counts(text: str) -> list[int]:
    """``--sweep``'s resource counts: ``1000,10000``."""
    return [int(x) for x in text.split(',')]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        '--sweep',
        default='100,300',
        type=counts,
        help='resource counts N (default: 100,300)',
    )
    parser.add_argument('--repeats', type=int, default=2)
    parser.add_argument(
        '--start-repeat',
        type=int,
        default=0,
        help='number of the first repeat: an odd one runs '
        'the cascade first (default: 0)',
    )
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument(
        '--parallel',
        type=int,
        default=10,
        help='--parallel of the cascade (default: 10)',
    )
    parser.add_argument(
        '--threads',
        type=int,
        default=8,
        help='threads of the project generator',
    )
    parser.add_argument('--client-timeout', type=float, default=300.0)
    parser.add_argument('--tool-timeout', type=float, default=3600.0)
    parser.add_argument('--out', default=os.path.join(HERE, 'results'))
    parser.add_argument(
        '--append',
        action='store_true',
        help='add to the runs already in <out>',
    )
    parser.add_argument(
        '--report-only',
        action='store_true',
        help='redo the table and plot from results.json',
    )
    args = parser.parse_args(argv)
    if args.report_only:
        runs = load_results(os.path.join(args.out, 'results.json'))
        report(runs, args.out)
        print(markdown(summarize(runs)))
        return 0
    runs = sweep(args)
    print(markdown(summarize(runs)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
