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

"""Cinder: api, scheduler, volume on the file-backed fake driver of
minicloud_extras, and backup to a POSIX directory."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, LOGS, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn, oslo

NAME = 'cinder'
DEPENDS = ['keystone']
DATABASES = ['cinder']
DATA_DIRS = ['cinder/lock', 'cinder/backups', 'cinder/coordination']
RPC_QUEUES = [
    'cinder-scheduler',
    'cinder-volume.minicloud@fake',
    'cinder-backup.minicloud',
]
CONF = ETC + '/cinder/cinder.conf'


def units():
    return [
        gunicorn(
            'cinder-api',
            'cinder',
            PORTS['cinder'],
            'cinder.wsgi.api:application',
            threads=1,
            argv=[
                'cinder-api',
                '--config-file',
                CONF,
                '--log-file',
                LOGS + '/cinder-api.log',
            ],
        ),
        oslo('cinder-scheduler', 'cinder', 'cinder-scheduler', CONF),
        oslo('cinder-volume', 'cinder', 'cinder-volume', CONF),
        oslo('cinder-backup', 'cinder', 'cinder-backup', CONF),
    ]


def write_configs():
    copy_from_venv('cinder/api-paste.ini', ETC + '/cinder/api-paste.ini')
    copy_from_venv(
        'cinder/resource_filters.json', ETC + '/cinder/resource_filters.json'
    )
    write_config(
        'cinder/cinder.conf',
        database=db_url('cinder'),
        password=service_password('cinder'),
    )


def add_steps(plan):
    sync = [os.path.join(VBIN, 'cinder-manage'), '--config-file', CONF]
    plan.add(
        'cinder-db',
        once('cinder-db', manage('cinder-manage.log', [*sync, 'db', 'sync'])),
        ['mariadb'],
    )
    plan.start(
        ['cinder-api', 'cinder-scheduler', 'cinder-volume', 'cinder-backup'],
        ['cinder-db', 'rabbitmq'],
    )
