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

"""Where the CPU went while a tool ran: the cloud's processes, the tool, the
proxy, and the whole machine (from /proc, Linux only).

On a machine that also runs the cloud, a tool cannot be faster than the
cloud's own work: when the cloud keeps every core busy, the wall time is
the cloud's, whatever the client does. These figures say when that is so.
"""

from __future__ import annotations

from collections.abc import Iterable
import glob
import os
import resource

TICKS = os.sysconf('SC_CLK_TCK')


def machine_busy() -> float:
    """CPU seconds the machine spent busy (all cores) since boot."""
    with open('/proc/stat') as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields) - idle) / TICKS


def _stat(pid: int) -> list[bytes] | None:
    try:
        with open(f'/proc/{pid}/stat', 'rb') as f:
            stat = f.read()
    except OSError:
        return None
    # after "pid (comm) ": state is field 0, pgrp 2, utime 11 ... cstime 14
    return stat[stat.rindex(b')') + 2 :].split()


def _seconds(fields: list[bytes]) -> float:
    """utime + stime, and the same of the children it reaped."""
    return sum(int(x) for x in fields[11:15]) / TICKS


def process(pid: int) -> float:
    fields = _stat(pid)
    return _seconds(fields) if fields else 0.0


def groups(pgids: Iterable[int]) -> float:
    """CPU seconds of every live process in these process groups."""
    wanted = set(pgids)
    total = 0.0
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields and int(fields[2]) in wanted:
                total += _seconds(fields)
    return total


def minicloud_groups(home: str) -> list[int]:
    """The process groups of the minicloud's units (``run/<unit>.pid``
    holds "pgid start-time"). None found is an error: the cloud's CPU
    would read 0 (a run from a git worktree, whose ``.minicloud`` is not
    the running one's, measured nothing and said 0 % busy)."""
    pgids = []
    for path in glob.glob(os.path.join(home, 'run', '*.pid')):
        try:
            with open(path) as f:
                pgids.append(int(f.read().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    if not pgids:
        raise RuntimeError(
            f'no minicloud units in {home}/run: the cloud\'s CPU cannot be '
            'measured (tools/minicloud up, or MINICLOUD_HOME=the home of '
            'the running one)'
        )
    return pgids


def children() -> float:
    """CPU seconds of this process's waited-for children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Meter:
    """CPU seconds used between ``start()`` and ``stop()`` by the cloud,
    the tool (a child this process waits for), the proxy and the machine."""

    def __init__(self, cloud_pgids: Iterable[int], proxy_pid: int | None):
        self.cloud_pgids = list(cloud_pgids)
        self.proxy_pid = proxy_pid
        self._start: dict[str, float] = {}

    def _read(self) -> dict[str, float]:
        return {
            'cloud': groups(self.cloud_pgids),
            'tool': children(),
            'proxy': process(self.proxy_pid) if self.proxy_pid else 0.0,
            'machine': machine_busy(),
        }

    def start(self) -> None:
        self._start = self._read()

    def stop(self, wall: float) -> dict[str, float | int]:
        """CPU seconds per part, and how busy the cloud and the machine
        were: their CPU seconds over what the cores could give in
        ``wall`` seconds."""
        end = self._read()
        used = {k: round(end[k] - self._start[k], 2) for k in end}
        cores = os.cpu_count() or 1
        capacity = wall * cores if wall > 0 else 0.0
        return {
            **{f'{k}_cpu_s': v for k, v in used.items()},
            'cores': cores,
            'cloud_busy': round(used['cloud'] / capacity, 3)
            if capacity
            else 0.0,
            'machine_busy': round(used['machine'] / capacity, 3)
            if capacity
            else 0.0,
        }
