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


# RegionTwo's Glance (services/region_two.py) is one more of these, with its
# own unit, port, etc/ and data/ directory (its file store) and database


def api_unit(name, service, port, subdir):
    return gunicorn(
        name,
        service,
        port,
        'glance.wsgi.api:application',
        threads=1,
        env={'OS_GLANCE_CONFIG_DIR': f'{ETC}/{subdir}'},
    )


def units():
    return [api_unit('glance-api', NAME, PORTS['glance'], 'glance')]


def write_server_configs(unit, subdir, port, database):
    """etc/<subdir>/: glance-api.conf (logs/<unit>.log, the file store in
    data/<subdir>/images/) and glance-api-paste.ini."""
    copy_from_venv(
        'glance/glance-api-paste.ini', f'{ETC}/{subdir}/glance-api-paste.ini'
    )
    write_config(
        'glance/glance-api.conf',
        f'{subdir}/glance-api.conf',
        unit=unit,
        subdir=subdir,
        port=port,
        database=db_url(database),
        password=service_password('glance'),
    )


def write_configs():
    write_server_configs('glance-api', 'glance', PORTS['glance'], 'glance')


def add_server_steps(plan, unit, subdir, after=(), readiness=None):
    """<subdir>-db (the migrations, once MariaDB and the steps after are
    done), then the unit's start (checked by the readiness phase)."""
    step = f'{subdir}-db'
    sync = [
        os.path.join(VBIN, 'glance-manage'),
        '--config-file',
        f'{ETC}/{subdir}/glance-api.conf',
        'db_sync',
    ]
    plan.add(
        step,
        once(step, manage(f'{subdir}-manage.log', sync)),
        ['mariadb', *after],
    )
    plan.start([unit], [step], readiness)


def add_steps(plan):
    add_server_steps(plan, 'glance-api', 'glance')
