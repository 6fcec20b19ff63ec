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

"""Placement: the resource providers the computes report to."""

import os

from ..configs import write_config
from ..paths import ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'placement'
DEPENDS = ['keystone']
DATABASES = ['placement']
DATA_DIRS = []
RPC_QUEUES = []
CONF = os.path.join(ETC, 'placement', 'placement.conf')


def units():
    return [
        gunicorn(
            'placement',
            'placement',
            PORTS['placement'],
            'placement.wsgi.api:application',
            threads=1,
            env={'OS_PLACEMENT_CONFIG_DIR': ETC + '/placement'},
        )
    ]


def write_configs():
    write_config(
        'placement/placement.conf',
        database=db_url('placement'),
        password=service_password('placement'),
    )


def add_steps(plan):
    sync = [
        os.path.join(VBIN, 'placement-manage'),
        '--config-file',
        CONF,
        'db',
        'sync',
    ]
    plan.add(
        'placement-db',
        once('placement-db', manage('placement-manage.log', sync)),
        ['mariadb'],
    )
    plan.start(['placement'], ['placement-db'])
