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

"""A deleted project's Swift containers (issue 29, defect 9): Swift cannot
list its accounts, so the orphan search looks at the account of each
deleted project it knows of (given, or proven gone by what else it left):
``AUTH_<id>`` on the caller's object-store endpoint. Without the reseller
admin role it says so in one line, and the project is never called
clean."""

import json

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.reaper import lock, sweep
from osc_cascade.v1.common import EXIT_OWNERS_UNCONFIRMED
from osc_cascade.workflows import orphans
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import ADMIN_PROJECT
from tests.unit.fakes.run import zero_delays

CONTAINER = 'object_store.container'


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def gone(cloud):
    return deleted_project(cloud)


def deleted_project(cloud):
    """A project deleted with plain `project delete`: it left a container
    with objects, and nothing else; a live project and the admin have
    containers of the same name."""
    gone = scenarios.project(cloud, 'gone')['id']
    live = scenarios.project(cloud, 'live')['id']
    for owner in (gone, live, ADMIN_PROJECT):
        cloud.container(owner, 'logs', objects=3)
    cloud.db['projects'].pop(gone)
    cloud.add('domains', id='default', name='Default')
    return gone


def exists(cloud, project_id, name='logs'):
    return cloud.exists('containers', f'{cloud.prefix}{project_id}/{name}')


def test_orphan_list_of_a_deleted_project_shows_its_container(
    cloud, gone, osc
):
    # the reproduction: given the project's ID, the list showed nothing
    result = osc('orphan', 'list', '--project', gone, '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [(r['Kind'], r['ID'], r['Reason']) for r in rows] == [
        (CONTAINER, f'{gone}/logs', orphans.GONE_OWNER)
    ]
    assert cloud.changes == []


def test_orphan_purge_of_a_deleted_project_deletes_its_container_only(
    cloud, gone, osc
):
    live = next(p['id'] for p in cloud.all('projects') if p['name'] == 'live')
    result = osc('orphan', 'purge', '--yes', '--project', gone, '-f', 'json')
    assert result.code == 0, result.stderr
    assert not exists(cloud, gone)
    assert exists(cloud, live)
    assert exists(cloud, ADMIN_PROJECT)


def test_a_live_projects_container_is_no_orphan(cloud, gone, osc):
    live = next(p['id'] for p in cloud.all('projects') if p['name'] == 'live')
    result = osc('orphan', 'list', '--project', live, '-f', 'json')
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_without_reseller_admin_it_says_so_and_never_calls_it_clean(
    cloud, gone, osc
):
    cloud.reseller = False
    listed = osc('orphan', 'list', '--exit-code', '--project', gone)
    assert listed.code == EXIT_OWNERS_UNCONFIRMED
    [line] = [x for x in listed.stderr.splitlines() if 'Swift' in x]
    assert f'the Swift account of project {gone}' in line
    assert 'ResellerAdmin' in line

    purged = osc('orphan', 'purge', '--yes', '--project', gone)
    assert purged.code == 1
    assert f'the Swift account of project {gone}' in purged.stderr
    assert exists(cloud, gone)


def test_the_sweep_finds_the_accounts_of_projects_it_proves_gone(
    cloud, external, tmp_path
):
    # a project deleted with plain `project delete` that left a network
    # too: the sweep proves it gone, and then looks at its account
    left = scenarios.full_project(cloud, 'left', external)
    pid = left['project']['id']
    cloud.container(pid, 'backups', objects=2)
    cloud.db['projects'].pop(pid)
    cloud.add('domains', id='default', name='Default')
    outcomes = purger(cloud, tmp_path).sweep()
    assert outcomes[pid].state == sweep.PURGED
    assert not exists(cloud, pid, 'backups')


def test_the_reapers_purge_of_a_project_deletes_its_container(
    cloud, gone, tmp_path
):
    outcomes = purger(cloud, tmp_path).purge([gone])
    assert outcomes[gone].state == sweep.PURGED
    assert not exists(cloud, gone)


def test_the_reaper_without_reseller_admin_fails_the_project(
    cloud, gone, tmp_path
):
    cloud.reseller = False
    outcomes = purger(cloud, tmp_path).purge([gone])
    assert outcomes[gone].state == sweep.FAILED
    assert f'the Swift account of project {gone}' in outcomes[gone].detail
    assert exists(cloud, gone)


def purger(cloud, tmp_path):
    locks = lock.Locks(f'file://{tmp_path / "locks"}', 'reaper-a')
    locks.start()
    return sweep.Purger(
        cloud.connection(),
        orphans.select_kinds(kinds_mod.build()),
        locks,
        clock=FakeClock(),
        retry=zero_delays(),
    )


def test_an_account_prefix_other_than_auth_is_the_catalogs(osc):
    # a proxy whose reseller_prefix is KEY_: the account is found from the
    # caller's own endpoint, not assumed to be AUTH_<id>
    with ServicesCloud(prefix='KEY_') as cloud:
        pid = deleted_project(cloud)
        result = osc('orphan', 'purge', '--yes', '--project', pid)
        assert result.code == 0, result.stderr
        assert not exists(cloud, pid)
        assert exists(cloud, ADMIN_PROJECT)
        assert any('/v1/KEY_' + pid in p for _, p in cloud.requests)
