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

"""A customer leaves, on the simulated cloud (issue #35):
``openstack domain delete --cascade`` against today's way (``project
delete --cascade`` of each project, one after another, then Keystone's
``domain delete``) on an identical twin, in the same run.

    python -m benchmarks.simdomain --projects 1000 --size 20 --users 100
    python -m benchmarks.simdomain --sweep --projects 500 --size 20

Two identical domains (benchmarks.simcloud: ``POST /seed-domain``) of
``--projects`` projects of ``--size`` resources each (benchmarks.generate's
mix) and ``--users`` users with a keypair each; the domain cascade on one,
today's way on the other (on the first ``--baseline-projects`` projects
only, if given: the rest is extrapolated from their mean, and said so).
Per tool: wall, the client's CPU seconds and peak RSS (its rusage, summed
and maxed over today's processes), the requests the simulator answered,
what is left; for the cascade its critical-path bound (benchmarks.bound,
from its ``--report-file``: the projects' plan) and its phases. The load
of the machine before and after is in the results.

The simulated cloud has two regions (``--regions``): every service but
Keystone in each, a project's resources split between them, each user
with a keypair in each.

With ``--sweep``: the projects of both domains drained long ago, as
``project sweep`` finds them (the twin's just now, so that the sweep's
``--older-than 30d`` leaves them to today's way, a cascade per project).

Results: ``<out>/domain-results.json`` (appended)."""

from __future__ import annotations

import argparse
import glob
import json
import os
import tempfile
import time
from typing import Any

from benchmarks import bound, log, run, sim
from benchmarks.results import load_results, save_results
from tests.unit import scenarios

RESULTS = 'domain-results.json'
#: when the seeded drained projects were drained
DRAINED_AT = '2026-01-01T00:00:00+00:00'


# -- the simulator's side (benchmarks.simcloud's control port) -------------


def seed(
    simcloud: Any,
    projects: int,
    size: int = 20,
    users: int = 0,
    twins: int = 2,
    prefix: str = 'customer',
    drained: bool = False,
) -> list[dict]:
    """``twins`` identical domains: ``projects`` projects of ``size``
    resources (a shard each), ``users`` users with a keypair each;
    ``drained``: the projects drained long ago (disabled, with the drain
    record a drain writes), as ``project sweep`` finds them. With two
    regions a project's resources are split between them (half each, the
    odd one in the first) and each user has a keypair in each."""
    from benchmarks.simshard import fill_block
    from osc_cascade.workflows import drain_record

    def drain_fields(when: str) -> dict[str, Any]:
        record = {
            'version': drain_record.VERSION,
            'started_at': when,
            'started_by': {'user_id': 'admin', 'project_id': 'admin'},
            'enabled': True,
            'quotas': {},
            'stage': drain_record.DRAINED,
            drain_record.DRAINED_AT: when,
            drain_record.DRAINED_BY: {'user_id': 'admin'},
        }
        return {
            'enabled': False,
            drain_record.RECORD: json.dumps(record, sort_keys=True),
            drain_record.STATE: drain_record.DRAINED,
        }

    made = []
    with simcloud.lock:
        main = simcloud.main
        for t in range(twins):
            # the first drained long ago (the sweep's), the twins just now
            # (out of its reach: today's way deletes them)
            now = time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime())
            extra = (
                drain_fields(DRAINED_AT if t == 0 else now) if drained else {}
            )
            domain = main.domain(f'{prefix}-{len(main.all("domains"))}-{t}')
            pids = []
            for i in range(projects):
                name = f'{domain["name"]}-p{i}'
                pid = scenarios.project(
                    main,
                    name,
                    domain_id=domain['id'],
                    parent_id=domain['id'],
                    **extra,
                )['id']
                simcloud.project_shards[pid] = []
                for r, region in enumerate(simcloud.regions):
                    part = split(size, len(simcloud.regions))[r]
                    if not part:
                        continue
                    shard = simcloud._shard(region)
                    shard.db['projects'] = main.db['projects']
                    # names unique across regions (the index's)
                    fill_block(
                        shard,
                        pid,
                        simcloud.externals[region],
                        f'{name}-r{r}',
                        size=part,
                    )
                    simcloud._index(shard)
                    simcloud.project_shards[pid].append(shard)
                    simcloud.shards.append(shard)
                pids.append(pid)
            uids = []
            for u in range(users):
                user = main.user(f'{domain["name"]}-u{u}', domain['id'])
                for region_main in simcloud.mains.values():
                    region_main.keypair(user['id'], 'laptop')
                uids.append(user['id'])
            made.append(
                {
                    'id': domain['id'],
                    'name': domain['name'],
                    'projects': pids,
                    'users': uids,
                }
            )
    # what ``left`` looks at, by domain ID
    simcloud.domains = {
        **getattr(simcloud, 'domains', {}),
        **{d['id']: d for d in made},
    }
    return made


