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

"""The cascade's API slots, fixed against adaptive, on the minicloud.

    python -m benchmarks.scheduling -n 300 --repeats 3 \\
        --modes fixed:3,fixed:10,fixed:30,adaptive:30
    python -m benchmarks.scheduling -n 300 --repeats 2 \\
        --modes before:10,adaptive:10 --before REV --out DIR

Each repeat builds one project of N resources per mode (benchmarks.generate,
identical), then runs ``openstack project delete --cascade`` on each, one
mode after the other, the order rotated between repeats so that every mode
meets the cloud in each state of the repeat's minutes; all through
tools/cloudproxy (the latency added, every request counted). ``fixed:N``
is ``--parallel N`` with every service's slots fixed at N (clouds.yaml's
``concurrency``: the ceiling of N is then the only bound, as before the
slots were per service); ``adaptive:N`` is ``--parallel N`` as a ceiling
with each service's slots found while it runs; ``before:N`` is
``adaptive:N`` with osc-cascade of the git revision ``--before`` (its tree
taken with ``git archive``), a version against this one. Per run, what
benchmarks.run measures (wall, requests, the plan run, its critical path);
the table gives medians per mode.

Results: ``<out>/scheduling.json`` (every run, appended as it finishes)
and ``<out>/scheduling.md`` (the table).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any
import uuid

from benchmarks import before_after, bound, generate, run
from benchmarks.results import load_results, save_results, twin_intact

FIXED = 'fixed'
ADAPTIVE = 'adaptive'
#: adaptive, osc-cascade of ``--before`` (a git revision)
BEFORE = 'before'


def parse_modes(text: str) -> list[tuple[str, int]]:
    """'fixed:3,adaptive:30' -> [('fixed', 3), ('adaptive', 30)]"""
    modes = []
    for item in text.split(','):
        kind, _, parallel = item.partition(':')
        if kind not in (FIXED, ADAPTIVE, BEFORE) or not parallel.isdigit():
            raise argparse.ArgumentTypeError(
                f'{item!r}: expected fixed:N, adaptive:N or before:N'
            )
        modes.append((kind, int(parallel)))
    return modes


def label(mode: tuple[str, int]) -> str:
    return f'{mode[0]}:{mode[1]}'


def order_key(mode: str) -> tuple[int, int]:
    """Before, fixed, adaptive, then by --parallel."""
    kind, _, parallel = mode.partition(':')
    return ((BEFORE, FIXED, ADAPTIVE).index(kind), int(parallel))


def _share(value: float | None) -> str:
    return 'not measured' if value is None else f'{value:.0%}'


def fixed_clouds_yaml(proxied: str, cloud: str, slots: int, out: str) -> str:
    """A copy of the proxy's clouds.yaml whose ``cloud`` gives every
    service of the cascade's kinds ``slots`` as its ``concurrency``."""
    import yaml

    from osc_cascade.kinds.registry import CLASSES

    with open(proxied) as f:
        clouds = yaml.safe_load(f)
    clouds['clouds'][cloud]['concurrency'] = {
        t: slots for t in sorted({c.service_type for c in CLASSES.values()})
    }
    with open(out, 'w') as f:
        json.dump(clouds, f, indent=1)
    return out


def compare(args: argparse.Namespace) -> list[dict]:
    import openstack

    clouds_yaml = run.default_clouds_yaml()
    os.environ['OS_CLIENT_CONFIG_FILE'] = clouds_yaml
    admin = openstack.connect(cloud='minicloud-admin')
    auditor = generate.auditor(admin)
    os.makedirs(args.out, exist_ok=True)
    results_file = os.path.join(args.out, 'scheduling.json')
    results = load_results(results_file) if args.append else []
    raw = os.path.join(args.out, 'raw')
    os.makedirs(raw, exist_ok=True)
    proxy = run.ProxyProcess(
        run.proxy_state_dir(),
        clouds_yaml,
        'minicloud-admin',
        latency_ms=args.latency_ms,
        client_timeout=args.client_timeout,
    )
    modes = args.modes
    trees = {}
    exported = tempfile.TemporaryDirectory()
    if any(kind == BEFORE for kind, _ in modes):
        trees[BEFORE] = before_after.export(args.before, exported.name)
    try:
        fixed_files = {
            slots: fixed_clouds_yaml(
                proxy.clouds_yaml,
                'minicloud-admin-proxied',
                slots,
                os.path.join(
                    run.proxy_state_dir(), f'clouds-fixed-{slots}.yaml'
                ),
            )
            for kind, slots in modes
            if kind == FIXED
        }
        for rep in range(args.repeats):
            tag = f'sched-n{args.n}-r{rep}-{uuid.uuid4().hex[:4]}'
            run.log(f'{tag}: building {len(modes)} projects of {args.n}')
            try:
                made = generate.build_twins(
                    admin,
                    args.n,
                    f'cbench-{tag}',
                    twins=len(modes),
                    threads=args.threads,
                    log=run.log,
                )
            except Exception as exc:  # noted, then the next repeat
                # an overloaded service times a create out: what was
                # built is left for the next `project sweep` or by hand
                run.log(f'{tag}: building failed, repeat skipped: {exc}')
                results.append({'tag': tag, 'build_failed': str(exc)})
                save_results(results_file, results)
                continue
            for p in made:
                p['before'] = run.owned(admin, auditor, p)
            shift = rep % len(modes)
            order = modes[shift:] + modes[:shift]
            record: dict[str, Any] = {
                'n': args.n,
                'repeat': rep,
                'tag': tag,
                'latency_ms': args.latency_ms,
                'order': [label(m) for m in order],
                'listed_before': len(made[0]['before']),
                'modes': {},
            }
            for i, mode in enumerate(order):
                kind, parallel = mode
                with (
                    before_after.python_path(trees[BEFORE])
                    if kind == BEFORE
                    else contextlib.nullcontext()
                ):
                    row = run.measure(
                        admin,
                        auditor,
                        proxy,
                        run.CASCADE,
                        made[i],
                        # the next project, not yet worked on, stands as the
                        # twin; the last run's has been deleted: none to check
                        made[i + 1] if i + 1 < len(made) else None,
                        outdir=raw,
                        tag=f'{tag}-{kind}{parallel}',
                        parallel=parallel,
                        timeout=args.tool_timeout,
                        clouds_yaml=fixed_files.get(parallel)
                        if kind == FIXED
                        else None,
                    )
                row['started_at'] = time.strftime('%H:%M:%S')
                record['modes'][label(mode)] = row
            for i, mode in enumerate(order):
                record['modes'][label(mode)]['tidied'] = run.tidy(
                    admin,
                    made[i]['id'],
                    os.path.join(raw, f'{tag}-{label(mode)}-tidy.log'),
                )
            results.append(record)
            save_results(results_file, results)
            report(results, args.out)
    finally:
        proxy.stop()
        exported.cleanup()
    return results


