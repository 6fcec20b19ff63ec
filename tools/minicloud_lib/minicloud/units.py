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

"""Units: the process groups minicloud starts, finds again and stops.

A unit is recorded in ``run/<unit>.pid`` as "PGID starttime"; every later
command (status, stop, down) finds its processes from that record only.
"""

import glob
import json
import os
import shutil
import signal
import subprocess
import threading
import time

from .paths import HOME, LOGS, RUN, VBIN
from .releases import gunicorn_options, wsgi_app
from .util import (
    Failure,
    child_env,
    http_answers,
    mkdirs,
    phase,
    port_open,
    tail,
    write,
)


def proc_stat(pid):
    """(pgrp, session, starttime) of a process, or None."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b')') + 2 :].split()
    return int(fields[2]), int(fields[3]), int(fields[19])


class Unit:
    """One process (group) that minicloud starts and stops."""

    def __init__(
        self,
        name,
        service,
        cmd,
        env=None,
        port=None,
        http=None,
        stop_timeout=20,
        extra_logs=None,
    ):
        self.name = name
        self.service = service
        self.cmd = cmd
        self.env = env or {}
        self.port = port
        self.http = http
        self.stop_timeout = stop_timeout
        self.extra_logs = extra_logs  # a glob, for logs not named after us

    @property
    def pidfile(self):
        return os.path.join(RUN, self.name + '.pid')

    @property
    def out(self):
        return os.path.join(LOGS, self.name + '.out')

    def logs(self):
        paths = sorted(glob.glob(os.path.join(LOGS, self.name + '*')))
        if self.extra_logs:
            paths += sorted(glob.glob(self.extra_logs))
        return paths

    def record(self):
        """(pgid, start time) written when the unit was started."""
        try:
            with open(self.pidfile) as f:
                pid, start = f.read().split()[:2]
            return int(pid), int(start)
        except (OSError, ValueError):
            return None

    def pgid(self):
        rec = self.record()
        return rec[0] if rec else None

    def processes(self):
        """PIDs of our process group.  setsid made the unit its own session
        and group; a leader that is alive must have the recorded start time
        (else the PID was reused and nothing is ours)."""
        rec = self.record()
        if rec is None:
            return []
        pgid, start = rec
        leader = proc_stat(pgid)
        if leader is not None and leader[2] != start:
            return []
        pids = []
        for entry in os.listdir('/proc'):
            if entry.isdigit():
                st = proc_stat(int(entry))
                if st and st[0] == pgid and st[1] == pgid:
                    pids.append(int(entry))
        return pids

    def running(self):
        return bool(self.processes())

    def memory_kib(self):
        """(RSS, PSS) of the unit's processes, in KiB.  The RSS counts a
        page shared by several processes (libraries, a fork's copy on
        write) once in each; the PSS splits it among them, so that the
        units' PSS add up to what the machine gives the cloud (checked
        against free's "used" before and after ``down``)."""
        rss = pss = 0
        for pid in self.processes():
            try:
                with open(f'/proc/{pid}/smaps_rollup') as f:
                    for line in f:
                        if line.startswith('Rss:'):
                            rss += int(line.split()[1])
                        elif line.startswith('Pss:'):
                            pss += int(line.split()[1])
            except OSError:
                pass
        return rss, pss

    def cpu_seconds(self):
        ticks = os.sysconf('SC_CLK_TCK')
        total = 0
        for pid in self.processes():
            try:
                with open(f'/proc/{pid}/stat', 'rb') as f:
                    stat = f.read()
                fields = stat[stat.rindex(b')') + 2 :].split()
                total += int(fields[11]) + int(fields[12])
            except (OSError, ValueError):
                pass
        return total / ticks

    def start(self):
        if self.running():
            return False
        if self.port and port_open(self.port):
            # else the readiness check takes that process's answer for
            # ours while ours fails to bind (seen: units of a newer
            # minicloud left running by an older one's up --fresh)
            raise Failure(
                f'{self.name}: port {self.port} is in use by a process that '
                f'minicloud did not record in {self.pidfile} (ss -ltnp '
                f'sport = {self.port})'
            )
        mkdirs(RUN, LOGS)
        # glibc gives each thread that allocates an arena of its own (up to
        # 8 per core) and keeps what is freed in it; two bound what a
        # threaded service may hold (no change measured in CI's figures)
        env = child_env(
            {
                'MALLOC_ARENA_MAX': '2',
                **self.env,
                'TMPDIR': self.fresh_tmpdir(),
            }
        )
        with open(self.out, 'ab') as out:
            out.write(
                f'\n==== {time.strftime("%F %T")} start: '
                f'{" ".join(self.cmd)}\n'.encode()
            )
            out.flush()
            proc = subprocess.Popen(
                self.cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=HOME,
                start_new_session=True,
            )
        st = proc_stat(proc.pid)
        write(self.pidfile, f'{proc.pid} {st[2] if st else 0}\n')
        self._proc = proc
        return True

    def fresh_tmpdir(self):
        """run/tmp/<unit>/, emptied: each start gets a temp dir of its
        own.  Neutron elects the API worker that syncs its segment
        allocations by a file /tmp/neutron_first_worker<parent PID>: one
        left there by an earlier Neutron whose gunicorn had the PID ours
        has makes ours skip the sync, and a fresh database has no VXLAN ID
        to give (503 "No project network is available for allocation",
        RegionTwo in CI)."""
        path = os.path.join(RUN, 'tmp', self.name)
        shutil.rmtree(path, ignore_errors=True)
        mkdirs(path)
        return path

    def wait_ready(self, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise Failure(
                    f'{self.name} exited during start-up; {self.out}:\n'
                    f'{tail(self.out)}'
                )
            if self.http:
                if http_answers(self.http):
                    return
            elif self.port:
                if port_open(self.port):
                    return
            else:
                return
            time.sleep(0.3)
        raise Failure(
            f'{self.name} not ready after {timeout}s; see '
            f'{" ".join(self.logs())}'
        )

    def signal(self, sig):
        for pid in self.processes():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self):
        if not self.running():
            self._forget()
            return False
        self.signal(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.2)
        if self.running():
            self.signal(signal.SIGKILL)
            while self.running():
                time.sleep(0.1)
        self._forget()
        return True

    def _forget(self):
        try:
            os.unlink(self.pidfile)
        except FileNotFoundError:
            pass