def split(size: int, regions: int) -> list[int]:
    """``size`` resources shared among ``regions``: as evenly as can be,
    the remainder in the first."""
    share = size // regions
    return [size - share * (regions - 1)] + [share] * (regions - 1)


def left(simcloud: Any, domain: dict) -> dict[str, int]:
    """What is left of a seeded domain: its resources (by kind), its
    projects, its users and their keypairs."""
    out: dict[str, int] = {}
    for pid in domain['projects']:
        for kind, count in simcloud.owned(pid).items():
            out[kind] = out.get(kind, 0) + count
    with simcloud.lock:
        main = simcloud.main
        users = set(domain['users'])
        out['users'] = sum(main.exists('users', u) for u in users)
        out['keypairs'] = sum(
            k['user_id'] in users
            for region_main in simcloud.mains.values()
            for k in region_main.all('keypairs')
        )
        out['domain'] = int(main.exists('domains', domain['id']))
    return {k: v for k, v in sorted(out.items()) if v}


# -- the client's side ------------------------------------------------------


def _env(simulator: sim.Simulator) -> dict[str, str]:
    return dict(
        os.environ,
        OS_CLIENT_CONFIG_FILE=simulator.state['clouds_yaml'],
        # this tree's code, whatever the venv's editable install points at
        PYTHONPATH=run.REPO,
    )


def _openstack(*args: str) -> list[str]:
    return [run.openstack_bin(), '--os-cloud', 'sim-admin', *args]


def cpu_floor(stats: dict[str, Any], client_cpu: float) -> dict[str, Any]:
    """The requests a run made, and the wall no run of them can beat on
    this machine: the client's CPU and the simulator's, on every core.
    Where it passes 1.5 times the critical path, that target is out of
    reach at this cost per request, whatever the scheduling."""
    requests = stats['requests']
    simulator_cpu = stats['process_cpu_s']
    return {
        'requests': requests,
        'requests_by_method': stats['by_method'],
        'top_routes': dict(list(stats['routes'].items())[:8]),
        'client_ms_per_request': round(
            1000 * client_cpu / max(1, requests), 3
        ),
        'simulator_cpu_s': round(simulator_cpu, 2),
        'cpu_floor': round(
            (client_cpu + simulator_cpu) / (os.cpu_count() or 1), 2
        ),
    }


def domain_cascade(simulator, domain, args, raw) -> dict[str, Any]:
    report = os.path.join(raw, 'domain-cascade-report.json')
    cmd = _openstack(
        'domain', 'delete', '--cascade', '--yes',
        '--parallel', str(args.parallel),
        '--report-file', report, domain['id'],
    )  # fmt: skip
    simulator.call('GET', '/stats?reset=1')
    log(f'domain cascade on {domain["name"]} ...')
    code, wall, cpu, rss = sim.run_measured(
        cmd, _env(simulator), os.path.join(raw, 'domain-cascade.log'),
        args.limit,
    )  # fmt: skip
    stats = simulator.call('GET', '/stats?reset=1')
    row: dict[str, Any] = {
        'tool': 'domain delete --cascade',
        'exit_code': code,
        'wall': round(wall, 2),
        'client_cpu_s': round(cpu, 2),
        'client_peak_rss_mib': round(rss, 1),
        **cpu_floor(stats, cpu),
    }
    if os.path.exists(report):
        row.update(plan_bound(report, wall, row['cpu_floor']))
    return row


def plan_bound(report: str, wall: float, floor: float) -> dict[str, Any]:
    """The critical-path bound of the plan a run recorded in ``report``
    (benchmarks.bound), its phases, and the run's wall and CPU floor over
    that bound."""
    with open(report) as f:
        rep = json.load(f)
    first = rep['rounds'][0] if rep['rounds'] else []
    b = bound.bounds(rep['plan'], first, rep['parallel'])
    path = b['critical_path']
    return {
        'bound': round(path, 2),
        'steps': b['steps'],
        'phases': {k: round(v, 2) for k, v in rep['phases'].items()},
        'wall_over_bound': round(wall / path, 2) if path else None,
        'cpu_floor_over_bound': round(floor / path, 2) if path else None,
    }


