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

"""The cascade under injected faults, and killed half-way.

    python -m benchmarks.faults -n 100 --fault-rate 0.1 --kill-n 60

1. Faults: twins A and B; ``project delete --cascade`` of A through
   tools/cloudproxy injecting ``--fault-rate`` failures (503 answers,
   connection resets, answers held beyond the client timeout) into every
   service but Keystone. Expected: everything of A is gone, B is exactly as
   it was. Reported: faults injected by kind, the steps' attempts beyond
   the first (retries), the verification rounds, the time.
2. Kills: for each of three points (right after the drain, a third of the
   way through the deletes, nine tenths of the way), a new project A' (the
   twin of B) whose cascade is killed with SIGKILL at that point, then run
   again to the end. Expected: A' is gone, B is exactly as it was.

Results: ``<out>/faults.json`` and ``<out>/faults.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any
import uuid

from benchmarks import generate
from benchmarks.run import (
    CASCADE,
    ProxyProcess,
    default_clouds_yaml,
    log,
    openstack_bin,
    owned,
    proxy_state_dir,
    tidy,
    tool_command,
)


def cascade_plan_size(project_id: str, outdir: str) -> int:
    """Steps of the plan (a dry run without the proxy)."""
    path = os.path.join(outdir, f'plan-{project_id}.json')
    subprocess.run(
        [
            openstack_bin(),
            '--os-cloud',
            'minicloud-admin',
            'project',
            'delete',
            '--cascade',
            '--dry-run',
            '--plan-file',
            path,
            '-f',
            'value',
            project_id,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env=dict(os.environ, OS_CLIENT_CONFIG_FILE=(default_clouds_yaml())),
    )
    with open(path) as f:
        return len(json.load(f)['steps'])


def deletes_seen(stats: dict) -> int:
    return sum(
        methods.get('DELETE', 0)
        for service, methods in stats['requests'].items()
        if service != 'identity'
    )


def drained(stats: dict) -> bool:
    return any(
        route.startswith('identity PATCH /v3/projects/')
        for route in stats['routes']
    )


def run_cascade(
    proxy: ProxyProcess,
    project_id: str,
    report: str,
    logfile: str,
    parallel: int,
    *,
    kill_when=None,
    timeout: float = 1800,
) -> dict[str, Any]:
    """The cascade through the proxy; ``kill_when(stats)`` true kills it
    with SIGKILL."""
    cmd = tool_command(
        CASCADE,
        project_id,
        cloud='minicloud-admin-proxied',
        parallel=parallel,
        report=report,
    )
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=proxy.clouds_yaml)
    proxy.stats(reset=True)
    started = time.monotonic()
    killed = False
    with open(logfile, 'w') as out:
        out.write('$ ' + ' '.join(cmd) + '\n')
        out.flush()
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        while proc.poll() is None:
            if time.monotonic() - started > timeout:
                proc.kill()
                break
            if kill_when is not None and kill_when(proxy.stats()):
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(0.1)
        code = proc.wait()
    wall = time.monotonic() - started
    stats = proxy.stats(reset=True)
    row: dict[str, Any] = {
        'exit_code': code,
        'killed': killed,
        'wall': round(wall, 2),
        'requests': stats['total'],
        'deletes': deletes_seen(stats),
        'faults': stats['faults'],
        'faults_total': stats['faults_total'],
        'statuses': stats['statuses'],
    }
    if os.path.exists(report) and not killed:
        with open(report) as f:
            rep = json.load(f)
        rows = [r for rd in rep['rounds'] for r in rd]
        row.update(
            {
                'rounds': len(rep['rounds']),
                'steps': len(rep['rounds'][0]) if rep['rounds'] else 0,
                'retries': sum(max(0, r['attempts'] - 1) for r in rows),
                'failed_steps': sum(
                    1 for r in rows if r['outcome'] == 'failed'
                ),
                'report_error': rep.get('error', ''),
            }
        )
    return row


def check(
    admin: Any, auditor: Any, a: dict, b: dict, b_before: set
) -> dict[str, Any]:
    left = owned(admin, auditor, a)
    b_after = owned(admin, auditor, b)
    try:
        admin.identity.get_project(a['id'])
        a_project_gone = False
    except Exception:  # gone
        a_project_gone = True
    return {
        'a_left': sorted(f'{k} {i}' for k, i in left),
        'a_project_deleted': a_project_gone,
        'b_intact': b_after == b_before,
        'b_lost': sorted(f'{k} {i}' for k, i in b_before - b_after),
    }


def main(argv: list[str] | None = None) -> int:
    import openstack

    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        '-n',
        type=int,
        default=100,
        help='resources per project of the fault run',
    )
    parser.add_argument(
        '--kill-n',
        type=int,
        default=60,
        help='resources per project of the kill runs',
    )
    parser.add_argument('--fault-rate', type=float, default=0.1)
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument(
        '--client-timeout',
        type=float,
        default=30.0,
        help='api_timeout of the proxied cloud; slow faults '
        'hold answers 2 s longer (default: 30)',
    )
    parser.add_argument('--seed', type=int, default=7)
    parser.add_argument('--parallel', type=int, default=10)
    parser.add_argument('--skip', default='', help='comma list: faults, kills')
    parser.add_argument(
        '--out',
        default=os.path.join(
            os.path.dirname(os.path.abspath(__file__)), 'results'
        ),
    )
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(',')))

    clouds_yaml = default_clouds_yaml()
    os.environ['OS_CLIENT_CONFIG_FILE'] = clouds_yaml
    admin = openstack.connect(cloud='minicloud-admin')
    auditor = generate.auditor(admin)
    os.makedirs(args.out, exist_ok=True)
    outdir = os.path.join(args.out, 'raw', 'faults')
    os.makedirs(outdir, exist_ok=True)
    proxy = ProxyProcess(
        proxy_state_dir() + '-faults',
        clouds_yaml,
        'minicloud-admin',
        latency_ms=args.latency_ms,
        client_timeout=args.client_timeout,
        seed=args.seed,
    )
    result: dict[str, Any] = {
        'latency_ms': args.latency_ms,
        'fault_rate': args.fault_rate,
        'client_timeout': args.client_timeout,
        'seed': args.seed,
        'parallel': args.parallel,
    }
    try:
        if 'faults' not in skip:
            tag = f'f{args.n}-{uuid.uuid4().hex[:4]}'
            a, b = generate.build_twins(
                admin, args.n, f'cbench-{tag}', twins=2, log=log
            )
            for p in (a, b):
                p['before'] = owned(admin, auditor, p)
            proxy.configure(fault_rate=args.fault_rate)
            log(
                f'{tag}: cascade of {a["name"]} with '
                f'{args.fault_rate:.0%} faults ...'
            )
            row = run_cascade(
                proxy,
                a['id'],
                os.path.join(outdir, f'{tag}-report.json'),
                os.path.join(outdir, f'{tag}.log'),
                args.parallel,
            )
            proxy.configure(fault_rate=0)
            row.update(check(admin, auditor, a, b, b['before']))
            row.update(n=args.n, listed_before=len(a['before']))
            log(f'{tag}: {row}')
            result['faults'] = row
            for p in (a, b):
                tidy(admin, p['id'], os.path.join(outdir, f'{tag}-tidy.log'))
        if 'kills' not in skip:
            tag = f'k{args.kill_n}-{uuid.uuid4().hex[:4]}'
            [b] = generate.build_twins(
                admin, args.kill_n, f'cbench-{tag}-twin', twins=1, log=log
            )
            b['before'] = owned(admin, auditor, b)
            kills = []
            for point in ('after-drain', 'third', 'nine-tenths'):
                [a] = generate.build_twins(
                    admin,
                    args.kill_n,
                    f'cbench-{tag}-{point}',
                    twins=1,
                    log=log,
                )
                a['before'] = owned(admin, auditor, a)
                steps = cascade_plan_size(a['id'], outdir)
                threshold = {
                    'after-drain': 0,
                    'third': max(1, steps // 3),
                    'nine-tenths': max(1, steps * 9 // 10),
                }[point]

                def kill_when(stats, threshold=threshold, point=point):
                    if point == 'after-drain':
                        return drained(stats)
                    return deletes_seen(stats) >= threshold

                log(
                    f'{tag}: {point}: cascade of {a["name"]} ({steps} '
                    f'steps), SIGKILL at {point} ...'
                )
                first = run_cascade(
                    proxy,
                    a['id'],
                    os.path.join(outdir, f'{tag}-{point}-1.json'),
                    os.path.join(outdir, f'{tag}-{point}-1.log'),
                    args.parallel,
                    kill_when=kill_when,
                )
                mid = owned(admin, auditor, a)
                # run again; once more if the cloud made that run fail
                # (a timeout of an overloaded service fails a verification
                # listing, and the project is then kept: never deleted on
                # a partial picture)
                reruns = []
                for attempt in (2, 3):
                    reruns.append(
                        run_cascade(
                            proxy,
                            a['id'],
                            os.path.join(
                                outdir, f'{tag}-{point}-{attempt}.json'
                            ),
                            os.path.join(
                                outdir, f'{tag}-{point}-{attempt}.log'
                            ),
                            args.parallel,
                        )
                    )
                    if reruns[-1]['exit_code'] == 0:
                        break
                row = {
                    'point': point,
                    'steps': steps,
                    'listed_before': len(a['before']),
                    'left_after_kill': len(mid),
                    'killed_run': first,
                    'second_run': reruns[0],
                    'reruns': len(reruns),
                    'rerun_wall': round(sum(r['wall'] for r in reruns), 2),
                }
                row.update(check(admin, auditor, a, b, b['before']))
                log(f'{tag}: {point}: {row}')
                kills.append(row)
                tidy(admin, a['id'], os.path.join(outdir, f'{tag}-tidy.log'))
            result['kills'] = kills
            tidy(admin, b['id'], os.path.join(outdir, f'{tag}-tidy.log'))
    finally:
        proxy.stop()
        with open(os.path.join(args.out, 'faults.json'), 'w') as f:
            json.dump(result, f, indent=1, sort_keys=True)
        with open(os.path.join(args.out, 'faults.md'), 'w') as f:
            f.write(markdown(result))
    print(markdown(result))
    return 0


def markdown(result: dict[str, Any]) -> str:
    lines = []
    f = result.get('faults')
    if f:
        kinds = {}
        for per in f['faults'].values():
            for k, v in per.items():
                kinds[k] = kinds.get(k, 0) + v
        lines += [
            f'Fault run: N={f["n"]}, {result["fault_rate"]:.0%} of the '
            f'requests to every service but Keystone fail (seed '
            f'{result["seed"]}, {result["latency_ms"]:g} ms latency, '
            f'client timeout {result["client_timeout"]:g} s).',
            '',
            '| requests | faults injected (503 / reset / slow) | retries | '
            'rounds | wall s | exit | A left | A project deleted | '
            'B intact |',
            '|---|---|---|---|---|---|---|---|---|',
            f'| {f["requests"]} | {f["faults_total"]} ({kinds.get("503", 0)}'
            f' / {kinds.get("reset", 0)} / {kinds.get("slow", 0)}) | '
            f'{f.get("retries", "?")} | {f.get("rounds", "?")} | '
            f'{f["wall"]:.1f} | {f["exit_code"]} | {len(f["a_left"])} | '
            f'{"yes" if f["a_project_deleted"] else "no"} | '
            f'{"yes" if f["b_intact"] else "NO"} |',
            '',
        ]
    kills = result.get('kills')
    if kills:
        lines += [
            '| SIGKILL at | steps | deletes before the kill | left after '
            'the kill | runs again (s) | A left | A project deleted | '
            'B intact |',
            '|---|---|---|---|---|---|---|---|',
        ]
        for k in kills:
            lines.append(
                f'| {k["point"]} | {k["steps"]} | '
                f'{k["killed_run"]["deletes"]} | {k["left_after_kill"]} | '
                f'{k.get("reruns", 1)} ({k.get("rerun_wall", 0):.1f}) | '
                f'{len(k["a_left"])} | '
                f'{"yes" if k["a_project_deleted"] else "no"} | '
                f'{"yes" if k["b_intact"] else "NO"} |'
            )
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    sys.exit(main())
