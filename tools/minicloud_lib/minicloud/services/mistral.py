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

"""Mistral: its API only, on the minicloud's MySQL and RabbitMQ. What the
cascade deletes (workflows, cron triggers, event triggers) the API makes
and deletes itself, in its database: a workflow's definition is parsed and
stored by the API, a trigger's create stores it with a Keystone trust of
its creator. No engine, executor or event engine runs: an event trigger's
create and delete cast a message to the event engine (RabbitMQ keeps it,
nobody reads it), and cron triggers are never fired ([cron_trigger]
enabled = false; a trigger is still made, listed and deleted).

Mistral's WSGI module parses no command line (``args=[]``): oslo.config
finds ``$SNAP_COMMON/etc/mistral/mistral.conf``, the last of its default
places, with ``SNAP_COMMON`` the minicloud's home.
"""

from ..configs import write_config
from ..paths import ETC, HOME, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'mistral'
# one process, about 0.15 GiB: only when asked for (up --with mistral)
OPTIONAL = True
DEPENDS = ['keystone']
DATABASES = ['mistral']
DATA_DIRS = []
RPC_QUEUES = []
CONF = ETC + '/mistral/mistral.conf'
# from PyPI (tools/minicloud-constraints.txt), installed when chosen
PIP_PACKAGES = ['mistral']
#: oslo.config finds $SNAP_COMMON/etc/mistral/mistral.conf (see above)
ENV = {'SNAP_COMMON': HOME}


def units():
    return [
        gunicorn(
            'mistral-api',
            NAME,
            PORTS['mistral'],
            'mistral.wsgi:application',
            threads=2,
            argv=['mistral-api'],
            env=ENV,
        )
    ]


def write_configs():
    write_config(
        'mistral/mistral.conf',
        database=db_url('mistral'),
        password=service_password('mistral'),
    )


def add_steps(plan):
    manage_cmd = [VBIN + '/mistral-db-manage', '--config-file', CONF]
    plan.add(
        'mistral-db',
        once(
            'mistral-db',
            manage(
                'mistral-db-manage.log',
                [*manage_cmd, 'upgrade', 'head'],
                # the standard actions (std.noop, ...) a workflow names
                [*manage_cmd, 'populate'],
            ),
        ),
        ['mariadb'],
    )
    plan.start(['mistral-api'], ['mistral-db', 'rabbitmq'])
