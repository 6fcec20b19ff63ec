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
        default=utils.env('OS_CASCADE_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='osc-cascade command set version, default='
             + DEFAULT_API_VERSION + ' (Env: OS_CASCADE_API_VERSION)')
    return parser


def check_api_version(check_version):
    return True
