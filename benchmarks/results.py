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

"""The benchmark runs' results: kept in ``results.json`` as each run
finishes, summarized per N and tool, and reported as Markdown and reST
tables and a plot of time against N.
"""

from __future__ import annotations

import collections
import json
import os
import statistics

from benchmarks import log

#: the two tools the results compare
CLEANUP = 'cleanup'
CASCADE = 'cascade'


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
    """A Markdown table as an RST list-table (the guide's Performance page
    includes it: doc/source/contributor/performance.rst)."""
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


def write_tables(outdir: str, stem: str, table: str) -> None:
    """A markdown table as ``<stem>.md`` and, as a list-table, ``.rst``."""
    with open(os.path.join(outdir, f'{stem}.md'), 'w') as f:
        f.write(table)
    with open(os.path.join(outdir, f'{stem}.rst'), 'w') as f:
        f.write(list_table(table))


def replace_section(path: str, marker: str, text: str) -> None:
    """Rewrite what lies between the RST comments ``.. <marker>:`` (its
    own lines, up to the first blank one, stay) and ``.. end of <marker>``
    in ``path`` with ``text``: a generated part of a hand-written page."""
    with open(path) as f:
        lines = f.read().split('\n')
    try:
        begin = next(
            i for i, x in enumerate(lines) if x.startswith(f'.. {marker}:')
        )
        end = lines.index(f'.. end of {marker}')
    except (StopIteration, ValueError):
        raise ValueError(f'{path} has no ".. {marker}:" section') from None
    while lines[begin].strip():
        begin += 1
    new = (
        lines[: begin + 1] + text.rstrip('\n').split('\n') + [''] + lines[end:]
    )
    with open(path, 'w') as f:
        f.write('\n'.join(new))
