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

"""Keystone: fernet keys, bootstrap, and the identity data (users, roles,
endpoints) that every other service needs before it starts."""

import base64
import os

from ..configs import release_has, write_config
from ..paths import (
    DATA,
    ETC,
    KS_URL,
    PASSWORDS,
    PORTS,
    REGION,
    TRANSPORT_URL,
    VBIN,
    VPYTHON,
    db_url,
)
from ..state import initialised, load_state, mark_initialised, update_state
from ..tasks import PRIORITY, heavy, manage, once
from ..units import gunicorn, start_unit
from ..util import mkdirs, run, write

NAME = 'keystone'
DEPENDS = []
DATABASES = ['keystone']
DATA_DIRS = ['keystone']
RPC_QUEUES = []
CONF = os.path.join(ETC, 'keystone', 'keystone.conf')


def units():
    return [
        gunicorn(
            'keystone',
            'keystone',
            PORTS['keystone'],
            'keystone.wsgi.api:application',
            threads=4,
            env={'OS_KEYSTONE_CONFIG_DIR': ETC + '/keystone'},
        )
    ]


def write_configs():
    write_config('keystone/keystone.conf', database=db_url('keystone'))
    # 2024.1: the domain manager persona's rules, which 2024.2 made the
    # defaults (oslo.policy finds policy.yaml next to keystone.conf)
    if release_has('keystone/policy.yaml'):
        write_config('keystone/policy.yaml')


def step_keys():
    for repo in ('fernet-keys', 'credential-keys'):
        path = os.path.join(DATA, 'keystone', repo)
        if os.path.exists(os.path.join(path, '0')):
            continue
        mkdirs(path)
        os.chmod(path, 0o700)
        # what keystone-manage fernet_setup writes: a staged key 0 and a
        # primary key 1, each a urlsafe-base64 32-byte Fernet key
        for idx in ('0', '1'):
            write(
                os.path.join(path, idx),
                base64.urlsafe_b64encode(os.urandom(32)).decode(),
                mode=0o600,
            )


# where the keystone.conf of this version sends Keystone's notifications
NOTIFICATIONS = {
    'transport_url': TRANSPORT_URL,
    'exchange': 'keystone',
    'topics': ['notifications'],
    'format': 'cadf',
}


def step_keystone(unit):
    """Start Keystone; once it runs with this keystone.conf, state.json's
    ``notifications`` says where its notifications go (what
    tests/functional/test_reaper.py reads). A Keystone started before
    notifications were turned on keeps running without them, and the
    state without the key, until it is restarted."""
    note = start_unit(unit)
    if note is None:
        update_state(notifications=NOTIFICATIONS)
    return note


def step_identity(services):
    def fn():
        if load_state().get('identity') == services:
            return 'done before'
        heavy(
            PRIORITY['identity'],
            lambda: run(
                [
                    VPYTHON,
                    '-m',
                    'minicloud_extras.setup_cloud',
                    'identity',
                    ETC + '/minicloud.json',
                ],
                'setup-identity.log',
            ),
        )()
        update_state(identity=services)
        return None

    return fn


def add_steps(plan):
    if initialised('keystone-db') and not initialised('keystone-bootstrap'):
        # state written before bootstrap became a step of its own: the
        # keystone-db step used to include it
        mark_initialised('keystone-bootstrap')
    km = [os.path.join(VBIN, 'keystone-manage'), '--config-file', CONF]
    plan.add('keystone-keys', step_keys)
    plan.add(
        'keystone-db',
        once('keystone-db', manage('keystone-manage.log', [*km, 'db_sync'])),
        ['mariadb'],
    )
    # bootstrap (admin, roles, identity endpoint) and keystone's start
    # overlap: nothing asks keystone anything before identity
    bootstrap = [
        *km,
        'bootstrap',
        '--bootstrap-password',
        PASSWORDS['admin'],
        '--bootstrap-username',
        'admin',
        '--bootstrap-project-name',
        'admin',
        '--bootstrap-role-name',
        'admin',
        '--bootstrap-service-name',
        'keystone',
        '--bootstrap-region-id',
        REGION,
        '--bootstrap-admin-url',
        KS_URL,
        '--bootstrap-internal-url',
        KS_URL,
        '--bootstrap-public-url',
        KS_URL,
    ]
    plan.add(
        'keystone-bootstrap',
        once('keystone-bootstrap', manage('keystone-manage.log', bootstrap)),
        ['keystone-db'],
    )
    plan.add(
        'keystone',
        lambda: step_keystone(plan.units['keystone']),
        ['keystone-db', 'keystone-keys'],
    )
    plan.add(
        'identity',
        step_identity(plan.services),
        ['keystone', 'keystone-bootstrap'],
    )
