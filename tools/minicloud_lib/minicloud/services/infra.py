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

"""MariaDB, RabbitMQ and its own epmd: private instances, not the system's
(which the Debian packages would start), on minicloud's ports."""

import json
import os
import shutil
import subprocess
import time

from ..configs import write_config
from ..paths import (
    COORDINATION_DB,
    COORDINATION_URL,
    DATA,
    DB_USER,
    ETC,
    LOGS,
    PASSWORDS,
    PORT_BASE,
    PORTS,
    RUN,
)
from ..state import update_state
from ..units import Unit, start_unit
from ..util import Failure, child_env, mkdirs, run, say

DATA_DIRS = []
MY_CNF = os.path.join(ETC, 'mariadb', 'my.cnf')
# one Erlang node name per port base, so that two miniclouds can coexist
RABBIT_NODE = (
    'minicloud@localhost'
    if PORT_BASE == 28000
    else f'minicloud{PORT_BASE}@localhost'
)


def rabbit_env():
    home = os.path.join(DATA, 'rabbitmq', 'home')
    return {
        'HOME': home,
        'RABBITMQ_NODENAME': RABBIT_NODE,
        'RABBITMQ_USE_LONGNAME': 'false',
        'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
        'RABBITMQ_NODE_PORT': str(PORTS['rabbitmq']),
        'RABBITMQ_DIST_PORT': str(PORTS['rabbitmq_dist']),
        'ERL_EPMD_PORT': str(PORTS['epmd']),
        'ERL_EPMD_ADDRESS': '127.0.0.1',
        'RABBITMQ_CTL_DIST_PORT_MIN': str(PORTS['rabbitmq_ctl_min']),
        'RABBITMQ_CTL_DIST_PORT_MAX': str(PORTS['rabbitmq_ctl_max']),
        'RABBITMQ_MNESIA_BASE': os.path.join(DATA, 'rabbitmq', 'mnesia'),
        'RABBITMQ_LOG_BASE': os.path.join(LOGS, 'rabbitmq'),
        'RABBITMQ_CONFIG_FILE': os.path.join(ETC, 'rabbitmq', 'rabbitmq.conf'),
        'RABBITMQ_ENABLED_PLUGINS_FILE': os.path.join(
            ETC, 'rabbitmq', 'enabled_plugins'
        ),
        'RABBITMQ_CONF_ENV_FILE': os.path.join(
            ETC, 'rabbitmq', 'rabbitmq-env.conf'
        ),
        'RABBITMQ_PID_FILE': os.path.join(RUN, 'rabbitmq.erlpid'),
        'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS': (
            '-kernel inet_dist_use_interface {127,0,0,1}'
        ),
        'RABBITMQ_CTL_ERL_ARGS': '-kernel inet_dist_use_interface {127,0,0,1}',
    }


def units():
    return [
        Unit(
            'epmd',
            'infra',
            [
                shutil.which('epmd') or '/usr/bin/epmd',
                '-port',
                str(PORTS['epmd']),
                '-address',
                '127.0.0.1',
            ],
            port=PORTS['epmd'],
        ),
        Unit(
            'mariadb',
            'infra',
            ['/usr/sbin/mariadbd', f'--defaults-file={MY_CNF}'],
            port=PORTS['mariadb'],
            stop_timeout=60,
        ),
        Unit(
            'rabbitmq',
            'infra',
            ['/usr/lib/rabbitmq/bin/rabbitmq-server'],
            env=rabbit_env(),
            port=PORTS['rabbitmq'],
            stop_timeout=30,
            extra_logs=os.path.join(LOGS, 'rabbitmq', '*.log'),
        ),
    ]


def write_configs():
    write_config('mariadb/my.cnf', port=PORTS['mariadb'])
    for name in ('rabbitmq.conf', 'enabled_plugins', 'rabbitmq-env.conf'):
        write_config('rabbitmq/' + name)


def unit(name):
    return next(u for u in units() if u.name == name)


