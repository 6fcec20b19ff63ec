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

"""Functional tests run against a real cloud: the minicloud of tools/.

``OS_CLIENT_CONFIG_FILE`` names its clouds.yaml (``tox -e functional`` sets
it and starts the cloud). Without a reachable cloud the tests are skipped
with a loud reason on a developer's machine, and fail in CI, which must
provide the cloud.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import urllib.parse

import openstack
import pymysql
import pytest

ADMIN_CLOUD = 'minicloud-admin'


def _cloud_or_reason() -> str | None:
    path = os.environ.get('OS_CLIENT_CONFIG_FILE')
    if not path or not os.path.exists(path):
        return (
            f'NO CLOUD: OS_CLIENT_CONFIG_FILE={path!r} does not name a '
            f'clouds.yaml; start one with `tools/minicloud up` or run '
            f'`tox -e functional`'
        )
    try:
        openstack.connect(cloud=ADMIN_CLOUD).identity.get_project('admin')
    except openstack.exceptions.NotFoundException:
        pass  # reachable: the admin project is looked up by id
    except Exception as exc:  # reported as the reason
        return f'NO CLOUD: {ADMIN_CLOUD} in {path} does not answer: {exc}'
    return None


def needs(present, reason):
    """Skip the test where the cloud lacks what it needs, loudly; in CI,
    which must provide it, fail."""
    if present:
        return
    if os.environ.get('CI'):
        pytest.fail(f'{reason} (CI must provide it)')
    pytest.skip(f'NOT TESTED: {reason}')


def service_database(conf: str, section: str, purpose: str):
    """A connection to a service's database, as its config in the
    minicloud's ``etc`` (``conf``: ``magnum/magnum.conf``) names it in
    ``section``; ``needs`` the config (a cloud that is not the minicloud
    has none here), saying ``purpose``. The minicloud's home: MINICLOUD_HOME,
    else the directory of its clouds.yaml (tox's OS_CLIENT_CONFIG_FILE)."""
    parser = configparser.ConfigParser(interpolation=None)
    clouds = os.environ.get('OS_CLIENT_CONFIG_FILE', '')
    home = os.environ.get('MINICLOUD_HOME') or (
        os.path.dirname(os.path.abspath(clouds)) if clouds else ''
    )
    path = os.path.join(home, 'etc', conf)
    found = parser.read(path) if home else []
    needs(
        found and parser.has_option(section, 'connection'),
        f'NO DATABASE: no [{section}] connection in {path or conf} (not '
        f'the minicloud?), {purpose}',
    )
    url = urllib.parse.urlparse(parser[section]['connection'])
    return pymysql.connect(
        host=url.hostname,
        port=url.port,
        user=url.username,
        password=url.password,
        database=url.path.lstrip('/'),
    )


def needs_service(admin, service_type: str, name: str) -> None:
    """``needs`` the service in the catalog (an optional one of the
    minicloud: ``tools/minicloud up --with``)."""
    needs(
        any(s.type == service_type for s in admin.identity.services()),
        f'the cloud has no {name} ({service_type})',
    )


def service_proxy(service_type: str, name: str, proxy: str):
    """A module fixture: the admin's SDK proxy of a service it
    ``needs_service``."""

    @pytest.fixture(scope='module')
    def fixture(admin):
        needs_service(admin, service_type, name)
        return getattr(admin, proxy)

    return fixture


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """tox -e functional runs in two phases, the tests that share the
    cloud and then those that disturb it (``disturbs_cloud``); a module
    named on the command line belongs to one, and the other phase then
    selects nothing: that phase passes, saying so, where pytest would exit
    5. A run that selects nothing for another reason still exits 5."""
    phase_split = 'disturbs_cloud' in (session.config.option.markexpr or '')
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and phase_split:
        print(f'\nno test of this phase ({session.config.option.markexpr})')
        session.exitstatus = pytest.ExitCode.OK


@pytest.fixture(scope='session')
def admin():
    reason = _cloud_or_reason()
    needs(not reason, reason)
    # a loaded machine's API workers sometimes drop a connection: the
    # builders of the fixtures retry rather than fail the whole module
    return openstack.connect(cloud=ADMIN_CLOUD, connect_retries=3)


@pytest.fixture(scope='session', autouse=True)
def _records_in_the_tests_directory(tmp_path_factory):
    """The records every real run writes (``engine.report``) go to the
    session's directory, not to the developer's ~/.local/state; the
    commands run as subprocesses, which inherit it."""
    previous = os.environ.get('XDG_STATE_HOME')
    os.environ['XDG_STATE_HOME'] = str(tmp_path_factory.mktemp('state'))
    yield
    if previous is None:
        del os.environ['XDG_STATE_HOME']
    else:
        os.environ['XDG_STATE_HOME'] = previous


@pytest.fixture(scope='module', autouse=True)
def _cascade_away_what_the_module_made():
    """Every project a test module made goes at the end of the module,
    also when its fixture failed half-way: what it left (servers on the
    computes) would break the modules after it."""
    from tests.functional import topology

    first = len(topology.CREATED)
    yield
    made = topology.CREATED[first:]
    if not made:
        return
    admin = openstack.connect(cloud=ADMIN_CLOUD)
    for project_id in made:
        if admin.identity.find_project(project_id) is not None:
            result = run_openstack(
                'project', 'delete', '--cascade', '--yes', project_id
            )
            assert result.code == 0, result.stdout + result.stderr


def openstack_bin() -> str:
    here = os.path.join(os.path.dirname(sys.executable), 'openstack')
    return here if os.path.exists(here) else shutil.which('openstack')


class CLIResult:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def json(self):
        return json.loads(self.stdout)


def run_openstack(
    *args: str, cloud: str = ADMIN_CLOUD, timeout: float = 900
) -> CLIResult:
    """The real `openstack` command, as a user runs it."""
    proc = subprocess.run(
        [openstack_bin(), '--os-cloud', cloud, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return CLIResult(proc)


@pytest.fixture
def cli(admin):
    return run_openstack
