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

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.workflows import orphans
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.common import ADMIN_PROJECT, AUTH_URL, new_id
from tests.unit.fakes.kinds import FakeKind, ref
from tests.unit.fakes.run import zero_delays


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
    # 3, not argparse's 2 for a usage error
    assert osc('orphan', 'list', '--exit-code', '-f', 'value').code == 3
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
    assert 'did you mean network.' in result.stderr
    # a few close names, not every kind on one line (issue #32)
    assert max(len(line) for line in result.stderr.splitlines()) < 200


def test_unknown_kind_with_no_close_name_says_what_a_kind_is(world, osc):
    result = osc('orphan', 'list', '--kind', 'bogus')
    assert result.code != 0
    assert 'Unknown kind(s): bogus; a kind is <service>.<resource>' in (
        result.stderr
    )
    assert max(len(line) for line in result.stderr.splitlines()) < 200


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
    assert (
        'listing the projects of the cloud was refused (HTTP 403)'
        in result.stderr
    )


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


# -- owners proven gone ------------------------------------------------------


def cut_project_listing(cloud, shown=1):
    """Keystone's [resource] list_limit: the project listing shows only
    ``shown`` filler projects and says it is truncated; neither the admin
    project nor the live ones are in it."""
    fillers = {
        f['id']: f
        for f in (
            scenarios.project(cloud, f'filler-{i}') for i in range(shown)
        )
    }
    others = {
        k: v for k, v in cloud.db['projects'].items() if k not in fillers
    }
    cloud.db['projects'] = {**fillers, **others}
    cloud.list_limits['projects'] = shown


def gets(cloud, path):
    return sum(1 for m, p in cloud.requests if m == 'GET' and p == path)


def search(conn, retry=None):
    return orphans.OrphanSearch(
        conn,
        orphans.select_kinds(kinds_mod.build()),
        clock=FakeClock(),
        retry=retry or zero_delays(),
    )


