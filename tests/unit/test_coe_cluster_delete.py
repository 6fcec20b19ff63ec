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

"""`openstack coe cluster delete --force-delete`, the hook that leads a
Magnum user to the force path, through the real OSC shell.

python-magnumclient is no dependency of the plugin: its ``coe cluster
delete`` is stood in by a command with the same parser (magnumclient 5.0.0,
``magnumclient/osc/v1/clusters.py``: ``DeleteCluster``), and the hook is
loaded as cliff loads it from the entry point group
``openstack.cli.coe_cluster_delete`` (setup.cfg)."""

from cliff import command as cliff_command
from osc_lib.command import command
import pytest
from stevedore import extension

from osc_cascade.v1 import coe_cluster
from tests.unit import scenarios
from tests.unit.conftest import shell_runner
from tests.unit.fakes.clock import patch_wall_clock
from tests.unit.fakes.clouds import FakeHeatCloud
from tests.unit.test_cluster_cli import magnum

GROUP = 'openstack.cli.coe_cluster_delete'


class DeleteCluster(command.Command):
    """Stands in for magnumclient 5.0.0's: each cluster named is handed to
    Magnum's delete (here: written down)."""

    deleted: list = []

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cluster', nargs='+', metavar='<cluster>')
        return parser

    def take_action(self, parsed_args):
        for cluster in parsed_args.cluster:
            type(self).deleted.append(cluster)


@pytest.fixture
def virtual_time(monkeypatch):
    # as test_cluster_cli's: the other threads run at each fake sleep
    return patch_wall_clock(monkeypatch, yields=True)


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the manifests
    with FakeHeatCloud() as c:
        yield c


@pytest.fixture
def coe(monkeypatch, virtual_time):
    """The shell with magnumclient's command and the plugin's hook on it."""

    real = extension.ExtensionManager
    DeleteCluster.deleted = []

    def manager(namespace, invoke_on_load, invoke_kwds):
        if namespace != GROUP:
            return real(
                namespace=namespace,
                invoke_on_load=invoke_on_load,
                invoke_kwds=invoke_kwds,
            )
        hook = coe_cluster.CoeClusterDeleteForce(**invoke_kwds)
        return real.make_test_instance(
            [extension.Extension('osc_cascade', None, type(hook), hook)],
            namespace=namespace,
        )

    monkeypatch.setattr(cliff_command.extension, 'ExtensionManager', manager)
    return shell_runner(
        monkeypatch,
        lambda app: app.command_manager.add_command(
            'coe cluster delete', DeleteCluster
        ),
    )


def test_the_help_shows_the_hooks_option(coe):
    result = coe('help', 'coe', 'cluster', 'delete')
    assert result.code == 0, result.stderr
    assert '--force-delete' in result.stdout
    assert "'openstack cluster force-delete'" in result.stdout


def test_without_it_magnums_own_delete_runs(cloud, coe):
    magnum(cloud)
    result = coe('coe', 'cluster', 'delete', 'k8s')
    assert result.code == 0, result.stderr
    assert DeleteCluster.deleted == ['k8s']
    assert cloud.changes == []


def test_it_force_deletes_and_magnums_delete_gets_nothing(cloud, coe):
    built = magnum(cloud)
    result = coe(
        'coe', 'cluster', 'delete', '--force-delete', 'k8s',
        stdin='y\n', tty=True,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert 'Force-delete 1 cluster(s)?' in result.stderr
    assert 'abandoned' in result.stdout
    assert not cloud.exists('stacks', built['stack']['id'])
    # what the stack made stays: nothing left behind is deleted
    assert cloud.exists('networks', built['network']['id'])
    assert DeleteCluster.deleted == []


def a_magnum_cluster(cloud):
    magnum(cloud)
    return 'k8s'


def only_a_sahara_cluster(cloud):
    cloud.sahara_cluster('hadoop', scenarios.project(cloud, 'data')['id'])
    return 'hadoop'


def no_stack_abandon(cloud):
    magnum(cloud)
    cloud.abandon_enabled = False
    return 'k8s'


NO_TERMINAL = (
    '--force-delete asks first, and standard input is not a terminal: '
    "run 'openstack cluster force-delete --yes k8s' instead"
)


@pytest.mark.parametrize(
    'cluster, answer, says',
    [
        # without a terminal: the command to run instead
        (a_magnum_cluster, None, NO_TERMINAL),
        (a_magnum_cluster, 'n', 'Aborted: nothing was deleted.'),
        # a name only a Sahara cluster has is no coe cluster
        (only_a_sahara_cluster, 'y', 'hadoop'),
        # the force path refuses: the command fails, nothing is deleted
        (no_stack_abandon, 'y', 'enable_stack_abandon'),
    ],
    ids=['no terminal', 'answered no', 'sahara', 'no abandon'],
)
def test_a_refusal_changes_nothing(cloud, coe, cluster, answer, says):
    name = cluster(cloud)
    terminal = {'stdin': answer + '\n', 'tty': True} if answer else {}
    result = coe(
        'coe', 'cluster', 'delete', '--force-delete', name, **terminal
    )
    assert result.code == 1
    assert says in result.stderr
    if answer is None:  # in one line, the last
        assert result.stderr.strip().splitlines()[-1] == says
    assert cloud.changes == []
    assert DeleteCluster.deleted == []


def test_the_package_registers_the_hook():
    import configparser
    import pathlib

    setup = configparser.ConfigParser()
    setup.read(pathlib.Path(__file__).parents[2] / 'setup.cfg')
    group = setup['entry_points'][GROUP]
    assert group.split() == [
        'osc_cascade_coe_cluster_delete',
        '=',
        'osc_cascade.v1.coe_cluster:CoeClusterDeleteForce',
    ]
