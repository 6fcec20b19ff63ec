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

"""Designate through a token scoped to the project (the cascade without
cloud admin, ``workflows.scoped``): Designate's sudo header and its
all-projects header are an admin's (policies ``use_sudo``, ``all_tenants``;
403 otherwise), so every dns kind acts as the token's project, asking for
neither (``fakes.dns`` refuses both to a token without admin)."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.kinds import dns
from tests.unit import scenarios
from tests.unit.fakes.run import scoped_cascade
from tests.unit.fakes.scoped import ScopedDnsBarbicanCloud

DOMAIN = 'dom-managed'


@pytest.fixture
def cloud():
    with ScopedDnsBarbicanCloud() as c:
        yield c


@pytest.fixture
def world(cloud):
    """Project target with a zone on offer to another project, a record
    set of its own in project other's zone shared with it, and a floating
    IP's PTR; other's own zone; target's member alice and the domain's
    manager."""
    target = scenarios.project(
        cloud, 'target', domain_id=DOMAIN, parent_id=DOMAIN
    )
    other = scenarios.project(cloud, 'other', domain_id=DOMAIN)
    pid, oid = target['id'], other['id']
    alice = cloud.add_user('alice', DOMAIN)
    cloud.assign(alice, 'member', project=target)
    manager = cloud.add_user('managed-manager', DOMAIN)
    cloud.assign(manager, 'manager', domain=DOMAIN)
    zone = cloud.zone(pid, 'target.example.')
    offer = cloud.offer_zone(zone, oid)
    theirs = cloud.zone(oid, 'other.example.')
    cloud.zone_share(theirs, pid)
    mine = cloud.recordset(theirs, pid, 'www.other.example.')
    kept = cloud.recordset(theirs, oid, 'mail.other.example.')
    external = scenarios.external_network(cloud)[0]
    fip = scenarios.floating_ip(cloud, pid, external)
    cloud.ptr(fip, 'www.target.example.')
    return {
        'pid': pid,
        'alice': alice,
        'manager': manager,
        'zone': zone,
        'offer': offer,
        'theirs': theirs,
        'mine': mine,
        'kept': kept,
        'fip': fip,
    }


def assert_designate_as_the_project(cloud, world):
    """The project's Designate resources went, another project's stayed,
    and no call asked Designate for an admin's sudo."""
    assert not cloud.exists('zones', world['zone']['id'])
    assert not cloud.exists('zone_transfer_requests', world['offer']['id'])
    assert not cloud.exists('recordsets', world['mine']['id'])
    assert not cloud.exists('ptrs', f'RegionOne:{world["fip"]["id"]}')
    assert cloud.exists('zones', world['theirs']['id'])
    assert cloud.exists('recordsets', world['kept']['id'])
    assert cloud.dns_calls
    assert [c for c in cloud.dns_calls if c[2] is not None] == []


def test_a_members_cascade_empties_its_projects_designate(cloud, world):
    pid = world['pid']
    wf = scoped_cascade(
        cloud.connection_as(world['alice'], project_id=pid),
        keep_project=True,
    )
    targets = wf.resolve(['target'])
    wf.execute(wf.plan(targets), targets)

    assert_designate_as_the_project(cloud, world)
    assert cloud.get('projects', pid)['enabled'] is True


def test_a_domain_managers_cascade_empties_its_projects_designate(
    cloud, world
):
    wf = scoped_cascade(
        cloud.connection_as(world['manager'], domain_id=DOMAIN)
    )
    targets = wf.resolve(['target'])
    wf.execute(wf.plan(targets), targets)

    assert_designate_as_the_project(cloud, world)


@pytest.mark.parametrize(
    'kind',
    [
        dns.Zone.name,
        dns.RecordSet.name,
        dns.ZoneTransferRequest.name,
        dns.FloatingIPRecord.name,
    ],
)
def test_each_dns_kind_lists_as_the_token_without_sudo(cloud, world, kind):
    pid = world['pid']
    conn = cloud.connection_as(world['alice'], project_id=pid)
    refs = kinds_mod.build(scoped=True)[kind].list(conn, pid)

    assert [r.project_id for r in refs] == [pid]
    assert [c for c in cloud.dns_calls if c[2] is not None] == []


def test_a_shared_zones_shares_are_read_as_the_token(cloud, world):
    """The project's own zone shared with another: its shares are asked of
    its owner, the token's project, without sudo; it is kept."""
    pid = world['pid']
    cloud.zone_share(world['zone'], 'someone')
    conn = cloud.connection_as(world['alice'], project_id=pid)
    [ref] = kinds_mod.build(scoped=True)[dns.Zone.name].list(conn, pid)

    assert ref.attrs['shared_with'] == ['someone']
    assert [c for c in cloud.dns_calls if c[2] is not None] == []


def test_the_fake_refuses_sudo_and_all_projects_to_a_token_without_admin(
    cloud, world
):
    """As Designate's ContextMiddleware: sudo and all_tenants are policy
    checks (use_sudo, all_tenants), admin's alone."""
    conn = cloud.connection_as(world['alice'], project_id=world['pid'])
    for headers in (
        {dns.SUDO: world['pid']},
        dns.ALL_PROJECTS,
    ):
        answer = conn.dns.get('/zones', headers=headers)
        assert answer.status_code == 403
    assert [z['id'] for z in conn.dns.get('/zones').json()['zones']] == [
        world['zone']['id'],
        world['theirs']['id'],
    ]


def test_shares_are_asked_only_of_the_projects_own_zones(cloud, world):
    """A zone shared with the project is another's: its shares are not
    asked (Designate would answer the project's own share alone)."""
    pid = world['pid']
    conn = cloud.connection_as(world['alice'], project_id=pid)
    kinds_mod.build(scoped=True)[dns.Zone.name].list(conn, pid)

    assert [c for c in cloud.dns_calls if c[1].endswith('/shares')] == []