def gunicorn(name, service, port, app, argv=None, env=None, threads=1):
    """An API under gunicorn, through minicloud_extras.wsgi (which gives
    the app its own argv: oslo.config would parse gunicorn's)."""
    cmd = [
        os.path.join(VBIN, 'gunicorn'),
        '--bind',
        f'127.0.0.1:{port}',
        '--workers',
        '1',
        '--threads',
        str(threads),
        '--timeout',
        '300',
        '--graceful-timeout',
        '5',
        '--no-control-socket',
        # a threaded worker drops an idle connection after 2 s by
        # default, and a client that reuses it gets a reset (seen in CI)
        '--keep-alive',
        '75',
        '--access-logfile',
        os.path.join(LOGS, name + '-access.log'),
        '--access-logformat',
        '%(h)s %(t)s "%(r)s" %(s)s %(B)s %(M)sms "%(a)s"',
        'minicloud_extras.wsgi:application',
    ]
    cmd = gunicorn_options(cmd)
    e = {
        'MINICLOUD_WSGI_APP': wsgi_app(app),
        'MINICLOUD_WSGI_ARGV': json.dumps(argv or [name]),
    }
    e.update(env or {})
    return Unit(
        name, service, cmd, e, port=port, http=f'http://127.0.0.1:{port}/'
    )


def oslo(
    name, service, binary, *conf_files, stop_timeout=20, one_process=False
):
    """An oslo.service worker (no port: ready once started).
    ``one_process``: a server of one worker on oslo.service's threading
    backend, run without its idle master process
    (``minicloud_extras.one_process``)."""
    cmd = [os.path.join(VBIN, binary)]
    if one_process:
        cmd = [
            os.path.join(VBIN, 'python'),
            '-m',
            'minicloud_extras.one_process',
            *cmd,
        ]
    for c in conf_files:
        cmd += ['--config-file', c]
    cmd += ['--log-file', os.path.join(LOGS, name + '.log')]
    return Unit(name, service, cmd, stop_timeout=stop_timeout)


def start_unit(unit, timeout=180):
    started = unit.start()
    unit.wait_ready(timeout)
    return None if started else 'already running'


def stop_units(units, quiet=False):
    """Stop in tiers: OpenStack services together, then the broker and
    the database, then epmd."""
    tiers = [
        [u for u in units if u.service != 'infra'],
        [u for u in units if u.name in ('rabbitmq', 'mariadb')],
        [u for u in units if u.name == 'epmd'],
    ]
    for tier in tiers:
        results = {}

        def stop(u, results):
            t = time.monotonic()
            if u.stop():
                results[u.name] = time.monotonic() - t

        threads = [
            threading.Thread(target=stop, args=(u, results)) for u in tier
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for name, secs in sorted(results.items()):
            if not quiet:
                phase('stopped ' + name, secs)