def summarize(records: list[dict]) -> list[dict]:
    """One row per mode, medians over the repeats."""
    per: dict[str, list[dict]] = {}
    for record in records:
        for mode, row in record.get('modes', {}).items():
            per.setdefault(mode, []).append(row)
    out = []
    for mode, rows in sorted(per.items(), key=lambda kv: order_key(kv[0])):
        walls = [r['wall'] for r in rows]
        spans = [r['executed_span'] for r in rows if 'executed_span' in r]
        ratios = [
            r['executed_span'] / r['bound']
            for r in rows
            if r.get('bound') and 'executed_span' in r
        ]
        out.append(
            {
                'mode': mode,
                'runs': len(rows),
                'wall': statistics.median(walls),
                'wall_min': min(walls),
                'wall_max': max(walls),
                'requests': statistics.median(r['requests'] for r in rows),
                'attempts': statistics.median(
                    r.get('attempts', 0) for r in rows
                ),
                'plan_run': statistics.median(spans) if spans else None,
                'bound': statistics.median(
                    r['bound'] for r in rows if 'bound' in r
                ),
                'run_over_path': statistics.median(ratios) if ratios else None,
                'ready_delay': statistics.median(
                    r.get('ready_delay_mean', 0.0) for r in rows
                ),
                # None: not measured (runs recorded before cpu.py refused
                # to run without the minicloud's units)
                'cloud_busy': None
                if any(r['cpu']['cloud_busy'] is None for r in rows)
                else statistics.median(r['cpu']['cloud_busy'] for r in rows),
                'left': max(r['left'] for r in rows),
                'ok': all(r['exit_code'] == 0 for r in rows)
                and twin_intact(rows) is not False,
                'twins_checked': sum(
                    r['twin_intact'] is not None for r in rows
                ),
            }
        )
    return out


def queued_by_service(records: list[dict], raw: str) -> dict[str, dict]:
    """Per mode and service, the median of the seconds the steps waited
    for its API slots (from the cascade's reports in ``raw``)."""
    per: dict[str, dict[str, list[float]]] = {}
    for record in records:
        for mode, row in record.get('modes', {}).items():
            kind, _, parallel = mode.partition(':')
            path = os.path.join(
                raw, f'{record["tag"]}-{kind}{parallel}-cascade-report.json'
            )
            waits = row.get('queued_by_service')
            if waits is None and os.path.exists(path):
                with open(path) as f:
                    rep = json.load(f)
                waits = bound.queued_by_service(
                    rep['rounds'][0] if rep['rounds'] else []
                )
            for service, seconds in (waits or {}).items():
                per.setdefault(mode, {}).setdefault(service, []).append(
                    seconds
                )
    return {
        mode: {s: statistics.median(v) for s, v in sorted(services.items())}
        for mode, services in sorted(
            per.items(), key=lambda kv: order_key(kv[0])
        )
    }


def queued_markdown(queued: dict[str, dict]) -> str:
    services = sorted({s for waits in queued.values() for s in waits})
    lines = [
        '| mode | ' + ' | '.join(services) + ' |',
        '|' + '---|' * (len(services) + 1),
    ]
    for mode, waits in queued.items():
        lines.append(
            f'| {mode} | '
            + ' | '.join(f'{waits.get(s, 0.0):.1f}' for s in services)
            + ' |'
        )
    return '\n'.join(lines) + '\n'


