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

"""The commands: up, down, status, logs, stop, start, restart, env."""

import argparse
import glob
import os
import resource
import shutil
import sys
import time

import minicloud

from .bringup import bring_up
from .cloud import (
    DEFAULT_SERVICES,
    OPTIONAL,
    SERVICES,
    all_units,
    find_units,
    modules_for,
    optional_services,
    remembered_services,
    resolve_services,
    server_packages,
    units_for,
    write_clouds_yaml,
    write_configs,
)
from .install import (
    CLIENT_PACKAGES,
    install_apt,
    install_extras,
    pip_install,
)
from .paths import (
    CLIENT_VENV,
    CLOUDS_YAML,
    COORDINATION_URL,
    HOME,
    LOGS,
    NEWEST,
    RELEASE,
    RELEASES,
    STATE_FILE,
    TRANSPORT_URL,
    VENV,
)
from .services import infra, nova
from .state import load_state, update_state
from .tasks import Tasks
from .units import start_unit, stop_units
from .util import T0, Failure, mkdirs, phase, say, tail


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def reexec_for_release(release):
    """The paths (venvs, constraints, templates) are those of one release
    for the life of a process: run again with MINICLOUD_RELEASE set."""
    env = dict(os.environ, MINICLOUD_RELEASE=release)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def check_release(state, fresh):
    """A cloud's databases are of one release: another release on the same
    home would migrate them up (untested) or meet a newer schema."""
    had = state.get('release') or NEWEST
    if state.get('initialised') and had != RELEASE and not fresh:
        raise Failure(
            f'{HOME} holds a cloud of release {had}, not {RELEASE}: add '
            '--fresh (wipes its data) or use another MINICLOUD_HOME'
        )


def cmd_up(args):
    if args.release and args.release != RELEASE:
        reexec_for_release(args.release)
    state = load_state()
    check_release(state, args.fresh)
    if args.fresh:
        cmd_down(args, quiet=True)
        t = time.monotonic()
        for sub in ('etc', 'data', 'logs', 'run'):
            shutil.rmtree(os.path.join(HOME, sub), ignore_errors=True)
        for f in (STATE_FILE, CLOUDS_YAML):
            if os.path.exists(f):
                os.unlink(f)
        state = {}
        phase('wipe state (--fresh)', time.monotonic() - t)
    also = optional_services(
        args.with_ or os.environ.get('MINICLOUD_WITH', '')
    )
    if args.services:
        services = resolve_services(
            [x.strip() for x in args.services.split(',') if x.strip()] + also
        )
    else:
        services = remembered_services(state, also)
    # remembered: a later up without --services gets new default services
    # too, and keeps the optional ones once asked for
    all_services = set(DEFAULT_SERVICES) <= set(services)
    chosen_optional = [s for s in services if s in OPTIONAL]
    units = units_for(services)
    me = sys.argv[0]
    if (
        state.get('ready') == services
        and all(u.running() for u in units)
        and not args.client
        and not args.demo
    ):
        say(
            f'already up ({", ".join(services)}); {len(units)} units '
            f'running. Use: eval "$({me} env)"'
        )
        return 0
    say(f'home {HOME}; release {RELEASE}; services: {", ".join(services)}')
    mkdirs(HOME, LOGS)
    update_state(
        release=RELEASE,
        services=services,
        all_services=all_services,
        ready=None,
        **{'with': chosen_optional},
    )

    t = Tasks()
    t.add('install: apt packages', lambda: install_apt(services))
    t.add(
        'install: service venv',
        lambda: pip_install(
            VENV, server_packages(services), 'install-venv.log'
        ),
    )
    if args.client:
        t.add(
            'install: client venv',
            lambda: pip_install(
                CLIENT_VENV, CLIENT_PACKAGES, 'install-client-venv.log'
            ),
        )
    if not t.run():
        return 1
    install_extras()
    write_configs(services)
    write_clouds_yaml(services)
    if not bring_up(services, args.demo):
        say(
            f'bring-up FAILED after {time.monotonic() - T0:.1f}s; processes '
            f'started so far keep running ("{me} status", "{me} logs UNIT", '
            f'"{me} down")'
        )
        return 1
    update_state(ready=services)
    say(
        f'ready in {time.monotonic() - T0:.1f}s: {len(units)} units. '
        f'clouds.yaml: {CLOUDS_YAML}'
    )
    say(
        f'CPU used: {children_cpu():.0f}s by one-shot steps (pip, '
        f'migrations, setup), {sum(u.cpu_seconds() for u in units):.0f}s so '
        f'far by the services (load average now {os.getloadavg()[0]:.1f})'
    )
    say(
        f'use it: eval "$({me} env)"; openstack --os-cloud minicloud-admin '
        'server list'
    )
    return 0


def cmd_down(args, quiet=False):
    if not os.path.isdir(HOME):
        return 0
    t = time.monotonic()
    stop_units(all_units(), quiet)
    update_state(ready=None)
    if not quiet:
        say(f'down in {time.monotonic() - t:.1f}s (state kept in {HOME})')
    return 0


