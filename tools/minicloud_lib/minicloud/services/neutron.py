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

"""Neutron: ML2 with the router and trunk plugins and no agents (the
minicloud mechanism driver of minicloud_extras binds every port)."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'neutron'
DEPENDS = ['keystone']
DATABASES = ['neutron']
DATA_DIRS = ['neutron/lock']
RPC_QUEUES = []


def units():
    return [
        gunicorn(
            'neutron-api',
            'neutron',
            PORTS['neutron'],
            'neutron.wsgi.api:application',
            threads=1,
            env={
                'OS_NEUTRON_CONFIG_DIR': ETC + '/neutron',
                'OS_NEUTRON_CONFIG_FILES': 'neutron.conf;ml2_conf.ini',
            },
        )
    ]


def write_configs():
    copy_from_venv('neutron/api-paste.ini', ETC + '/neutron/api-paste.ini')
    write_config(
        'neutron/neutron.conf',
        database=db_url('neutron'),
        password=service_password('neutron'),
    )
    write_config('neutron/ml2_conf.ini')


def add_steps(plan):
    upgrade = [
        os.path.join(VBIN, 'neutron-db-manage'),
        '--config-file',
        ETC + '/neutron/neutron.conf',
        '--config-file',
        ETC + '/neutron/ml2_conf.ini',
        'upgrade',
        'heads',
    ]
    plan.add(
        'neutron-db',
        once('neutron-db', manage('neutron-db-manage.log', upgrade)),
        ['mariadb'],
    )
    plan.start(['neutron-api'], ['neutron-db', 'rabbitmq'])
