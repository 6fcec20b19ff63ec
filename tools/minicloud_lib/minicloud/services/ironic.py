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

"""Ironic: the conductor with the API embedded in it (the single-process
``ironic`` command, no RPC between them), the ``fake-hardware`` hardware
type with fake or no-op interfaces: nodes are enrolled, owned and leased
(Keystone auth, Ironic's project-scoped policies: a node's ``owner`` and
``lessee`` projects see it), and no BMC is ever spoken to.

Ironic's default policies (templates/ironic/policy.yaml is empty): every
project's nodes are a system reader's, so the cascade asks with the
cloud admin's system-scoped token (it has the system role admin), as it
would on any cloud."""

import os

from ..configs import write_config
from ..paths import ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import Unit

NAME = 'ironic'
# one process pair, about 0.2 GiB: only when asked for (up --with ironic)
OPTIONAL = True
DEPENDS = ['keystone']
DATABASES = ['ironic']
DATA_DIRS = ['ironic/lock']
RPC_QUEUES = []
CONF = ETC + '/ironic/ironic.conf'
# from PyPI (tools/minicloud-constraints.txt), installed when chosen
PIP_PACKAGES = ['ironic']


def units():
    return [
        Unit(
            'ironic',
            NAME,
            [os.path.join(VBIN, 'ironic'), '--config-file', CONF],
            port=PORTS['ironic'],
        )
    ]


def write_configs():
    write_config(
        'ironic/ironic.conf',
        port=PORTS['ironic'],
        database=db_url('ironic'),
        password=service_password('ironic'),
    )
    write_config('ironic/policy.yaml')


def add_steps(plan):
    sync = [os.path.join(VBIN, 'ironic-dbsync'), '--config-file', CONF]
    plan.add(
        'ironic-db',
        once(
            'ironic-db', manage('ironic-dbsync.log', [*sync, 'create_schema'])
        ),
        ['mariadb'],
    )
    plan.start(['ironic'], ['ironic-db'])
