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

"""Octavia: api and worker of the amphora provider, on the no-op compute,
network and amphora drivers."""

import os

from ..configs import write_config
from ..paths import (
    DATA,
    ETC,
    LOGS,
    PORTS,
    VBIN,
    VPYTHON,
    db_url,
    service_password,
)
from ..tasks import manage, once
from ..units import gunicorn, oslo

NAME = 'octavia'
DEPENDS = ['keystone', 'neutron']
DATABASES = ['octavia']
DATA_DIRS = ['octavia/lock']
RPC_QUEUES = ['octavia_provisioning_v2']
CONF = ETC + '/octavia/octavia.conf'


def units():
    return [
        gunicorn(
            'octavia-api',
            'octavia',
            PORTS['octavia'],
            'octavia.wsgi.api:application',
            threads=1,
            argv=[
                'octavia-api',
                '--config-file',
                CONF,
                '--log-file',
                LOGS + '/octavia-api.log',
            ],
        ),
        oslo('octavia-worker', 'octavia', 'octavia-worker', CONF),
    ]


def write_configs():
    write_config(
        'octavia/octavia.conf',
        port=PORTS['octavia'],
        database=db_url('octavia'),
        password=service_password('octavia'),
    )


def add_steps(plan):
    upgrade = [
        os.path.join(VBIN, 'octavia-db-manage'),
        '--config-file',
        CONF,
        'upgrade',
        'head',
    ]
    # the CA and client certificate that octavia.conf names
    certs = [
        VPYTHON,
        '-m',
        'minicloud_extras.helper',
        'certs',
        DATA + '/octavia/certs',
    ]
    plan.add(
        'octavia-db',
        once('octavia-db', manage('octavia-db-manage.log', upgrade, certs)),
        ['mariadb'],
    )
    plan.start(['octavia-api', 'octavia-worker'], ['octavia-db', 'rabbitmq'])
