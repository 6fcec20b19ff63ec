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

"""What an older release does differently, where the newest's way does not
work on it: its WSGI applications, gunicorn options and Debian packages
here, its configs that differ in templates-<release>/.

The WSGI applications: the ``<project>.wsgi.*`` modules came with 2025.1;
before, each project's ``*-wsgi`` script called a factory (``name()``:
minicloud_extras.wsgi calls it).
"""

from .paths import RELEASE

#: release -> project -> its application (the newest's is
#: ``<project>.wsgi.*:application``)
WSGI_APPS = {
    '2024.1': {
        'keystone': 'keystone.server.wsgi:initialize_public_application()',
        'placement': 'placement.wsgi:init_application()',
        'nova': 'nova.api.openstack.compute.wsgi:init_application()',
        'glance': 'glance.common.wsgi_app:init_app()',
        'neutron': 'neutron.cmd.eventlet.server:main_api_eventlet()',
        'cinder': 'cinder.wsgi.wsgi:initialize_application()',
        'heat': 'heat.httpd.heat_api:init_application()',
        'octavia': 'octavia.api.app:setup_app()',
        'designate': 'designate.api.wsgi:init_application()',
    },
}


#: release -> the Debian packages that its pins need besides the newest's:
#: 2024.1's pyeclib 1.6.1 (Swift's) has no wheel and builds against
#: liberasurecode (1.7 ships it in its wheels)
APT_PACKAGES = {
    '2024.1': ['liberasurecode-dev'],
}


#: release -> the gunicorn options of the newest that its gunicorn lacks:
#: 2024.1's 21.2.0 has no control socket (it came with 24.0) to turn off
GUNICORN_LACKS = {
    '2024.1': ['--no-control-socket'],
}


#: release -> the server packages of the newest it goes without:
#: 2024.1's networking-bgpvpn (20.0.0) requires horizon and
#: networking-bagpipe, whose XStatic packages no longer build (setuptools
#: has no pkg_resources any more); its Neutron runs without BGP VPN
PACKAGES_LACKING = {
    '2024.1': ['networking-bgpvpn'],
}


#: the releases whose Swift reads /etc/swift/swift.conf whatever its
#: config's swift_dir (2.33): their servers start through
#: minicloud_extras.swift_server
SWIFT_DIR_FIRST = {'2024.1'}


def swift_command(cmd, swift_dir, python):
    """A Swift server's command line ``cmd`` at this release."""
    if RELEASE in SWIFT_DIR_FIRST:
        return [python, '-m', 'minicloud_extras.swift_server', swift_dir, *cmd]
    return cmd


def gunicorn_options(options):
    """The newest's gunicorn ``options`` that this release's understands."""
    lacks = GUNICORN_LACKS.get(RELEASE, [])
    return [o for o in options if o not in lacks]


def wsgi_app(app):
    """The newest's application ``app`` at this release."""
    project = app.split('.', 1)[0]
    return WSGI_APPS.get(RELEASE, {}).get(project, app)
