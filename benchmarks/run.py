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
import statistics
import subprocess
import sys
import time
from typing import Any
import uuid

from benchmarks import bound, cpu, generate, log
from benchmarks.proxy import ProxyProcess
from benchmarks.results import (
    CASCADE,
    CLEANUP,
    load_results,
    markdown,
    report,
    save_results,
    summarize,
)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
#: what project cleanup must not touch on a shared cloud (see tool_command)
CLEANUP_SKIPS = (
    '--skip-resource',
    'orchestration.stack',
    '--skip-resource',
    'load_balancer.load_balancer',
)


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