def cmd_status(args):
    state = load_state()
    services = remembered_services(state)
    print(f'minicloud home: {HOME}')
    print(f'release: {RELEASE}')
    ready = '' if state.get('ready') else '  (not ready)'
    print(f'services: {", ".join(services)}{ready}')
    print(
        f'{"UNIT":<18} {"STATE":<9} {"PID":<8} {"PORT":<6} '
        f'{"RSS MiB":>9} {"PSS MiB":>9}'
    )
    total_rss = total_pss = 0
    for u in all_units():
        procs = u.processes()
        if u.service not in services and u.service != 'infra' and not procs:
            continue
        rss, pss = (kib / 1024.0 for kib in u.memory_kib())
        total_rss += rss
        total_pss += pss
        running = 'running' if procs else 'stopped'
        pid = u.pgid() if procs else '-'
        port = u.port or '-'
        print(
            f'{u.name:<18} {running:<9} {pid:<8} {port:<6} '
            f'{rss:9.0f} {pss:9.0f}'
        )
    # the PSS is the cloud's memory; the RSS counts shared pages again
    # in every process that maps them
    print(
        f'{"TOTAL":<18} {"":<9} {"":<8} {"":<6} {total_rss:9.0f} '
        f'{total_pss:9.0f}  ({total_pss / 1024:.2f} GiB in use)'
    )
    return 0


def cmd_logs(args):
    if not args.unit:
        for path in sorted(
            glob.glob(os.path.join(LOGS, '*'))
            + glob.glob(os.path.join(LOGS, '*', '*'))
        ):
            if os.path.isfile(path):
                print(f'{os.path.getsize(path):10d}  {path}')
        return 0
    for u in find_units(args.unit):
        for path in u.logs():
            print(f'==> {path} <==')
            print(tail(path, args.lines))
    return 0


def cmd_stop(args):
    units = find_units(args.unit)
    stop_units(units)
    update_state(ready=None)
    return 0


def cmd_start(args):
    units = find_units(args.unit)
    for u in units:
        t = time.monotonic()
        note = start_unit(u)
        phase('start ' + u.name, time.monotonic() - t, note or '')
    state = load_state()
    services = remembered_services(state)
    if all(u.running() for u in units_for(services)):
        update_state(ready=services)
    return 0


def cmd_restart(args):
    """Stop, then start: what a broker or service restart does to its
    clients (the reaper's functional test restarts rabbitmq)."""
    cmd_stop(args)
    code = cmd_start(args)
    if any(u.name == 'rabbitmq' for u in find_units(args.unit)):
        # the RPC servers reconnect on their own; a cast before they do is
        # lost (the next test's boot would stay in BUILD)
        services = remembered_services(load_state())
        queues = [q for m in modules_for(services) for q in m.RPC_QUEUES]
        if queues:
            infra.wait_rabbit_consumers(queues)
    return code


def cmd_map_hosts(args):
    nova.map_hosts()
    return 0


def cmd_env(args):
    print(f'export OS_CLIENT_CONFIG_FILE={CLOUDS_YAML}')
    print('export OS_CLOUD=${OS_CLOUD:-minicloud-admin}')
    # the RabbitMQ that Keystone notifies on (osc-cascade-reaper's
    # transport_url); state.json's notifications says whether it does
    print(f'export MINICLOUD_TRANSPORT_URL={TRANSPORT_URL}')
    # the tooz backend of osc-cascade's per-project locks (--coordination-url)
    print(f'export MINICLOUD_COORDINATION_URL={COORDINATION_URL}')
    if os.path.exists(os.path.join(CLIENT_VENV, 'bin', 'openstack')):
        print(f'export PATH={os.path.join(CLIENT_VENV, "bin")}:$PATH')
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='minicloud',
        description=minicloud.__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest='command', required=True)
    up = sub.add_parser('up', help='install what is missing, start the cloud')
    up.add_argument(
        '--fresh',
        action='store_true',
        help='wipe state (data, configs, logs) first; venvs stay',
    )
    up.add_argument(
        '--services',
        metavar='LIST',
        help=f'comma-separated subset of: {",".join(SERVICES)} (dependencies '
        'are added)',
    )
    up.add_argument(
        '--with',
        dest='with_',
        metavar='LIST',
        help=f'also the optional services: {",".join(OPTIONAL)} or all '
        '(remembered; default: $MINICLOUD_WITH)',
    )
    up.add_argument(
        '--release',
        choices=[NEWEST, *RELEASES],
        help='the OpenStack release (remembered; a home holds one: '
        'another needs --fresh; default: the one remembered, else newest)',
    )
    up.add_argument(
        '--client',
        action='store_true',
        help='also install client-venv (openstack CLI + plugins)',
    )
    up.add_argument(
        '--demo',
        action='store_true',
        help='also create demo resources in project demo',
    )
    up.set_defaults(func=cmd_up)
    sub.add_parser('down', help='stop every process started').set_defaults(
        func=cmd_down
    )
    sub.add_parser('status', help='units, PIDs, ports, RSS').set_defaults(
        func=cmd_status
    )
    lg = sub.add_parser('logs', help='list logs, or tail those of a unit')
    lg.add_argument('unit', nargs='?')
    lg.add_argument('-n', '--lines', type=int, default=40)
    lg.set_defaults(func=cmd_logs)
    for name, fn in (
        ('stop', cmd_stop),
        ('start', cmd_start),
        ('restart', cmd_restart),
    ):
        p = sub.add_parser(name, help=f'{name} one unit or service')
        p.add_argument('unit', help='unit (nova-compute-a) or service (nova)')
        p.set_defaults(func=fn)
    sub.add_parser(
        'map-hosts',
        help="map the computes' hosts to cell1 (after a service delete)",
    ).set_defaults(func=cmd_map_hosts)
    sub.add_parser('env', help='print shell exports').set_defaults(
        func=cmd_env
    )
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except Failure as exc:
        say(f'ERROR: {exc}')
        return 1
    except KeyboardInterrupt:
        return 130
