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

"""Barbican: the API alone, secrets stored by the simple_crypto plugin (a
fixed key-encryption key in the config), orders processed in the API
process (no worker, no queue: ``[queue] enable = false``)."""

import base64
import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'barbican'
DEPENDS = ['keystone']
DATABASES = ['barbican']
DATA_DIRS = []
RPC_QUEUES = []
CONF_DIR = ETC + '/barbican'
# 32 bytes, base64: simple_crypto's key-encryption key (a test cloud's)
KEK = base64.b64encode(b'minicloud-test-kek-32-bytes-long').decode()


def units():
    return [
        gunicorn(
            'barbican-api',
            NAME,
            PORTS['barbican'],
            'minicloud_extras.barbican_wsgi:application',
            threads=2,
            # every Barbican config object reads the default places only:
            # ~/barbican.conf is etc/barbican/barbican.conf
            env={
                'HOME': CONF_DIR,
                'MINICLOUD_PASTE': CONF_DIR + '/barbican-api-paste.ini',
            },
        )
    ]


def write_configs():
    copy_from_venv(
        'barbican/barbican-api-paste.ini', CONF_DIR + '/barbican-api-paste.ini'
    )
    write_config(
        'barbican/barbican.conf',
        port=PORTS['barbican'],
        database=db_url('barbican'),
        password=service_password('barbican'),
        kek=KEK,
    )


def add_steps(plan):
    upgrade = [
        os.path.join(VBIN, 'barbican-manage'),
        'db',
        'upgrade',
        '--db-url',
        db_url('barbican'),
    ]
    plan.add(
        'barbican-db',
        once('barbican-db', manage('barbican-manage.log', upgrade)),
        ['mariadb'],
    )
    plan.start(['barbican-api'], ['barbican-db'])
