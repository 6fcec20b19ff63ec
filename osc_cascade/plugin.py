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

"""OpenStackClient plugin module of osc-cascade.

The cascade talks to every service through the SDK connection that OSC
already holds, so the client this plugin contributes is that connection.
"""

from osc_lib import utils

API_NAME = 'cascade'
API_VERSION_OPTION = 'os_cascade_api_version'
DEFAULT_API_VERSION = '1'
API_VERSIONS = {'1': 'openstack.connection.Connection'}


def make_client(instance):
    """The SDK connection of the OSC client manager."""
    return instance.sdk_connection


def build_option_parser(parser):
    parser.add_argument(
        '--os-cascade-api-version',
        metavar='<cascade-api-version>',
        default=utils.env(
            'OS_CASCADE_API_VERSION', default=DEFAULT_API_VERSION
        ),
        help='osc-cascade command set version, default='
        + DEFAULT_API_VERSION
        + ' (Env: OS_CASCADE_API_VERSION)',
    )
    return parser


def check_api_version(check_version):
    return True
