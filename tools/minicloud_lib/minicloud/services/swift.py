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

"""Swift: account, container and object servers on one device under
data/swift/srv, and a proxy with Keystone auth."""

import os

from ..configs import write_config
from ..paths import DATA, ETC, PORTS, VBIN, VPYTHON, service_password
from ..releases import swift_command
from ..tasks import once
from ..units import Unit
from ..util import mkdirs, run

NAME = 'swift'
DEPENDS = ['keystone']
DATABASES = []
DATA_DIRS = ['swift/srv/d1']
RPC_QUEUES = []
KINDS = ('account', 'container', 'object')


def server(cmd):
    return swift_command(cmd, ETC + '/swift', VPYTHON)


def units():
    servers = [
        Unit(
            'swift-' + kind,
            'swift',
            server(
                [
                    os.path.join(VBIN, f'swift-{kind}-server'),
                    f'{ETC}/swift/{kind}-server.conf',
                    '-v',
                ]
            ),
            port=PORTS['swift_' + kind],
        )
        for kind in KINDS
    ]
    proxy = Unit(
        'swift-proxy',
        'swift',
        server(
            [
                os.path.join(VBIN, 'swift-proxy-server'),
                ETC + '/swift/proxy-server.conf',
                '-v',
            ]
        ),
        port=PORTS['swift'],
        http=f'http://127.0.0.1:{PORTS["swift"]}/healthcheck',
    )
    return [*servers, proxy]


def write_configs():
    write_config('swift/swift.conf')
    for kind in KINDS:
        write_config(
            'swift/server.conf',
            f'swift/{kind}-server.conf',
            kind=kind,
            port=PORTS['swift_' + kind],
        )
    write_config(
        'swift/proxy-server.conf',
        port=PORTS['swift'],
        password=service_password('swift'),
    )


def step_rings():
    mkdirs(DATA + '/swift/srv/d1')
    run(
        [
            VPYTHON,
            '-m',
            'minicloud_extras.helper',
            'rings',
            ETC + '/swift',
            str(PORTS['swift_account']),
            str(PORTS['swift_container']),
            str(PORTS['swift_object']),
        ],
        'swift-rings.log',
    )


def add_steps(plan):
    plan.add('swift-rings', once('swift-rings', step_rings))
    plan.start(
        ['swift-account', 'swift-container', 'swift-object'], ['swift-rings']
    )
    plan.start(['swift-proxy'], ['swift-rings'])
