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

"""Aodh: its API only, on the minicloud's MySQL. What the cascade needs of
Aodh is its alarm API and its database: which alarms an admin's list with a
project filter returns, and the delete. No evaluator, listener or notifier
runs (an alarm is never evaluated, no action is ever called), and no
Gnocchi or Prometheus: the tests make event alarms, whose rule names no
metric store (a threshold alarm's create asks Gnocchi for its metric).

Aodh's WSGI module parses no command line (``argv=[]``), and its paste
pipeline's authtoken and CORS filters read the config of project ``aodh``
from oslo.config's default places: ``SNAP_COMMON`` is the last of those
(``$SNAP_COMMON/etc/aodh/aodh.conf``), and points at the minicloud's home.
"""

from ..configs import write_config
from ..paths import ETC, HOME, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'aodh'
# one process, about 0.1 GiB: only when asked for (up --with aodh)
OPTIONAL = True
DEPENDS = ['keystone']
DATABASES = ['aodh']
DATA_DIRS = []
RPC_QUEUES = []
CONF = ETC + '/aodh/aodh.conf'
# from PyPI (tools/minicloud-constraints.txt), installed when chosen
PIP_PACKAGES = ['aodh']
#: oslo.config finds $SNAP_COMMON/etc/aodh/aodh.conf (see above)
ENV = {'SNAP_COMMON': HOME}


def units():
    return [
        gunicorn(
            'aodh-api',
            NAME,
            PORTS['aodh'],
            'aodh.wsgi.api:application',
            threads=2,
            argv=['aodh-api'],
            env=ENV,
        )
    ]


def write_configs():
    write_config(
        'aodh/aodh.conf',
        database=db_url('aodh'),
        password=service_password('aodh'),
    )


def add_steps(plan):
    plan.add(
        'aodh-db',
        once(
            'aodh-db',
            manage(
                'aodh-dbsync.log',
                [VBIN + '/aodh-dbsync', '--config-file', CONF],
            ),
        ),
        ['mariadb'],
    )
    plan.start(['aodh-api'], ['aodh-db'])
