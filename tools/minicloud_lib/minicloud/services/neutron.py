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

"""Neutron: ML2 with the router and trunk plugins and every service plugin
that runs without agents (QoS, port forwarding, segment ranges, local IPs,
metering, logging, VPNaaS, BGP VPN and FWaaS v2: templates/neutron), and no
agents (the minicloud mechanism driver of minicloud_extras binds every
port)."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import ETC, PORTS, RELEASE, VBIN, db_url, service_password
from ..releases import PACKAGES_LACKING
from ..tasks import manage, once
from ..units import gunicorn

NAME = 'neutron'
DEPENDS = ['keystone']
DATABASES = ['neutron']
DATA_DIRS = ['neutron/lock']
RPC_QUEUES = []


# FWaaS v2 makes a project's default firewall group (with two policies and
# four rules) whenever a list of its firewall objects, or its quota
# details, name the project: the kinds list every project's
# (osc_cascade/kinds/network/fwaas.py). On unless
# MINICLOUD_NEUTRON_FWAAS=0
FWAAS_SWITCH = 'MINICLOUD_NEUTRON_FWAAS'

# RegionTwo's Neutron (services/region_two.py) is one more of these, with
# its own unit, port, etc/ and data/ directory and database


def api_unit(name, service, port, subdir):
    return gunicorn(
        name,
        service,
        port,
        'neutron.wsgi.api:application',
        threads=1,
        env={
            'OS_NEUTRON_CONFIG_DIR': f'{ETC}/{subdir}',
            'OS_NEUTRON_CONFIG_FILES': 'neutron.conf;ml2_conf.ini',
        },
    )


def units():
    return [api_unit('neutron-api', NAME, PORTS['neutron'], 'neutron')]


def optional_plugins():
    """The service plugins that depend on the release and the switch,
    as the template's ``${bgpvpn}${fwaas}``."""
    return {
        'bgpvpn': ''
        if 'networking-bgpvpn' in PACKAGES_LACKING.get(RELEASE, [])
        else ',bgpvpn',
        'fwaas': '' if os.environ.get(FWAAS_SWITCH) == '0' else ',firewall_v2',
    }


def write_server_configs(unit, subdir, database):
    """etc/<subdir>/: neutron.conf (logs/<unit>.log, data/<subdir>/),
    ml2_conf.ini, api-paste.ini."""
    copy_from_venv('neutron/api-paste.ini', f'{ETC}/{subdir}/api-paste.ini')
    write_config(
        'neutron/neutron.conf',
        f'{subdir}/neutron.conf',
        unit=unit,
        subdir=subdir,
        database=db_url(database),
        password=service_password('neutron'),
        **optional_plugins(),
    )
    write_config('neutron/ml2_conf.ini', f'{subdir}/ml2_conf.ini')


def write_configs():
    write_server_configs('neutron-api', 'neutron', 'neutron')


def add_server_steps(plan, unit, subdir, after=(), readiness=None):
    """<subdir>-db (the migrations, once MariaDB and the steps after are
    done), then the unit's start (checked by the readiness phase)."""
    step = f'{subdir}-db'
    upgrade = [
        os.path.join(VBIN, 'neutron-db-manage'),
        '--config-file',
        f'{ETC}/{subdir}/neutron.conf',
        '--config-file',
        f'{ETC}/{subdir}/ml2_conf.ini',
        'upgrade',
        'heads',
    ]
    # a plugin turned on in a home made before it has no tables yet: the
    # migrations run again (they are idempotent) when the set changes
    done_as = step + ''.join(optional_plugins().values())
    plan.add(
        step,
        once(step, manage(f'{subdir}-db-manage.log', upgrade), done_as),
        ['mariadb', *after],
    )
    plan.start([unit], [step, 'rabbitmq'], readiness)


def add_steps(plan):
    add_server_steps(plan, 'neutron-api', 'neutron')
