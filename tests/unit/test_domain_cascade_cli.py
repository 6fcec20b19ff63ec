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

"""`openstack domain delete --cascade` through the real OSC shell."""

import json

import pytest

from tests.unit import hooks
from tests.unit.fakes.clouds import UsersCloud
from tests.unit.test_domain_cascade import customer


@pytest.fixture
def cloud():
    with UsersCloud() as c:
        yield c


@pytest.fixture(autouse=True)
def _hooks(monkeypatch):
    hooks.install(monkeypatch)


def test_help_shows_the_cascade_options(osc):
    result = osc('help', 'domain', 'delete')
    assert result.code == 0
    for option in ('--cascade', '--dry-run', '--yes', '-f'):
        assert option in result.stdout


def test_dry_run_is_one_plan_and_changes_nothing(cloud, osc):
    customer(cloud, 'acme')
    result = osc(
        'domain', 'delete', '--cascade', '--dry-run', 'acme', '-f', 'json'
    )
    assert result.code == 0, result.stderr
    kinds = {r['Kind'] for r in json.loads(result.stdout)}
    assert {
        'identity.domain',
        'identity.project',
        'identity.user',
        'identity.group',
        'user.keypair',
        'network.network',
        'identity.domain_role',
    } <= kinds
    assert cloud.changes == []


def test_the_dry_run_table_without_ids_fits_120_columns(cloud, osc):
    customer(cloud, 'acme')
    result = osc(
        'domain', 'delete', '--cascade', '--dry-run', 'acme',
        '-c', 'Stage', '-c', 'Region', '-c', 'Action', '-c', 'Kind',
        '-c', 'Name', '-c', 'After', '-c', 'Reason',
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 120
    assert 'identity.domain' in result.stdout


def test_the_run_and_osc_delete_the_domain(cloud, osc):
    c = customer(cloud, 'acme')
    result = osc('domain', 'delete', '--cascade', '--yes', 'acme')
    assert result.code == 0, result.stderr
    assert not cloud.exists('domains', c['domain']['id'])
    assert ('ORPHANED', 'projects') not in cloud.changes
    assert ('ORPHANED', 'users') not in cloud.changes
    assert 'identity.domain' in result.stdout


def test_what_stays_is_said_and_the_domain_stays(cloud, osc):
    c = customer(cloud, 'acme')
    c['projects'][2]['options'] = {'immutable': True}
    result = osc('domain', 'delete', '--cascade', '--yes', 'acme')
    assert result.code == 1
    [line] = result.stderr.strip().splitlines()[-1:]
    assert 'The domain was not deleted: 1 of its projects' in line
    assert 'acme-other' in line
    assert cloud.exists('domains', c['domain']['id'])
    assert not cloud.exists('projects', c['projects'][0]['id'])


def test_refusal_of_the_default_domain_is_one_line(cloud, osc):
    cloud.domain('Default', id='default')
    result = osc('domain', 'delete', '--cascade', '--yes', 'default')
    assert result.code == 1
    [line] = result.stderr.strip().splitlines()
    assert 'the default domain' in line
    assert cloud.changes == []


def test_one_domain_at_a_time(cloud, osc):
    result = osc('domain', 'delete', '--cascade', '--yes', 'a', 'b')
    assert result.code == 1
    assert 'one domain at a time' in result.stderr
