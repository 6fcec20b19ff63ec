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

"""Designate: api, central, worker, producer and mdns, with one pool whose
target is a named of its own (Debian's bind9, Designate's bind9 backend:
zones added and deleted over rndc, transferred from mdns), so that zones
reach ACTIVE and their record sets are served."""

import base64
import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import Unit, gunicorn, oslo
from . import infra

NAME = 'designate'
# six processes, about 0.9 GiB: only when asked for (up --with designate)
OPTIONAL = True
DEPENDS = ['keystone']
DATABASES = ['designate']
DATA_DIRS = ['designate/lock', 'designate/bind']
RPC_QUEUES = ['central', 'worker', 'producer']
CONF_DIR = ETC + '/designate'
CONF = CONF_DIR + '/designate.conf'
NAMED = '/usr/sbin/named'
# a test cloud's rndc key (HMAC-SHA256, 32 bytes)
RNDC_SECRET = base64.b64encode(b'minicloud-rndc-key-of-32-bytes!!').decode()


def units():
    named = Unit(
        'named',
        NAME,
        # -g: foreground, logs on stderr (logs/named.out); -n 1: one CPU
        [NAMED, '-g', '-n', '1', '-c', CONF_DIR + '/named.conf'],
        port=PORTS['dns'],
    )
    mdns = oslo('designate-mdns', NAME, 'designate-mdns', CONF)
    mdns.port = PORTS['designate_mdns']
    return [
        named,
        gunicorn(
            'designate-api',
            NAME,
            PORTS['designate'],
            'designate.wsgi.api:application',
            threads=2,
            env={'OS_DESIGNATE_CONFIG_DIR': CONF_DIR},
        ),
        oslo('designate-central', NAME, 'designate-central', CONF),
        oslo('designate-worker', NAME, 'designate-worker', CONF),
        oslo('designate-producer', NAME, 'designate-producer', CONF),
        mdns,
    ]


def write_configs():
    copy_from_venv('designate/api-paste.ini', CONF_DIR + '/api-paste.ini')
    ports = {
        'port': PORTS['designate'],
        'mdns_port': PORTS['designate_mdns'],
        'dns_port': PORTS['dns'],
        'rndc_port': PORTS['rndc'],
    }
    write_config(
        'designate/designate.conf',
        database=db_url('designate'),
        password=service_password('designate'),
        **ports,
    )
    write_config('designate/pools.yaml', **ports)
    write_config('designate/named.conf', **ports)
    write_config('designate/rndc.key', rndc_secret=RNDC_SECRET)


MANAGE = [os.path.join(VBIN, 'designate-manage'), '--config-file', CONF]


def pools():
    """The pool's target, from etc/designate/pools.yaml (rewritten by every
    up), once central consumes its queue: the command asks central."""
    infra.wait_rabbit_consumers(['central'])
    update = [*MANAGE, 'pool', 'update', '--file', CONF_DIR + '/pools.yaml']
    manage('designate-manage.log', update)()


def add_steps(plan):
    plan.add(
        'designate-db',
        once(
            'designate-db',
            manage('designate-manage.log', [*MANAGE, 'database', 'sync']),
        ),
        ['mariadb'],
    )
    plan.start(['named'], ['mariadb'])
    plan.start(
        ['designate-api', 'designate-central'], ['designate-db', 'rabbitmq']
    )
    plan.add('designate-pools', pools, ['designate-central'])
    plan.start(
        ['designate-worker', 'designate-producer', 'designate-mdns'],
        ['designate-pools', 'named'],
    )
