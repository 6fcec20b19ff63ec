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

"""The services (in start order), their units and configs, and the files
the clients of the cloud read: clouds.yaml and etc/minicloud.json."""

import json
import os

from .configs import render
from .install import SERVER_PACKAGES
from .paths import (
    CLOUDS_YAML,
    COMPUTE_HOSTS,
    DATA,
    DB_USER,
    ETC,
    HOME,
    KS_URL,
    LOGS,
    PASSWORDS,
    PORTS,
    REGION,
    REGION_TWO,
    RELEASE,
    RUN,
)
from .releases import PACKAGES_LACKING
from .services import (
    aodh,
    barbican,
    cinder,
    designate,
    glance,
    heat,
    infra,
    ironic,
    keystone,
    magnum,
    manila,
    mistral,
    neutron,
    nova,
    octavia,
    placement,
    region_two,
    swift,
)
from .util import Failure, mkdirs, write

# start order (and the order of `status`)
MODULES = [
    keystone,
    placement,
    glance,
    neutron,
    nova,
    cinder,
    heat,
    octavia,
    swift,
    barbican,
    designate,
    magnum,
    manila,
    ironic,
    aodh,
    mistral,
    region_two,
]
SERVICES = [m.NAME for m in MODULES]
# brought up only when asked for (up --with, MINICLOUD_WITH, or --services
# naming them): a module says OPTIONAL = True
OPTIONAL = [m.NAME for m in MODULES if getattr(m, 'OPTIONAL', False)]
DEFAULT_SERVICES = [s for s in SERVICES if s not in OPTIONAL]
DEPENDS = {m.NAME: m.DEPENDS for m in MODULES}
DATABASES = [db for m in MODULES for db in m.DATABASES]
# every service before region-two: a state.json that remembers this list
# (written before the all_services flag) chose no subset
_ALL_BEFORE_REGION_TWO = [
    'keystone',
    'placement',
    'glance',
    'neutron',
    'nova',
    'cinder',
    'heat',
    'octavia',
    'swift',
]


def optional_services(spec):
    """The optional services a --with (or MINICLOUD_WITH) names: a
    comma-separated list of them, or 'all'."""
    names = [x.strip() for x in (spec or '').split(',') if x.strip()]
    if names == ['all']:
        return list(OPTIONAL)
    unknown = [n for n in names if n not in OPTIONAL]
    if unknown:
        raise Failure(
            f'not an optional service: {", ".join(unknown)} (optional: '
            f'{", ".join(OPTIONAL)}, or all)'
        )
    return names


def remembered_services(state, also=()):
    """The services of the last up: every default one and the optional
    ones asked for once (``also``, and state.json's ``with``), unless it
    chose a subset with --services (a cloud of the default services gets
    those added since)."""
    services = state.get('services')
    if (
        not services
        or state.get('all_services')
        or ('all_services' not in state and services == _ALL_BEFORE_REGION_TWO)
    ):
        wanted = set(DEFAULT_SERVICES) | set(state.get('with', [])) | set(also)
        return resolve_services(sorted(wanted))
    return resolve_services([*services, *also])


def modules_for(services):
    """Keystone, which everything needs, and the chosen services."""
    return [m for m in MODULES if m is keystone or m.NAME in services]


def server_packages(services):
    """What the service venv installs: every default service's package
    (install.SERVER_PACKAGES, less what the release goes without) and
    those of the chosen optional ones."""
    lacking = PACKAGES_LACKING.get(RELEASE, [])
    return [p for p in SERVER_PACKAGES if p not in lacking] + [
        p
        for m in modules_for(services)
        for p in getattr(m, 'PIP_PACKAGES', [])
    ]


def all_units():
    """Every unit, in start order."""
    return infra.units() + [u for m in MODULES for u in m.units()]


def units_for(services):
    wanted = set(services) | {'infra'}
    return [u for u in all_units() if u.service in wanted]


def resolve_services(names):
    """The named services and what they depend on, in start order."""
    out = set()

    def add(name):
        if name not in DEPENDS:
            raise Failure(
                f'unknown service {name!r} (known: {", ".join(SERVICES)})'
            )
        if name not in out:
            out.add(name)
            for dep in DEPENDS[name]:
                add(dep)

    for n in names:
        add(n)
    return [s for s in SERVICES if s in out]


def find_units(name):
    """A unit name (nova-compute-a), or a service name (nova) for all its
    units, or 'all'."""
    units = all_units()
    if name == 'all':
        return units
    match = [u for u in units if u.name == name]
    if not match:
        match = [u for u in units if u.service == name]
    if not match:
        raise Failure(
            f'no unit or service {name!r}; units: '
            f'{", ".join(u.name for u in units)}'
        )
    return match


def write_configs(services):
    mkdirs(ETC, DATA, LOGS, RUN)
    for m in [infra, *MODULES]:
        mkdirs(*(os.path.join(DATA, sub) for sub in m.DATA_DIRS))
    infra.write_configs()
    for m in modules_for(services):
        m.write_configs()
    # what minicloud_extras.setup_cloud reads, in the service venv
    write(
        ETC + '/minicloud.json',
        json.dumps(
            {
                'home': HOME,
                'groups': list(services),
                'ports': PORTS,
                'auth_url': KS_URL,
                'region': REGION,
                'region_two': REGION_TWO,
                'passwords': PASSWORDS,
                'compute_hosts': list(COMPUTE_HOSTS),
                'image_file': os.path.join(DATA, 'cirros.img'),
                'db': {
                    'port': PORTS['mariadb'],
                    'user': DB_USER,
                    'password': PASSWORDS['db'],
                },
            },
            indent=1,
        )
        + '\n',
    )


def write_clouds_yaml(services):
    # region_name: RegionOne, what a client without --os-region-name gets;
    # regions: every region, or openstacksdk refuses --os-region-name
    # RegionTwo ("not a valid region name for cloud")
    regions = [REGION]
    if region_two.NAME in services:
        regions.append(REGION_TWO)
    text = render(
        'clouds.yaml',
        path=CLOUDS_YAML,
        region=REGION,
        regions=', '.join(regions),
        admin_password=PASSWORDS['admin'],
        demo_password=PASSWORDS['demo'],
        alt_password=PASSWORDS['alt'],
        manager_password=PASSWORDS['manager'],
    )
    write(CLOUDS_YAML, text, mode=0o600)
