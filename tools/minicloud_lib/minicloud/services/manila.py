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

"""Manila: api, scheduler and share, the share service on two backends of
Manila's own DummyDriver (``manila.tests.share.drivers.dummy``, shipped in
the manila wheel), which handle share servers (DHSS=True, addresses from
the standalone network plugin, no Neutron) and replicate to each other,
and a third without share servers (DHSS=False: what a share transfer
needs):
Manila's real API, database, scheduler and share manager and their state
machine, and no data plane (nothing is exported, nothing mounts).

Why the DummyDriver: what the cascade needs of Manila is its API and its
decisions (which states refuse a delete, what a share network's delete
takes, what an admin's list filters), all of which live above the driver.
LVM needs lvm2, a volume group and a kernel NFS server (nfsd, which a
container cannot load); ZFS needs the zfs kernel module; the container
driver needs Docker and LVM. The DummyDriver runs anywhere, and is the
driver Manila's own API tests (manila-tempest-plugin's dummy jobs) run on.
"""

import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, LOGS, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn, oslo

NAME = 'manila'
# three processes, about 0.4 GiB: only when asked for (up --with manila)
OPTIONAL = True
DEPENDS = ['keystone']
DATABASES = ['manila']
DATA_DIRS = ['manila/lock']
RPC_QUEUES = [
    'manila-scheduler',
    'manila-share.minicloud@alpha',
    'manila-share.minicloud@beta',
    'manila-share.minicloud@gamma',
]
CONF_DIR = ETC + '/manila'
CONF = CONF_DIR + '/manila.conf'
# from PyPI (tools/minicloud-constraints.txt), installed when chosen
PIP_PACKAGES = ['manila']


def units():
    return [
        gunicorn(
            'manila-api',
            NAME,
            PORTS['manila'],
            'manila.wsgi.api:application',
            threads=2,
            argv=[
                'manila-api',
                '--config-file',
                CONF,
                '--log-file',
                LOGS + '/manila-api.log',
            ],
        ),
        oslo(
            'manila-scheduler',
            NAME,
            'manila-scheduler',
            CONF,
            one_process=True,
        ),
        oslo('manila-share', NAME, 'manila-share', CONF),
    ]


def write_configs():
    copy_from_venv('manila/api-paste.ini', CONF_DIR + '/api-paste.ini')
    copy_from_venv('manila/rootwrap.conf', CONF_DIR + '/rootwrap.conf')
    write_config(
        'manila/manila.conf',
        port=PORTS['manila'],
        database=db_url('manila'),
        password=service_password('manila'),
    )


def add_steps(plan):
    sync = [os.path.join(VBIN, 'manila-manage'), '--config-file', CONF]
    plan.add(
        'manila-db',
        once('manila-db', manage('manila-manage.log', [*sync, 'db', 'sync'])),
        ['mariadb'],
    )
    plan.start(
        ['manila-api', 'manila-scheduler', 'manila-share'],
        ['manila-db', 'rabbitmq'],
    )