def slots_markdown(records: list[dict]) -> str:
    """Per adaptive mode and service, the fewest and the most API slots
    it had in any run (from each run's record; '' when none has them)."""
    per: dict[str, dict[str, tuple[int, int]]] = {}
    for record in records:
        for mode, row in record.get('modes', {}).items():
            for name, slots in (row.get('slots') or {}).items():
                if not slots.get('adaptive'):
                    continue
                service = name.partition('@')[0]
                low, high = per.setdefault(mode, {}).get(
                    service, (slots['lowest'], slots['highest'])
                )
                per[mode][service] = (
                    min(low, slots['lowest']),
                    max(high, slots['highest']),
                )
    if not per:
        return ''
    services = sorted({s for found in per.values() for s in found})
    lines = [
        '| mode | ' + ' | '.join(services) + ' |',
        '|' + '---|' * (len(services) + 1),
    ]
    for mode in sorted(per, key=order_key):
        lines.append(
            f'| {mode} | '
            + ' | '.join(
                '{}-{}'.format(*per[mode][s]) if s in per[mode] else ''
                for s in services
            )
            + ' |'
        )
    return '\n'.join(lines) + '\n'


def markdown(summary: list[dict]) -> str:
    lines = [
        '| mode | runs | wall s (median, min-max) | requests | attempts '
        '| plan run s | critical path s | plan run / path '
        '| ready delay s | cloud busy | left | exit 0, twin intact |',
        '|' + '---|' * 12,
    ]
    for r in summary:
        lines.append(
            f'| {r["mode"]} | {r["runs"]} | {r["wall"]:.1f} '
            f'({r["wall_min"]:.1f}-{r["wall_max"]:.1f}) '
            f'| {r["requests"]:.0f} | {r["attempts"]:.0f} '
            f'| {r["plan_run"]:.1f} | {r["bound"]:.1f} '
            f'| {r["run_over_path"]:.2f} | {r["ready_delay"]:.2f} '
            f'| {_share(r["cloud_busy"])} | {r["left"]} '
            f'| {"yes" if r["ok"] else "no"} '
            f'({r.get("twins_checked", 0)} of {r["runs"]} twins checked) |'
        )
    fixed = [r for r in summary if r['mode'].startswith(FIXED)]
    adaptive = [r for r in summary if r['mode'].startswith(ADAPTIVE)]
    if fixed and adaptive:
        best = min(fixed, key=lambda r: r['wall'])
        for a in adaptive:
            lines.append('')
            lines.append(
                f'{a["mode"]} against the best fixed ({best["mode"]}): '
                f'wall {a["wall"] / best["wall"]:.2f}x, requests '
                f'{a["requests"] / best["requests"]:.2f}x'
            )
    before = {
        r['mode'].partition(':')[2]: r
        for r in summary
        if r['mode'].startswith(BEFORE)
    }
    for a in adaptive:
        then = before.get(a['mode'].partition(':')[2])
        if then is not None:
            lines.append('')
            lines.append(
                f'{a["mode"]} against {then["mode"]}: wall '
                f'{a["wall"] / then["wall"]:.2f}x, requests '
                f'{a["requests"] / then["requests"]:.2f}x'
            )
    return '\n'.join(lines) + '\n'


def report(records: list[dict], outdir: str) -> str:
    text = (
        markdown(summarize(records))
        + '\nSeconds the steps waited for API slots, summed per run, per '
        'service (medians):\n\n'
        + queued_markdown(
            queued_by_service(records, os.path.join(outdir, 'raw'))
        )
    )
    slots = slots_markdown(records)
    if slots:
        text += (
            '\nAPI slots of each service, the fewest and the most in any '
            'run:\n\n' + slots
        )
    with open(os.path.join(outdir, 'scheduling.md'), 'w') as f:
        f.write(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument('-n', type=int, default=300)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument(
        '--modes',
        type=parse_modes,
        default=parse_modes('fixed:3,fixed:10,fixed:30,adaptive:30'),
        help='fixed:N, adaptive:N and before:N (adaptive, with --before), '
        'comma-separated (default: fixed:3,fixed:10,fixed:30,adaptive:30)',
    )
    parser.add_argument(
        '--before',
        help="before:N's osc-cascade: a git revision of this repository",
    )
    parser.add_argument('--latency-ms', type=float, default=50.0)
    parser.add_argument('--threads', type=int, default=8)
    parser.add_argument('--client-timeout', type=float, default=300.0)
    parser.add_argument('--tool-timeout', type=float, default=3600.0)
    parser.add_argument('--out', default=os.path.join(run.HERE, 'results'))
    parser.add_argument('--append', action='store_true')
    parser.add_argument('--report-only', action='store_true')
    args = parser.parse_args(argv)
    if args.report_only:
        records = load_results(os.path.join(args.out, 'scheduling.json'))
        print(report(records, args.out))
        return 0
    if any(kind == BEFORE for kind, _ in args.modes) and not args.before:
        parser.error('before:N needs --before (a git revision)')
    print(report(compare(args), args.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
