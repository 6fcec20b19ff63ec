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

"""Where everything lives, which ports it listens on, and the credentials.

``MINICLOUD_HOME`` and ``MINICLOUD_PORT_BASE`` move a whole cloud, so that
two can run side by side.  The release is fixed for the life of a process:
``MINICLOUD_RELEASE`` (what ``up --release`` sets, re-running itself), else
the one that state.json remembers, else the newest.
"""

import json
import os

LIB = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
TOOLS = os.path.dirname(LIB)
REPO = os.path.dirname(TOOLS)
PYLIB = os.path.join(LIB, 'pylib')
TEMPLATES = os.path.join(LIB, 'templates')
CONSTRAINTS = os.path.join(TOOLS, 'minicloud-constraints.txt')

HOME = os.path.abspath(
    os.environ.get('MINICLOUD_HOME') or os.path.join(REPO, '.minicloud')
)
STATE_FILE = os.path.join(HOME, 'state.json')

#: the newest release, the default: the servers pinned by a freeze of what
#: was proven to work (tools/minicloud-constraints.txt)
NEWEST = 'newest'
#: the older releases that ``up --release`` brings up: their servers and
#: libraries pinned by tools/minicloud-constraints-<release>.txt (that
#: release's upper-constraints.txt); the oldest that installs and runs on
#: Python 3.11 (tools/README.rst, "Older releases")
RELEASES = ('2024.1',)


def remembered_release():
    try:
        with open(STATE_FILE) as f:
            return json.load(f).get('release') or NEWEST
    except (OSError, ValueError):
        return NEWEST


RELEASE = os.environ.get('MINICLOUD_RELEASE') or remembered_release()
if RELEASE != NEWEST:
    CONSTRAINTS = os.path.join(TOOLS, f'minicloud-constraints-{RELEASE}.txt')
# each release keeps its own venvs: both can exist side by side
SUFFIX = '' if RELEASE == NEWEST else '-' + RELEASE
VENV = os.path.join(HOME, 'venv' + SUFFIX)
# a release's configs: templates-<release>/<service>/<file> where it has its
# own, else the newest's templates/<service>/<file>
TEMPLATE_DIRS = [
    *([os.path.join(LIB, 'templates' + SUFFIX)] if SUFFIX else []),
    TEMPLATES,
]
VBIN = os.path.join(VENV, 'bin')
VPYTHON = os.path.join(VBIN, 'python')
CLIENT_VENV = os.path.join(HOME, 'client-venv' + SUFFIX)
ETC = os.path.join(HOME, 'etc')
DATA = os.path.join(HOME, 'data')
LOGS = os.path.join(HOME, 'logs')
RUN = os.path.join(HOME, 'run')
CLOUDS_YAML = os.path.join(HOME, 'clouds.yaml')

PORT_BASE = int(os.environ.get('MINICLOUD_PORT_BASE', '28000'))
PORTS = {
    name: PORT_BASE + off
    for name, off in {
        'mariadb': 306,
        'rabbitmq': 672,
        'rabbitmq_dist': 673,
        'epmd': 369,
        'rabbitmq_ctl_min': 680,
        'rabbitmq_ctl_max': 690,
        'keystone': 500,
        'placement': 778,
        'nova': 774,
        'glance': 292,
        'neutron': 696,
        # RegionTwo's own Glance and Neutron (services/region_two.py)
        'glance_r2': 293,
        'neutron_r2': 697,
        'cinder': 776,
        'heat': 4,
        'octavia': 876,
        'swift': 808,
        'swift_object': 200,
        'swift_container': 201,
        'swift_account': 202,
        'barbican': 311,
        # Designate: its API, mdns, and the named it drives over rndc
        'designate': 1,
        'designate_mdns': 354,
        'dns': 53,
        'rndc': 953,
        'magnum': 511,
        'manila': 786,
        'ironic': 385,
        'aodh': 42,
        'mistral': 989,
    }.items()
}

# also read by minicloud_extras.setup_cloud, through etc/minicloud.json
PASSWORDS = {
    'admin': 'secretadmin',
    'demo': 'secretdemo',
    'alt': 'secretalt',
    # the domain managers of domains managed and other (setup_cloud)
    'manager': 'secretmanager',
    'service': 'secret-%s',  # service users: secret-nova, ...
    'heat_domain_admin': 'secret-heat-domain',
    'db': 'secret-db',
    'rabbit': 'guest',
}
DB_USER = 'minicloud'
KS_URL = f'http://127.0.0.1:{PORTS["keystone"]}/v3'
TRANSPORT_URL = f'rabbit://guest:guest@127.0.0.1:{PORTS["rabbitmq"]}/'
# osc-cascade's per-project locks (tooz) on the cloud's own MariaDB, as an
# operator would run them: a database of their own, MySQL's GET_LOCK
COORDINATION_DB = 'tooz'
COORDINATION_URL = (
    f'mysql://{DB_USER}:{PASSWORDS["db"]}@127.0.0.1:{PORTS["mariadb"]}/'
    f'{COORDINATION_DB}'
)
COMPUTE_HOSTS = ('compute-a', 'compute-b')
# every service is in REGION, but RegionTwo's Neutron and Glance; Keystone
# is global (its endpoint is registered in both)
REGION = 'RegionOne'
REGION_TWO = 'RegionTwo'


def service_password(user):
    return PASSWORDS['service'] % user


def db_url(name):
    return (
        f'mysql+pymysql://{DB_USER}:{PASSWORDS["db"]}@127.0.0.1:'
        f'{PORTS["mariadb"]}/{name}?charset=utf8'
    )
