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

"""RegionTwo: a Neutron and a Glance of its own (own units, ports,
databases, etc/ and data/ directories), registered in Keystone as region
RegionTwo's network and image endpoints.  Keystone, MariaDB and RabbitMQ
are RegionOne's: one Keystone for both regions, as in most clouds with
several regions.

Its Neutron is RegionOne's set-up (ML2 without agents, no Nova
notifications); its Glance has only its file store."""

from ..paths import PORTS
from . import glance, neutron

NAME = 'region-two'
DEPENDS = ['keystone']
DATABASES = ['neutron_r2', 'glance_r2']
DATA_DIRS = ['neutron-r2/lock', 'glance-r2/lock']
RPC_QUEUES = []

# unit, and its etc/, data/ and logs/ name
NEUTRON = 'neutron-r2'
GLANCE = 'glance-r2'


def units():
    return [
        neutron.api_unit(NEUTRON, NAME, PORTS['neutron_r2'], NEUTRON),
        glance.api_unit(GLANCE, NAME, PORTS['glance_r2'], GLANCE),
    ]


def write_configs():
    neutron.write_server_configs(NEUTRON, NEUTRON, 'neutron_r2')
    glance.write_server_configs(
        GLANCE, GLANCE, PORTS['glance_r2'], 'glance_r2'
    )


def add_steps(plan):
    # off RegionOne's critical path: the migrations wait until identity
    # is done (else they may take a heavy slot before keystone's), and
    # setup_cloud's region-two phase checks the units in parallel with
    # RegionOne's resources+readiness
    for module, unit in ((neutron, NEUTRON), (glance, GLANCE)):
        module.add_server_steps(
            plan, unit, unit, after=['identity'], readiness=NAME
        )
