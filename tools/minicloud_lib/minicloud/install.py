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

"""Installs what is missing: the Debian packages and the venvs."""

import glob
import hashlib
import os
import subprocess
import sys

from .paths import CONSTRAINTS, PYLIB, RELEASE, VENV
from .releases import APT_PACKAGES as RELEASE_APT_PACKAGES
from .util import Failure, child_env, run, write

SERVER_PACKAGES = [
    'keystone',
    'openstack-placement',
    'nova',
    'glance',
    'neutron',
    # Neutron's service plugins that run without agents (services/neutron)
    'neutron-fwaas',
    'neutron-vpnaas',
    'networking-bgpvpn',
    'cinder',
    'openstack-heat',
    'octavia',
    'swift',
    'barbican',
    'designate',
    'keystonemiddleware',
    'gunicorn',
    'PyMySQL',
]
CLIENT_PACKAGES = [
    'python-openstackclient',
    'osc-placement',
    'python-heatclient',
    'python-octaviaclient',
    'python-swiftclient',
    'python-cinderclient',
    'python-barbicanclient',
    'python-designateclient',
    'python-magnumclient',
    'python-manilaclient',
    'python-ironicclient',
    'aodhclient',
    'python-mistralclient',
]
APT_PACKAGES = [
    'mariadb-server',
    'rabbitmq-server',
    # qemu-img: cinder-volume converts an image to a volume with it (a
    # non-raw image without it ends in error); no service of its own
    'qemu-utils',
]
# installed only where the service is chosen
SERVICE_APT_PACKAGES = {
    # named: the DNS server of Designate's pool (its bind9 backend)
    'designate': ['bind9'],
}


def dpkg_installed(pkg):
    try:
        out = subprocess.run(
            ['dpkg-query', '-W', '-f=${Status}', pkg],
            capture_output=True,
            text=True,
        ).stdout
    except FileNotFoundError:
        return False
    return out.strip().endswith('install ok installed')


def install_apt(services=()):
    wanted = (
        APT_PACKAGES
        + RELEASE_APT_PACKAGES.get(RELEASE, [])
        + [p for s in services for p in SERVICE_APT_PACKAGES.get(s, [])]
    )
    missing = [p for p in wanted if not dpkg_installed(p)]
    if not missing:
        return 'present'
    env = child_env({'DEBIAN_FRONTEND': 'noninteractive'})
    # Never let the package start the system instances: minicloud runs its
    # own.  Debian's policy-rc.d protocol: exit 101 = action forbidden.
    policy = '/usr/sbin/policy-rc.d'
    added = not os.path.exists(policy)
    if added:
        write(policy, '#!/bin/sh\nexit 101\n', mode=0o755)
    try:
        run(['apt-get', 'update', '-q'], 'install-apt.log', env=env)
        run(
            [
                'apt-get',
                'install',
                '-y',
                '-q',
                '--no-install-recommends',
                *missing,
            ],
            'install-apt.log',
            env=env,
        )
    finally:
        if added:
            os.unlink(policy)
    return 'installed ' + ' '.join(missing)


def pip_install(venv, packages, log):
    """Skipped while the constraints are those of the last install (a hash
    in the venv) and it installed every package asked for (a cloud with
    optional services has a venv that serves one without them too)."""
    want = hashlib.sha256(open(CONSTRAINTS).read().encode()).hexdigest()
    marker = os.path.join(venv, '.minicloud-installed')
    try:
        done, *installed = open(marker).read().split()
        if done == want and set(packages) <= set(installed):
            return 'present'
    except (OSError, ValueError):
        pass
    python = os.environ.get('MINICLOUD_PYTHON') or sys.executable
    if not os.path.exists(os.path.join(venv, 'bin', 'python')):
        run([python, '-m', 'venv', venv], log)
    # --no-compile: byte-compiling every installed module (tests included)
    # costs more than compiling, at first import, the few that are used
    run(
        [
            os.path.join(venv, 'bin', 'pip'),
            'install',
            '--no-input',
            '--no-compile',
            '-c',
            CONSTRAINTS,
            *packages,
        ],
        log,
        timeout=1800,
    )
    write(marker, '\n'.join([want, *sorted(packages)]) + '\n')
    return 'installed'


def site_packages(venv):
    found = glob.glob(os.path.join(venv, 'lib', 'python3*', 'site-packages'))
    if not found:
        raise Failure(f'no site-packages in {venv}')
    return found[0]


def install_extras():
    """Make minicloud_extras importable in the service venv and register
    its ML2 mechanism driver entry point (a hand-made dist-info)."""
    sp = site_packages(VENV)
    write(os.path.join(sp, 'minicloud_extras.pth'), PYLIB + '\n')
    info = os.path.join(sp, 'minicloud_extras-1.0.dist-info')
    entry_points = (
        '[neutron.ml2.mechanism_drivers]\n'
        'minicloud = minicloud_extras.ml2_mech:'
        'MinicloudMechanismDriver\n'
    )
    ep_path = os.path.join(info, 'entry_points.txt')
    try:
        if open(ep_path).read() == entry_points:
            return
    except OSError:
        pass
    write(
        os.path.join(info, 'METADATA'),
        'Metadata-Version: 2.1\nName: minicloud-extras\nVersion: 1.0\n',
    )
    write(ep_path, entry_points)
    write(os.path.join(info, 'RECORD'), '')
    write(os.path.join(info, 'INSTALLER'), 'minicloud\n')
