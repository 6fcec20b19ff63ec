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

"""`openstack user delete --cascade` through the real OSC shell."""

import json

import pytest

from tests.unit import hooks
from tests.unit.fakes.clouds import UsersCloud


@pytest.fixture
def cloud():
    with UsersCloud() as c:
        yield c


@pytest.fixture(autouse=True)
def _hooks(monkeypatch):
    hooks.install(monkeypatch)


@pytest.fixture
def alice(cloud):
    user = cloud.user('alice')
    cloud.keypair(user['id'], 'laptop')
    cloud.credential(user['id'], 'ec2')
    return user


def test_help_shows_the_cascade_options(osc):
    result = osc('help', 'user', 'delete')
    assert result.code == 0
    for option in ('--cascade', '--dry-run', '--yes', '--region', '-f'):
        assert option in result.stdout


def test_dry_run_as_json_changes_nothing(cloud, alice, osc):
    result = osc(
        'user', 'delete', '--cascade', '--dry-run', 'alice', '-f', 'json'
    )
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {(r['Kind'], r['Name']) for r in rows} == {
        ('identity.user', 'alice'),
        ('user.keypair', 'laptop'),
        ('user.credential', 'ec2'),
    }
    assert cloud.changes == []


def test_the_run_deletes_keypairs_then_osc_deletes_the_user(cloud, alice, osc):
    result = osc('user', 'delete', '--cascade', '--yes', 'alice')
    assert result.code == 0, result.stderr
    assert cloud.all('keypairs') == []
    assert not cloud.exists('users', alice['id'])
    assert ('DELETE', f'/v3/users/{alice["id"]}') in cloud.changes
    assert 'user.keypair' in result.stdout


def test_a_refusal_is_one_line_and_deletes_nothing(cloud, osc):
    cloud.add('domains', id='corp', name='corp')
    carol = cloud.user('carol', domain_id='corp', id='carol.ldap')
    cloud.keypair(carol['id'], 'laptop')
    result = osc('user', 'delete', '--cascade', '--yes', 'carol.ldap')
    assert result.code == 1
    [line] = result.stderr.strip().splitlines()
    assert 'Refusing to delete user carol (carol.ldap)' in line
    assert cloud.changes == []
    assert cloud.exists('users', 'carol.ldap')


def test_options_need_cascade(cloud, alice, osc):
    result = osc('user', 'delete', '--dry-run', 'alice')
    assert result.code != 0
    assert '--dry-run needs --cascade' in result.stderr
    assert cloud.changes == []


def test_the_run_is_recorded(cloud, alice, osc, tmp_path):
    path = tmp_path / 'record.json'
    result = osc(
        'user',
        'delete',
        '--cascade',
        '--yes',
        '--report-file',
        str(path),
        'alice',
    )
    assert result.code == 0, result.stderr
    record = json.loads(path.read_text())
    assert 'user.keypair' in json.dumps(record)
    assert record['command'] == 'user delete --cascade'
