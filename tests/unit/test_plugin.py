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

"""The OSC plugin module, the entry points and the hook's helpers."""

import argparse
from importlib import metadata
import io
import sys
import types

from osc_lib import exceptions
import pytest

from osc_cascade import plugin
from osc_cascade.v1 import common, project
from tests.unit import scenarios
from tests.unit.fakes.kinds import make_plan


def entry_points(group):
    return {ep.name: ep.value for ep in metadata.entry_points(group=group)}


def test_entry_points_are_registered():
    assert entry_points('openstack.cli.extension')['cascade'] == (
        'osc_cascade.plugin'
    )
    assert entry_points('openstack.cli.project_delete')[
        'osc_cascade_project_delete'
    ] == ('osc_cascade.v1.project:ProjectDeleteCascade')


def test_plugin_module_contract():
    assert plugin.API_NAME == 'cascade'
    assert plugin.DEFAULT_API_VERSION in plugin.API_VERSIONS
    assert plugin.check_api_version('1') is True

    class Instance:
        sdk_connection = object()

    assert plugin.make_client(Instance()) is Instance.sdk_connection


def test_plugin_option(monkeypatch):
    parser = plugin.build_option_parser(argparse.ArgumentParser())
    assert parser.parse_args([]).os_cascade_api_version == '1'
    assert (
        parser.parse_args(
            ['--os-cascade-api-version', '2']
        ).os_cascade_api_version
        == '2'
    )
    monkeypatch.setenv('OS_CASCADE_API_VERSION', '3')
    parser = plugin.build_option_parser(argparse.ArgumentParser())
    assert parser.parse_args([]).os_cascade_api_version == '3'


@pytest.mark.parametrize('text,value', [('1', 1), ('25', 25)])
def test_positive_int(text, value):
    assert common.positive_int(text) == value


@pytest.mark.parametrize('text', ['0', '-3'])
def test_positive_int_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError):
        common.positive_int(text)


def test_positive_float():
    assert common.positive_float('0.5') == 0.5
    with pytest.raises(argparse.ArgumentTypeError):
        common.positive_float('0')


@pytest.mark.parametrize(
    'text,seconds',
    [
        ('300', 300),
        ('0.5', 0.5),
        ('90s', 90),
        ('5m', 300),
        ('2h', 7200),
        ('7d', 604800),
        ('1.5h', 5400),
        (' 30M ', 1800),
        ('0', 0),
    ],
)
def test_duration(text, seconds):
    assert common.duration(text) == seconds


@pytest.mark.parametrize('text', ['', 'soon', '5 minutes', '-5m', '2w', 'm'])
def test_duration_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError, match='is not a duration'):
        common.duration(text)


def test_positive_duration():
    assert common.positive_duration('10m') == 600
    with pytest.raises(argparse.ArgumentTypeError, match='greater than 0'):
        common.positive_duration('0s')


@pytest.mark.parametrize(
    'command,option',
    [
        (('project', 'delete'), '--settle'),
        (('project', 'delete'), '--timeout'),
        (('compute', 'service', 'delete'), '--api-timeout'),
        (('cluster', 'force-delete'), '--grace'),
        (('cluster', 'stuck', 'list'), '--older-than'),
        (('orphan', 'purge'), '--timeout'),
        (('project', 'sweep'), '--older-than'),
    ],
)
def test_every_duration_is_spelled_alike(osc, command, option):
    text = osc('help', *command).stdout
    assert f'{option} <duration>' in text
    assert '<seconds>' not in text
    assert '<age>' not in text


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_confirm(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, 'stderr', err)
    monkeypatch.setattr(sys, 'stdin', io.StringIO('y\n'))
    common.confirm('Go?', assume_yes=True)  # never asks
    assert err.getvalue() == ''
    with pytest.raises(exceptions.CommandError, match='not a terminal'):
        common.confirm('Go?', assume_yes=False)
    monkeypatch.setattr(sys, 'stdin', Terminal(' Y \n'))
    common.confirm('Go?', assume_yes=False)
    assert err.getvalue() == 'Go? [y/N]: '
    monkeypatch.setattr(sys, 'stdin', Terminal('no\n'))
    with pytest.raises(exceptions.CommandError, match='Aborted'):
        common.confirm('Go?', assume_yes=False)


def test_counts_text():
    plan = make_plan(['a', 'b'])
    assert common.counts_text(plan) == '  test.thing: 2 delete'


def test_identity_v2_is_refused():
    hook = project.ProjectDeleteCascade(command=object())
    with pytest.raises(exceptions.CommandError, match='Identity API v3'):
        hook._check_identity_v3()


def test_help_describes_the_cascade(osc):
    result = osc('help', 'project', 'delete')
    assert result.code == 0
    text = ' '.join(result.stdout.split())  # argparse wraps lines
    assert 'cascade (osc-cascade)' in text
    assert 'delete all it owns, then the project' in text
    assert 'yaml or dot (default: table)' in text
    assert 'draw the plan into <file>: .svg, .png, .pdf' in text


def test_without_cascade_project_delete_is_osc_own(cloud, osc):
    p = scenarios.project(cloud, 'A')
    scenarios.volume(cloud, p['id'])  # OSC does not look: it just deletes
    result = osc('project', 'delete', 'A')
    assert result.code == 0, result.stderr
    assert not cloud.exists('projects', p['id'])
    assert cloud.changes == [('DELETE', f'/v3/projects/{p["id"]}')]


def test_an_auth_type_without_a_token_is_named_in_one_line():
    # --os-auth-type none: keystoneauth's NoAuth has no get_access, and
    # the error was "'NoAuth' object has no attribute 'get_access'"
    from keystoneauth1 import noauth

    conn = types.SimpleNamespace(
        session=types.SimpleNamespace(auth=noauth.NoAuth(), timeout=None),
        config=types.SimpleNamespace(config={'auth_type': 'none'}),
    )
    app = types.SimpleNamespace(
        client_manager=types.SimpleNamespace(sdk_connection=conn)
    )
    with pytest.raises(exceptions.CommandError) as exc:
        common.connection(app, argparse.Namespace())
    assert str(exc.value) == (
        'osc-cascade needs a token: an auth type with a catalog (e.g. '
        "password), not 'none'"
    )
