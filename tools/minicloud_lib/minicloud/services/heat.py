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

"""Heat: api and engine, with stack abandon and adopt enabled."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, LOGS, PASSWORDS, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn, oslo

NAME = 'heat'
DEPENDS = ['keystone']
DATABASES = ['heat']
DATA_DIRS = ['heat/lock']
RPC_QUEUES = ['engine']
CONF = ETC + '/heat/heat.conf'


def units():
    return [
        gunicorn(
            'heat-api',
            'heat',
            PORTS['heat'],
            'heat.wsgi.api:application',
            threads=2,
            argv=[
                'heat-api',
                '--config-file',
                CONF,
                '--log-file',
                LOGS + '/heat-api.log',
            ],
        ),
        oslo('heat-engine', 'heat', 'heat-engine', CONF),
    ]


def write_configs():
    copy_from_venv('heat/api-paste.ini', ETC + '/heat/api-paste.ini')
    copy_from_venv('heat/environment.d', ETC + '/heat/environment.d')
    copy_from_venv('heat/templates', ETC + '/heat/templates')
    write_config(
        'heat/heat.conf',
        database=db_url('heat'),
        password=service_password('heat'),
        domain_admin_password=PASSWORDS['heat_domain_admin'],
        # heat-api-cfn's port; minicloud does not run heat-api-cfn
        cfn_port=PORTS['heat'] + 1,
        identity_url=f'http://127.0.0.1:{PORTS["keystone"]}',
    )


def add_steps(plan):
    sync = [
        os.path.join(VBIN, 'heat-manage'),
        '--config-file',
        CONF,
        'db_sync',
    ]
    plan.add(
        'heat-db',
        once('heat-db', manage('heat-manage.log', sync)),
        ['mariadb'],
    )
    plan.start(['heat-api', 'heat-engine'], ['heat-db', 'rabbitmq'])
