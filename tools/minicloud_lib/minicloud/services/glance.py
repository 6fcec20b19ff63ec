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

"""Glance: images in a file store under data/glance."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'glance'
DEPENDS = ['keystone']
DATABASES = ['glance']
DATA_DIRS = ['glance/lock']
RPC_QUEUES = []
CONF = os.path.join(ETC, 'glance', 'glance-api.conf')


def units():
    return [
        gunicorn(
            'glance-api',
            'glance',
            PORTS['glance'],
            'glance.wsgi.api:application',
            threads=1,
            env={'OS_GLANCE_CONFIG_DIR': ETC + '/glance'},
        )
    ]


def write_configs():
    copy_from_venv(
        'glance/glance-api-paste.ini', ETC + '/glance/glance-api-paste.ini'
    )
    write_config(
        'glance/glance-api.conf',
        port=PORTS['glance'],
        database=db_url('glance'),
        password=service_password('glance'),
    )


def add_steps(plan):
    sync = [
        os.path.join(VBIN, 'glance-manage'),
        '--config-file',
        CONF,
        'db_sync',
    ]
    plan.add(
        'glance-db',
        once('glance-db', manage('glance-manage.log', sync)),
        ['mariadb'],
    )
    plan.start(['glance-api'], ['glance-db'])