def todays_way(simulator, domain, args, raw) -> dict[str, Any]:
    """A cascade per project, one after another (the first
    ``--baseline-projects``), then Keystone's own domain delete."""
    pids = domain['projects'][: args.baseline_projects or None]
    simulator.call('GET', '/stats?reset=1')
    wall = cpu = rss = 0.0
    codes = []
    log(f'today\'s way on {domain["name"]}: {len(pids)} cascade(s) ...')
    for n, pid in enumerate(pids):
        cmd = _openstack(
            'project', 'delete', '--cascade', '--yes',
            '--parallel', str(args.parallel), pid,
        )  # fmt: skip
        code, w, c, r = sim.run_measured(
            cmd, _env(simulator), os.path.join(raw, f'today-{n}.log'),
            args.limit,
        )  # fmt: skip
        codes.append(code)
        wall, cpu, rss = wall + w, cpu + c, max(rss, r)
    stats = simulator.call('GET', '/stats?reset=1')
    scale = len(domain['projects']) / max(1, len(pids))
    if len(pids) == len(domain['projects']):
        for argv in (
            ('domain', 'set', '--disable', domain['id']),
            ('domain', 'delete', domain['id']),
        ):
            code, w, c, r = sim.run_measured(
                _openstack(*argv), _env(simulator),
                os.path.join(raw, 'today-domain.log'), args.limit,
            )  # fmt: skip
            codes.append(code)
            wall, cpu, rss = wall + w, cpu + c, max(rss, r)
    return {
        'tool': 'project delete --cascade, one after another',
        'projects_run': len(pids),
        'extrapolated': scale != 1,
        'exit_codes_nonzero': sum(c != 0 for c in codes),
        'wall': round(wall * scale, 2),
        'client_cpu_s': round(cpu * scale, 2),
        'client_peak_rss_mib': round(rss, 1),
        'requests': round(stats['requests'] * scale),
        'wall_measured': round(wall, 2),
    }


def project_sweep(simulator, domain, args, raw) -> dict[str, Any]:
    """``project sweep --execute`` of the projects drained long ago (the
    twin's were drained just now: out of its reach)."""
    cmd = _openstack(
        'project', 'sweep', '--execute', '--yes', '--older-than', '30d',
        '--parallel', str(args.parallel),
    )  # fmt: skip
    simulator.call('GET', '/stats?reset=1')
    log(f'project sweep of {domain["name"]} ...')
    # the sweep's record (it has no --report-file) in a directory of its own
    state = os.path.join(raw, 'sweep-state')
    code, wall, cpu, rss = sim.run_measured(
        cmd,
        {**_env(simulator), 'XDG_STATE_HOME': state},
        os.path.join(raw, 'sweep.log'),
        args.limit,
    )
    stats = simulator.call('GET', '/stats?reset=1')
    row: dict[str, Any] = {
        'tool': 'project sweep --execute',
        'exit_code': code,
        'wall': round(wall, 2),
        'client_cpu_s': round(cpu, 2),
        'client_peak_rss_mib': round(rss, 1),
        **cpu_floor(stats, cpu),
    }
    records = glob.glob(os.path.join(state, 'osc-cascade', '*sweep*.json'))
    if len(records) == 1:
        row.update(plan_bound(records[0], wall, row['cpu_floor']))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--projects', type=int, default=1000)
    parser.add_argument('--size', type=int, default=20)
    parser.add_argument('--users', type=int, default=100)
    parser.add_argument('--parallel', type=int, default=50)
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument('--regions', type=int, default=2, choices=(1, 2))
    parser.add_argument(
        '--baseline-projects',
        type=int,
        default=0,
        help="today's way on this many projects, the rest extrapolated",
    )
    parser.add_argument('--limit', type=float, default=7200.0)
    parser.add_argument(
        '--sweep',
        action='store_true',
        help='drained projects, project sweep against today\'s way',
    )
    parser.add_argument(
        '--out', default=os.path.join(os.path.dirname(__file__), 'results')
    )
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='simdomain-')
    raw = os.path.join(workdir, 'raw')
    os.makedirs(raw)
    simulator = sim.Simulator(
        workdir,
        latency_ms=args.latency_ms,
        workers=1000,
        delete_scale=1.0,
        regions=args.regions,
    )
    try:
        started = time.monotonic()
        one, twin = simulator.call(
            'POST',
            '/seed-domain',
            {
                'projects': args.projects,
                'size': args.size,
                'users': 0 if args.sweep else args.users,
                'drained': args.sweep,
            },
        )
        log(f'seeded two domains in {time.monotonic() - started:.0f}s')
        record: dict[str, Any] = {
            'when': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
            'projects': args.projects,
            'size': args.size,
            'users': args.users,
            'regions': args.regions,
            'latency_ms': args.latency_ms,
            'parallel': args.parallel,
            'load_before': os.getloadavg(),
            'cpus': os.cpu_count(),
            'workdir': workdir,
        }
        if args.sweep:  # the twin's drain is too recent for the sweep
            row = project_sweep(simulator, one, args, raw)
            base = todays_way(simulator, twin, args, raw)
        else:
            row = domain_cascade(simulator, one, args, raw)
            base = todays_way(simulator, twin, args, raw)
        record['sweep'] = args.sweep
        row['left'] = simulator.call('GET', f'/domain-left?id={one["id"]}')
        record['cascade'] = row
        log(f'{row["tool"]}: {json.dumps(row)}')
        base['left'] = simulator.call('GET', f'/domain-left?id={twin["id"]}')
        record['today'] = base
        log(f"today's way: {json.dumps(base)}")
        record['load_after'] = os.getloadavg()
        record['speed_up'] = round(base['wall'] / row['wall'], 1)
    finally:
        simulator.stop()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, RESULTS)
    runs = load_results(path) if os.path.exists(path) else []
    runs.append(record)
    save_results(path, runs)
    log(f'results: {path}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
