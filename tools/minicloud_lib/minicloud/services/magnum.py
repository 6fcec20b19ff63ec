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

"""Magnum: api and conductor, with the Cluster API drivers of PyPI
(magnum-capi-helm, magnum-cluster-api) and no management cluster: a
cluster's create fails at the driver's first call to one, and the record
stays, CREATE_FAILED, as a stuck cluster does."""

import os

from ..configs import copy_from_venv, write_config
from ..paths import DATA, ETC, PORTS, VBIN, db_url, service_password
from ..tasks import manage, once
from ..units import gunicorn, oslo
from ..util import write

NAME = 'magnum'
# two processes, about 0.3 GiB: only when asked for (up --with magnum)
OPTIONAL = True
DEPENDS = ['keystone', 'glance', 'nova', 'neutron']
DATABASES = ['magnum']
DATA_DIRS = ['magnum/lock']
RPC_QUEUES = ['magnum-conductor']
# the venv gets these only when magnum is chosen
PIP_PACKAGES = ['magnum', 'magnum-capi-helm', 'magnum-cluster-api']
CONF_DIR = ETC + '/magnum'
CONF = CONF_DIR + '/magnum.conf'
# magnum-capi-helm's [capi_helm] namespace_prefix; not its default
# ("magnum"), so the cascade's operator option is what finds the footprint
NAMESPACE_PREFIX = 'mc-magnum'
# the management cluster's kubeconfig, for both drivers: magnum-capi-helm
# reads [capi_helm] kubeconfig_file, magnum-cluster-api $KUBECONFIG (its
# driver loads it when Magnum lists the drivers: without one, every
# cluster template's create answers 500)
KUBECONFIG_FILE = os.path.join(DATA, 'magnum', 'no-management-cluster.yaml')


def units():
    conductor = oslo('magnum-conductor', NAME, 'magnum-conductor', CONF)
    conductor.env = {'KUBECONFIG': KUBECONFIG_FILE}
    return [
        gunicorn(
            'magnum-api',
            NAME,
            PORTS['magnum'],
            'magnum.wsgi.api:application',
            threads=2,
            argv=['magnum-api', '--config-file', CONF],
            env={'KUBECONFIG': KUBECONFIG_FILE},
        ),
        conductor,
    ]


def write_configs():
    copy_from_venv('magnum/api-paste.ini', CONF_DIR + '/api-paste.ini')
    write_config(
        'magnum/magnum.conf',
        port=PORTS['magnum'],
        database=db_url('magnum'),
        password=service_password('magnum'),
        namespace_prefix=NAMESPACE_PREFIX,
    )
    # a kubeconfig whose one server does not listen: magnum-cluster-api and
    # magnum-capi-helm fail to reach it, and never reach a real one
    write(KUBECONFIG_FILE, KUBECONFIG)


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: none
  cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}
contexts:
- name: none
  context: {cluster: none, user: none}
current-context: none
users:
- name: none
  user: {token: none}
"""


def add_steps(plan):
    sync = [os.path.join(VBIN, 'magnum-db-manage'), '--config-file', CONF]
    plan.add(
        'magnum-db',
        once('magnum-db', manage('magnum-manage.log', [*sync, 'upgrade'])),
        ['mariadb'],
    )
    plan.start(['magnum-api', 'magnum-conductor'], ['magnum-db', 'rabbitmq'])
