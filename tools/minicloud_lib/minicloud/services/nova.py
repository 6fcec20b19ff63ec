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

"""Nova: api, conductor, scheduler, and two computes (compute-a and
compute-b) on the fake virt driver, in cell1."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import COMPUTE_HOSTS, ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once, parallel
from ..units import gunicorn, oslo
from ..util import run

NAME = 'nova'
DEPENDS = ['keystone', 'placement', 'glance', 'neutron']
DATABASES = ['nova_api', 'nova_cell0', 'nova_cell1']
DATA_DIRS = ['nova/lock'] + [f'nova-{h}/lock' for h in COMPUTE_HOSTS]
RPC_QUEUES = ['conductor', 'scheduler'] + [
    'compute.' + h for h in COMPUTE_HOSTS
]
CONF = ETC + '/nova/nova.conf'
DB_CONF = ETC + '/nova/nova-db.conf'


def units():
    return [
        gunicorn(
            'nova-api',
            'nova',
            PORTS['nova'],
            'nova.wsgi.osapi_compute:application',
            threads=1,
            env={
                'OS_NOVA_CONFIG_DIR': ETC + '/nova',
                'OS_NOVA_CONFIG_FILES': (
                    'api-paste.ini;nova.conf;nova-db.conf;nova-api.conf'
                ),
            },
        ),
        oslo(
            'nova-conductor',
            'nova',
            'nova-conductor',
            CONF,
            DB_CONF,
            one_process=True,
        ),
        oslo(
            'nova-scheduler',
            'nova',
            'nova-scheduler',
            CONF,
            DB_CONF,
            one_process=True,
        ),
    ] + [
        # no DB options: nova-compute goes through the conductor
        oslo(
            'nova-' + host,
            'nova',
            'nova-compute',
            CONF,
            f'{ETC}/nova/nova-{host}.conf',
        )
        for host in COMPUTE_HOSTS
    ]


def write_configs():
    copy_from_venv('nova/api-paste.ini', ETC + '/nova/api-paste.ini')
    write_config('nova/nova.conf', password=service_password('nova'))
    write_config(
        'nova/nova-db.conf',
        api_database=db_url('nova_api'),
        cell1_database=db_url('nova_cell1'),
    )
    write_config('nova/nova-cell0-db.conf', database=db_url('nova_cell0'))
    write_config('nova/nova-api.conf')
    for host in COMPUTE_HOSTS:
        write_config(
            'nova/nova-compute.conf', f'nova/nova-{host}.conf', host=host
        )


def map_hosts():
    """Map every nova-compute service's host to cell1 (``nova-manage
    cell_v2 discover_hosts --by-service``). A compute whose service was
    deleted comes back with its compute node still marked mapped (its node
    identity is kept) but no host mapping on Nova 29 (2024.1), which the
    scheduler's periodic discovery never makes again: every boot on it
    fails with HostMappingNotFound."""
    run(
        [
            os.path.join(VBIN, 'nova-manage'),
            '--config-file',
            CONF,
            '--config-file',
            DB_CONF,
            'cell_v2',
            'discover_hosts',
            '--by-service',
        ],
        'nova-manage.log',
    )


def add_steps(plan):
    base = [os.path.join(VBIN, 'nova-manage'), '--config-file', CONF]
    nm = [*base, '--config-file', DB_CONF]
    cell0 = [*base, '--config-file', ETC + '/nova/nova-cell0-db.conf']

    def nova_db():
        # the API DB chain, and the cell1 and cell0 schemas (same main
        # DB schema, migrated with --local_cell), in parallel
        parallel(
            manage(
                'nova-manage.log',
                [*nm, 'api_db', 'sync'],
                [
                    *nm,
                    'cell_v2',
                    'map_cell0',
                    '--database_connection',
                    db_url('nova_cell0'),
                ],
                [*nm, 'cell_v2', 'create_cell', '--name', 'cell1'],
            ),
            manage(
                'nova-manage-cell1.log', [*nm, 'db', 'sync', '--local_cell']
            ),
            manage(
                'nova-manage-cell0.log', [*cell0, 'db', 'sync', '--local_cell']
            ),
        )

    plan.add('nova-db', once('nova-db', nova_db), ['mariadb'])
    plan.start(['nova-api'], ['nova-db'])
    plan.start(['nova-conductor', 'nova-scheduler'], ['nova-db', 'rabbitmq'])
    # computes report to placement at start-up: start them when it and the
    # service users are there, else they wait a 60 s period
    plan.start(
        ['nova-' + h for h in COMPUTE_HOSTS], ['nova-conductor', 'placement']
    )
