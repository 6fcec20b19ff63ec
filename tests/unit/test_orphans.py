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

"""`openstack orphan list` and `openstack orphan purge`."""

import json

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.workflows import orphans
from tests.unit import scenarios


@pytest.fixture
def world(cloud, external):
    """A project deleted with plain `project delete` (its resources stay)
    and a live twin."""
    gone = scenarios.full_project(cloud, 'gone', external)
    live = scenarios.full_project(cloud, 'live', external)
    cloud.db['projects'].pop(gone['project']['id'])
    cloud.add('domains', id='default', name='Default')
    cloud.add('users', id='user-gone', name='gone-user')
    return {'gone': gone, 'live': live, 'external': external}


def listed(result):
    return {(r['Kind'], r['ID']) for r in json.loads(result.stdout)}


def test_list_finds_exactly_the_deleted_projects_resources(cloud, world, osc):
    gone_id = world['gone']['project']['id']
    result = osc('orphan', 'list', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert rows and {r['Project ID'] for r in rows} == {gone_id}
    assert all(r['Reason'] == orphans.GONE_OWNER for r in rows)
    kinds = {r['Kind'] for r in rows}
    for kind in (
        'compute.server',
        'block_storage.volume',
        'block_storage.backup',
        'network.router',
        'network.port',
        'image.image',
        'identity.application_credential',
    ):
        assert kind in kinds
    # ports that go with their owner (router interface, DHCP) are not
    # reported on their own
    reported_ports = {r['ID'] for r in rows if r['Kind'] == 'network.port'}
    for port in cloud.all('ports'):
        if port['device_owner'] in (
            'network:dhcp',
            'network:router_interface',
        ):
            assert port['id'] not in reported_ports


def test_list_is_read_only(cloud, world, osc):
    osc('orphan', 'list', '-f', 'json')
    assert cloud.changes == []


def test_exit_code_option_reports_orphans(world, osc):
    assert osc('orphan', 'list', '--exit-code', '-f', 'value').code == 2
    assert osc('orphan', 'list', '-f', 'value').code == 0


def test_exit_code_zero_without_orphans(cloud, external, osc):
    scenarios.full_project(cloud, 'alive', external)
    result = osc('orphan', 'list', '--exit-code', '-f', 'json')
    assert result.code == 0
    assert json.loads(result.stdout) == []


def test_filters_by_service_kind_and_owner(world, osc):
    by_service = listed(
        osc('orphan', 'list', '--service', 'network', '-f', 'json')
    )
    assert by_service and all(k.startswith('network.') for k, _ in by_service)
    by_kind = listed(
        osc('orphan', 'list', '--kind', 'compute.server', '-f', 'json')
    )
    assert {k for k, _ in by_kind} == {'compute.server'}
    nobody = listed(osc('orphan', 'list', '--project', 'f' * 32, '-f', 'json'))
    assert nobody == set()


def test_unknown_kind_is_a_clear_error(world, osc):
    result = osc('orphan', 'list', '--kind', 'network.nope')
    assert result.code != 0
    assert 'Unknown kind(s): network.nope' in result.stderr


def test_empty_owner_is_reported_not_passed_over(cloud, world, osc):
    stray = cloud.add(
        'networks',
        name='stray',
        project_id='',
        tenant_id='',
        shared=False,
        **{'router:external': False},
    )
    rows = json.loads(osc('orphan', 'list', '-f', 'json').stdout)
    row = next(r for r in rows if r['ID'] == stray['id'])
    assert row['Reason'] == orphans.NO_OWNER


def test_wildcard_rbac_target_is_not_an_orphan(cloud, world, osc):
    live_id = world['live']['project']['id']
    wildcard = cloud.add(
        'rbac_policies',
        project_id=live_id,
        tenant_id=live_id,
        object_type='network',
        object_id=world['live']['network']['id'],
        action='access_as_shared',
        target_tenant='*',
    )
    stale = cloud.add(
        'rbac_policies',
        project_id=live_id,
        tenant_id=live_id,
        object_type='network',
        object_id=world['live']['network']['id'],
        action='access_as_shared',
        target_tenant='d' * 32,
    )
    rows = json.loads(osc('orphan', 'list', '-f', 'json').stdout)
    reasons = {r['ID']: r['Reason'] for r in rows}
    assert wildcard['id'] not in reasons
    assert reasons[stale['id']] == orphans.GONE_TARGET


def test_purge_dry_run_changes_nothing(cloud, world, osc):
    result = osc('orphan', 'purge', '--dry-run', '-f', 'json')
    assert result.code == 0, result.stderr
    planned = {(r['Kind'], r['ID']) for r in json.loads(result.stdout)}
    assert ('compute.server', world['gone']['server']['id']) in planned
    assert cloud.changes == []


def test_purge_without_terminal_or_yes_refuses(cloud, world, osc):
    result = osc('orphan', 'purge')
    assert result.code != 0
    assert '--yes' in result.stderr
    assert cloud.changes == []


def test_purge_removes_them_all_and_nothing_else(cloud, world, osc):
    gone_id = world['gone']['project']['id']
    live_id = world['live']['project']['id']
    live_before = cloud.owned_by(live_id)
    result = osc('orphan', 'purge', '--yes', '-f', 'json')
    assert result.code == 0, result.stderr
    assert cloud.owned_by(gone_id) == []
    assert cloud.owned_by(live_id) == live_before
    assert cloud.exists('networks', world['external']['id'])
    again = osc('orphan', 'list', '--exit-code', '-f', 'json')
    assert again.code == 0 and json.loads(again.stdout) == []


def test_purge_of_one_project_only(cloud, world, external, osc):
    other = scenarios.full_project(cloud, 'other-gone', external)
    cloud.db['projects'].pop(other['project']['id'])
    result = osc(
        'orphan',
        'purge',
        '--yes',
        '--project',
        world['gone']['project']['id'],
    )
    assert result.code == 0, result.stderr
    assert cloud.owned_by(world['gone']['project']['id']) == []
    assert cloud.owned_by(other['project']['id']) != []


def test_purge_plan_leaves_ownerless_and_live_resources_out():
    kinds = kinds_mod.build()
    refs = [
        ResourceRef('network.network', 'n1', project_id='dead'),
        ResourceRef('network.network', 'n2', project_id=''),
    ]
    findings = orphans.Findings(
        [
            orphans.Orphan(refs[0], orphans.GONE_OWNER),
            orphans.Orphan(refs[1], orphans.NO_OWNER),
        ],
        [],
        [refs[0]],
    )
    plan = orphans.purge_plan(findings, kinds)
    assert set(plan.steps) == {'delete:network.network:n1'}
    assert plan.projects == [{'id': 'dead', 'name': ''}]


def test_select_kinds_filters_and_refuses_unknown():
    kinds = kinds_mod.build()
    network = orphans.select_kinds(kinds, services=['network'])
    assert network and all(
        k.service_type == 'network' for k in network.values()
    )
    assert kinds_mod.PROJECT_KIND not in orphans.select_kinds(kinds)
    with pytest.raises(CascadeError):
        orphans.select_kinds(kinds, kind_names=['nope'])


def test_keystone_failure_is_a_clear_error(cloud, world, osc):
    cloud.forbidden.add(r'/v3/projects\?|/v3/projects$')
    result = osc('orphan', 'list')
    assert result.code != 0
    assert 'listing the projects of the cloud failed' in result.stderr


def test_a_user_whose_credentials_are_private_does_not_stop_the_search(
    cloud, world, osc
):
    cloud.add('users', id='svc-user', name='nova')
    cloud.forbidden.add(r'/v3/users/svc-user/application_credentials')
    result = osc('orphan', 'list', '-f', 'json')
    assert result.code == 0, result.stderr
    assert (
        'application credentials of user nova (svc-user) could not be '
        'listed (HTTP 403)' in result.stderr
    )
    kinds = {r['Kind'] for r in json.loads(result.stdout)}
    assert 'identity.application_credential' in kinds
