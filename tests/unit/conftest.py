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

import io
import os
import signal
import sys

import pytest

from tests.unit import scenarios
from tests.unit.fakes.clouds import FakeCloud


@pytest.fixture(autouse=True)
def _no_os_environment(monkeypatch, tmp_path):
    """No OS_* variable or clouds.yaml of the developer leaks in, and the
    cascade's per-project locks (``workflows.actor``) and the records of
    the runs (``engine.report``) land in the test's own directory, not
    in the developer's ~/.cache and ~/.local/state."""
    for key in list(os.environ):
        if key.startswith('OS_'):
            monkeypatch.delenv(key)
    monkeypatch.delenv('OSC_CASCADE_COORDINATION_URL', raising=False)
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(tmp_path / 'none.yaml'))
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
    monkeypatch.setenv('XDG_STATE_HOME', str(tmp_path / 'state'))


@pytest.fixture
def shell_signal_handlers():
    """SIGINT's and SIGTERM's handlers as the test began: a command that
    stops on a signal puts these back. They are Python's own unless the
    tests were started in the background, where SIGINT is ignored."""
    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


@pytest.fixture
def virtual_time(monkeypatch):
    """The wall clock that a command builds for its workflow, made a fake
    one: the shell's retries and polls never really sleep. Workflows
    tested directly are given a FakeClock instead."""
    from tests.unit.fakes.clock import patch_wall_clock

    return patch_wall_clock(monkeypatch)


@pytest.fixture
def cloud():
    with FakeCloud() as c:
        yield c


@pytest.fixture
def conn(cloud):
    """An SDK connection to the fake cloud."""
    return cloud.connection()


@pytest.fixture
def pid(cloud):
    """A project of the fake cloud, to fill."""
    return scenarios.project(cloud, 'A')['id']


@pytest.fixture
def external(cloud):
    return scenarios.external_network(cloud)[0]


class ShellResult:
    def __init__(self, code, stdout, stderr):
        self.code, self.stdout, self.stderr = code, stdout, stderr


class _TerminalInput(io.StringIO):
    """Standard input that says it is a terminal (for prompts)."""

    def isatty(self):
        return True


def shell_runner(monkeypatch, prepare=None):
    """``run(*argv, stdin='', tty=False)``: the real `openstack` shell
    in-process; ``prepare(app)`` first, if given (another plugin's
    command added, say)."""
    from openstackclient import shell

    def run(*argv, stdin='', tty=False):
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(
            sys, 'stdin', (_TerminalInput if tty else io.StringIO)(stdin)
        )
        monkeypatch.setattr(sys, 'stdout', out)
        monkeypatch.setattr(sys, 'stderr', err)
        app = shell.OpenStackShell()
        if prepare is not None:
            prepare(app)
        app.stdout, app.stderr = out, err
        code = app.run(list(FakeCloud.cli_auth_args()) + list(argv))
        return ShellResult(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def osc(monkeypatch, virtual_time):
    """Run the real `openstack` shell in-process, as a user would."""
    return shell_runner(monkeypatch)