def test_a_truncated_project_listing_orphans_nothing_of_live_projects(
    cloud, world, osc
):
    """The reproduction: Keystone's list_limit cuts the project listing
    (the SDK drops the "truncated" flag), and whatever it left out was
    taken for gone: the admin project's public network, its subnet, its
    RBAC policy and its default security group, and a live project's
    network, were reported, and purged."""
    live_id = world['live']['project']['id']
    gone_id = world['gone']['project']['id']
    external = world['external']
    admin_sg = scenarios.security_group(cloud, ADMIN_PROJECT, 'default')
    rbac = cloud.add(
        'rbac_policies',
        project_id=ADMIN_PROJECT,
        tenant_id=ADMIN_PROJECT,
        object_type='network',
        object_id=external['id'],
        action='access_as_external',
        target_tenant=live_id,
    )
    cut_project_listing(cloud)

    result = osc('orphan', 'list', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert rows and {r['Project ID'] for r in rows} == {gone_id}
    reported = {r['ID'] for r in rows}
    for kept in (
        external['id'],
        rbac['id'],
        admin_sg['id'],
        world['live']['network']['id'],
        world['live']['subnet']['id'],
    ):
        assert kept not in reported
    # each owner the listing left out was asked for, once, however many
    # resources it owns; a gone one as a project and as a domain
    assert gets(cloud, f'/v3/projects/{live_id}') == 1
    assert gets(cloud, f'/v3/projects/{ADMIN_PROJECT}') == 1
    assert gets(cloud, f'/v3/projects/{gone_id}') == 1
    assert gets(cloud, f'/v3/domains/{gone_id}') == 1
    assert gets(cloud, f'/v3/domains/{live_id}') == 0

    live_before = cloud.owned_by(live_id)
    admin_before = cloud.owned_by(ADMIN_PROJECT)
    purged = osc('orphan', 'purge', '--yes', '-f', 'json')
    assert purged.code == 0, purged.stderr
    assert cloud.owned_by(gone_id) == []
    assert cloud.owned_by(live_id) == live_before
    assert cloud.owned_by(ADMIN_PROJECT) == admin_before


def test_a_resource_owned_by_a_domain_is_not_an_orphan(cloud, world, osc):
    domain = cloud.add('domains', id='d' * 32, name='dom')
    cloud.list_limits['domains'] = 1  # shows Default only
    net = cloud.add(
        'networks',
        name='domain-net',
        project_id=domain['id'],
        tenant_id=domain['id'],
        shared=False,
        **{'router:external': False},
    )
    result = osc('orphan', 'list', '-f', 'json')
    assert result.code == 0, result.stderr
    assert net['id'] not in {r['ID'] for r in json.loads(result.stdout)}
    # not a project (404), so asked for as a domain
    assert gets(cloud, f'/v3/projects/{domain["id"]}') == 1
    assert gets(cloud, f'/v3/domains/{domain["id"]}') == 1


def test_a_project_created_after_the_listing_is_not_an_orphan(
    cloud, world, osc
):
    late_id = new_id('p')
    net, _subnet = scenarios.network(cloud, late_id, 'late-net')
    cloud.after_project_listing.append(
        lambda: scenarios.project(cloud, 'late', id=late_id)
    )
    result = osc('orphan', 'list', '-f', 'json')
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert cloud.exists('projects', late_id)
    assert late_id not in {r['Project ID'] for r in rows}
    assert net['id'] not in {r['ID'] for r in rows}


def test_owners_are_confirmed_after_the_resources_were_listed(cloud, conn):
    """A project created while the discovery runs: its resources are
    listed, it is not in any listing made before, and it exists."""
    late_id = new_id('p')

    class Late(FakeKind):
        def list(self, conn, project_id):
            scenarios.project(cloud, 'late', id=late_id)
            return [
                ref('late-thing', self.name, project_id=late_id),
                ref('gone-thing', self.name, project_id='f' * 32),
            ]

    kind = Late('test.late')
    kind.service_type = 'identity'
    found = orphans.OrphanSearch(
        conn, {kind.name: kind}, clock=FakeClock(), retry=zero_delays()
    ).find()
    assert [(o.ref.id, o.reason) for o in found.orphans] == [
        ('gone-thing', orphans.GONE_OWNER)
    ]


def test_a_refused_confirmation_keeps_its_resources_not_the_others(
    cloud, world, osc
):
    live_id = world['live']['project']['id']
    gone_id = world['gone']['project']['id']
    cut_project_listing(cloud)
    cloud.forbidden.add(rf'/v3/projects/{live_id}$')
    why = f'confirming that owner {live_id} is gone was refused (HTTP 403)'

    listed = osc('orphan', 'list', '-f', 'json')
    assert listed.code == 0, listed.stderr
    assert {r['Project ID'] for r in json.loads(listed.stdout)} == {gone_id}
    assert why in listed.stderr
    assert 'Its resources are not reported as orphans' in listed.stderr

    live_before = cloud.owned_by(live_id)
    purged = osc('orphan', 'purge', '--yes')
    assert purged.code == 1
    last = purged.stderr.strip().splitlines()[-1]
    assert why in last and 'Its resources were not purged' in last
    # the owner in doubt keeps everything; the one proven gone is purged
    assert cloud.owned_by(live_id) == live_before
    assert cloud.owned_by(gone_id) == []
    assert '1 of 2 deleted project(s) purged; the others are left:' in (
        purged.stderr
    )


def test_a_server_error_on_the_confirmation_fails_closed(cloud, world, osc):
    gone_id = world['gone']['project']['id']
    attempts = RetryPolicy().max_attempts
    cloud.faults.extend([('GET', rf'/v3/projects/{gone_id}$', 500)] * attempts)
    purged = osc('orphan', 'purge', '--yes')
    assert purged.code == 1
    last = purged.stderr.strip().splitlines()[-1]
    assert (
        f'confirming that owner {gone_id} is gone failed, so its resources '
        'were not purged (HTTP 500)'
    ) in last
    assert gets(cloud, f'/v3/projects/{gone_id}') == attempts  # retried
    assert cloud.changes == []
    # and listed, its resources are not orphans while it stays unknown
    cloud.faults.extend([('GET', rf'/v3/projects/{gone_id}$', 503)] * attempts)
    listed = osc('orphan', 'list', '-f', 'json')
    assert listed.code == 0, listed.stderr
    assert json.loads(listed.stdout) == []


def test_a_server_error_that_passes_is_retried(cloud, world, osc):
    gone_id = world['gone']['project']['id']
    cloud.faults.append(('GET', rf'/v3/projects/{gone_id}$', 503))
    listed = osc('orphan', 'list', '-f', 'json')
    assert listed.code == 0, listed.stderr
    assert gone_id in {r['Project ID'] for r in json.loads(listed.stdout)}


def test_an_owner_that_exists_again_at_the_purge_keeps_its_resources(
    cloud, world, osc
):
    """Keystone said 404 while the search ran (a replica behind, a project
    restored meanwhile): right before the purge every owner of the plan is
    asked again, and one that exists now drops out of it."""
    live_id = world['live']['project']['id']
    gone_id = world['gone']['project']['id']
    cut_project_listing(cloud)
    cloud.faults.extend(
        [
            ('GET', rf'/v3/projects/{live_id}$', 404),
            ('GET', rf'/v3/domains/{live_id}$', 404),
        ]
    )
    live_before = cloud.owned_by(live_id)
    purged = osc('orphan', 'purge', '--yes', '-f', 'json')
    assert purged.code == 0, purged.stderr
    assert f'project {live_id} exists now: its ' in purged.stderr
    assert 'resource(s) are kept, not purged' in purged.stderr
    assert cloud.owned_by(live_id) == live_before
    assert cloud.owned_by(gone_id) == []
    assert gets(cloud, f'/v3/projects/{live_id}') == 2
    assert gets(cloud, f'/v3/projects/{gone_id}') == 2


def test_an_owner_that_cannot_be_confirmed_again_leaves_the_plan(
    cloud, world, conn
):
    gone_id = world['gone']['project']['id']
    orphan_search = search(conn)
    findings = orphan_search.find()
    assert findings.owned_by_gone
    cloud.forbidden.add(rf'/v3/projects/{gone_id}$')
    again, _notes = orphan_search.reconfirm(findings)
    assert again.owned_by_gone == []
    assert again.orphans == []
    assert list(again.unconfirmed) == [gone_id]
    [line] = orphans.not_purged(again).values()
    assert (
        f'confirming that owner {gone_id} is gone was refused (HTTP 403)'
        in line
    )
    assert 'Its resources were not purged' in line and '\n' not in line
    assert orphans.purge_plan(again, orphan_search.kinds).steps == {}
    assert cloud.changes == []


def test_one_owner_in_doubt_at_the_purge_leaves_it_and_purges_the_others(
    cloud, world, external, osc
):
    """Proven gone by the search, not proven again right before the
    purge (Keystone answers 403 then): that owner is left, whole; the
    other deleted project is purged, and the run says which is which."""
    gone_id = world['gone']['project']['id']
    other = scenarios.full_project(cloud, 'other-gone', external)
    other_id = other['project']['id']
    cloud.db['projects'].pop(other_id)
    other_before = cloud.owned_by(other_id)
    real = orphans.OrphanSearch.reconfirm

    def then_refused(search_, findings):
        cloud.forbidden.add(rf'/v3/projects/{other_id}$')
        return real(search_, findings)

    patch = pytest.MonkeyPatch()
    patch.setattr(orphans.OrphanSearch, 'reconfirm', then_refused)
    try:
        purged = osc('orphan', 'purge', '--yes')
    finally:
        patch.undo()
    assert purged.code == 1
    assert cloud.owned_by(gone_id) == []
    assert cloud.owned_by(other_id) == other_before
    last = purged.stderr.strip().splitlines()[-1]
    assert f'owner {other_id} is gone was refused' in last
    assert '1 of 2 deleted project(s) purged; the others are left:' in (
        purged.stderr
    )


def test_an_owner_filter_asks_for_its_owners_only(cloud, world, osc):
    gone_id = world['gone']['project']['id']
    result = osc('orphan', 'list', '--project', gone_id, '-f', 'json')
    assert result.code == 0, result.stderr
    assert {r['Project ID'] for r in json.loads(result.stdout)} == {gone_id}
    identity = [p for m, p in cloud.requests if p.startswith('/v3/projects')]
    assert identity == [f'/v3/projects/{gone_id}']


def test_a_404_that_is_not_keystones_proves_nothing(cloud, conn):
    """A proxy's or a router's 404 page says nothing of the owner."""
    cloud.mocker.register_uri(
        'GET',
        AUTH_URL + '/projects/maybe',
        status_code=404,
        text='<html>Not Found</html>',
        headers={'Content-Type': 'text/html'},
    )
    with pytest.raises(sdk_exc.NotFoundException, match="Keystone's error"):
        keystone.owner_exists(conn, 'maybe')
    verdicts = orphans.Owners(
        conn, retry=zero_delays(), clock=FakeClock(), parallel=2
    ).confirm(['maybe'])
    assert verdicts['maybe'].state == orphans.UNKNOWN
