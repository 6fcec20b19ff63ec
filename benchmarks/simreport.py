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

"""benchmarks.sim's report: the medians of its runs per N and tool, their
table (Markdown and reStructuredText), the log-log plot, and README's
Performance section."""

from __future__ import annotations

import collections
import os
import statistics
import textwrap
from typing import Any

from benchmarks import run
from benchmarks.results import replace_section, write_tables

CLEANUP, CASCADE = run.CLEANUP, run.CASCADE
#: the cascade's --dry-run: how long discovery and planning take
DRY_RUN = 'cascade-dry-run'


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