def mysql(sql):
    return subprocess.run(
        ['/usr/bin/mariadb', f'--defaults-file={MY_CNF}', '-uroot', '-e', sql],
        capture_output=True,
        text=True,
    )


def step_mariadb(databases):
    if not os.path.isdir(os.path.join(DATA, 'mysql', 'mysql')):
        run(
            [
                '/usr/bin/mariadb-install-db',
                f'--defaults-file={MY_CNF}',
                '--auth-root-authentication-method=normal',
                '--skip-test-db',
            ],
            'mariadb-install.log',
        )
    note = start_unit(unit('mariadb'), 60)
    sql = [
        f"CREATE USER IF NOT EXISTS '{DB_USER}'@'127.0.0.1' IDENTIFIED BY "
        f"'{PASSWORDS['db']}';"
    ]
    for db in (*databases, COORDINATION_DB):
        sql.append(f'CREATE DATABASE IF NOT EXISTS `{db}`;')
        sql.append(
            f"GRANT ALL PRIVILEGES ON `{db}`.* TO '{DB_USER}'@'127.0.0.1';"
        )
    deadline = time.monotonic() + 30
    while True:
        res = mysql(' '.join(sql))
        if res.returncode == 0:
            break
        if time.monotonic() > deadline:
            raise Failure(f'cannot create databases: {res.stderr}')
        time.sleep(0.5)
    # what tests/functional/test_reaper.py locks with
    update_state(coordination_url=COORDINATION_URL)
    return note


# Keystone's notifications (keystone.conf) go to queue notifications.info,
# which no service of the minicloud reads, and to the queue of each
# listener pool of osc-cascade-reaper (named after the pool), which stays
# when its reaper stops: bounded, as doc/source/reaper.rst advises, and a
# pool queue nobody has consumed for 10 minutes goes (each functional test
# run has a pool of its own)
POLICIES = {
    'minicloud-notifications': (
        r'^notifications\.',
        {'max-length': 1000, 'message-ttl': 3600000},
    ),
    'minicloud-reaper-pools': (
        r'^osc-cascade-reaper',
        {'max-length': 10000, 'message-ttl': 3600000, 'expires': 600000},
    ),
}


def set_policies(timeout=60):
    deadline = time.monotonic() + timeout
    for name, (pattern, definition) in POLICIES.items():
        while True:
            res = rabbitmqctl(
                '-q',
                'set_policy',
                '--apply-to',
                'queues',
                name,
                pattern,
                json.dumps(definition, sort_keys=True),
            )
            if res.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise Failure(
                    f'rabbitmqctl set_policy {name} failed: '
                    f'{(res.stderr or res.stdout).strip()}'
                )
            time.sleep(1)


def step_rabbitmq():
    mkdirs(
        os.path.join(DATA, 'rabbitmq', 'home'), os.path.join(LOGS, 'rabbitmq')
    )
    note = start_unit(unit('epmd'), 30)
    start_unit(unit('rabbitmq'), 120)
    set_policies()
    return note


def add_steps(plan, databases):
    plan.add('mariadb', lambda: step_mariadb(databases))
    plan.add('rabbitmq', step_rabbitmq)


def rabbitmqctl(*args):
    env = child_env(rabbit_env())
    return subprocess.run(
        ['/usr/lib/rabbitmq/bin/rabbitmqctl', *args],
        env=env,
        capture_output=True,
        text=True,
    )


def wait_rabbit_consumers(queues, timeout=180):
    """A cast to a queue that no one consumes yet is lost: wait until each
    queue has a consumer."""
    deadline = time.monotonic() + timeout
    while True:
        res = rabbitmqctl('-q', 'list_queues', 'name', 'consumers')
        consumed = set()
        for line in res.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] != '0':
                consumed.add(parts[0])
        missing = [q for q in queues if q not in consumed]
        if not missing:
            text = f'RPC servers consuming ({len(queues)} queues)'
            say(f'      {text:<46}')
            return
        if time.monotonic() > deadline:
            raise Failure(
                f'no consumer on RabbitMQ queue(s) {", ".join(missing)} '
                f'after {timeout}s'
            )
        time.sleep(1)
