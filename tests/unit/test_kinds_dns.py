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

"""Designate zones and floating-IP PTR records, reached on the project's
behalf (sudo), and a PTR unset before its floating IP goes."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.executor import DONE, FAILED, KEPT
from osc_cascade.kinds import dns
from tests.unit import scenarios
from tests.unit.cross_project import kept_and_refused
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import REGION, step_id
from tests.unit.fakes.dns import MANAGED
from tests.unit.fakes.run import cascade_for, run_kind


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def zones():
    return kinds_mod.build()[dns.Zone.name]


@pytest.fixture
def ptrs():
    return kinds_mod.build()[dns.FloatingIPRecord.name]


def test_zones_are_listed_on_the_projects_behalf(cloud, zones):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    zone = cloud.zone(a, 'a.example.')
    cloud.zone(b, 'b.example.')

    refs = zones.list(cloud.connection(), a)

    assert [r.id for r in refs] == [zone['id']]
    assert ('GET', '/v2/zones', a) in cloud.dns_calls


def test_a_zone_is_deleted_on_the_projects_behalf_and_waited_for(cloud, zones):
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.')
    refs = zones.list(cloud.connection(), a)

    [result] = run_kind(cloud, zones, refs).results.values()

    assert result.outcome == DONE
    assert not cloud.exists('zones', zone['id'])  # not a 404 of scope
    assert ('DELETE', f'/v2/zones/{zone["id"]}', a) in cloud.dns_calls


def test_a_zone_whose_delete_errors_fails(cloud, zones):
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.', fail_delete=True)
    [result] = run_kind(
        cloud, zones, zones.list(cloud.connection(), a)
    ).results.values()
    assert result.outcome == FAILED
    assert result.error == 'delete failed: status is ERROR'
    assert cloud.exists('zones', zone['id'])


def test_a_floating_ips_ptr_is_unset_before_the_floating_ip_goes(
    cloud, external
):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    fip = scenarios.floating_ip(cloud, a, external)
    b_fip = scenarios.floating_ip(cloud, b, external)
    cloud.ptr(fip, 'www.a.example.')
    cloud.ptr(b_fip, 'www.b.example.')
    pc, targets, plan = cascade_for(cloud, a)
    # the record is named after the floating IP's region, and is Designate's
    ptr_step = step_id(
        'delete', dns.FloatingIPRecord.name, f'{REGION}:{fip["id"]}'
    )
    assert (
        ptr_step,
        step_id('delete', 'network.floating_ip', fip['id']),
    ) in plan.edges

    pc.execute(plan, targets)

    assert not cloud.exists('ptrs', f'RegionOne:{fip["id"]}')
    assert cloud.exists('ptrs', f'RegionOne:{b_fip["id"]}')
    patch = cloud.changes.index(
        ('PATCH', f'/v2/reverse/floatingips/RegionOne:{fip["id"]}')
    )
    assert patch < cloud.changes.index(
        ('DELETE', f'/v2.0/floatingips/{fip["id"]}')
    )


def test_a_ptrs_record_set_is_no_record_set_of_the_project(cloud, external):
    """The real Designate (tests/functional/test_real_designate) lists a
    floating IP's PTR record set among the project's record sets (its
    project is the floating IP's), in the reverse zone of its managed
    project, which the project cannot see: a delete of it answers 404
    zone_not_found, which would pass for done. It goes with the unset of
    the PTR, planned once, as dns.floating_ip_ptr."""
    a = scenarios.project(cloud, 'A')['id']
    fip = scenarios.floating_ip(cloud, a, external)
    cloud.ptr(fip, 'www.a.example.')
    [record] = [r for r in cloud.all('recordsets') if r['project_id'] == a]
    assert record['type'] == 'PTR'
    pc, targets, plan = cascade_for(cloud, a)

    assert step_id('delete', dns.RecordSet.name, record['id']) not in (
        plan.steps
    )
    assert (
        step_id('delete', dns.FloatingIPRecord.name, f'{REGION}:{fip["id"]}')
        in plan.steps
    )
    pc.execute(plan, targets)
    assert not cloud.exists('recordsets', record['id'])


def test_designates_managed_reverse_zone_is_no_orphan(cloud, external):
    """The real Designate's reverse zone of floating IPs' PTR records is
    its managed project's, an ID no Keystone project has, and its SOA and
    NS record sets are of the project that set the first PTR: the orphan
    search listed the zone for deletion, with every project's PTR in it."""
    a = scenarios.project(cloud, 'A')['id']
    gone = scenarios.project(cloud, 'gone')['id']
    fip = scenarios.floating_ip(cloud, a, external)
    cloud.ptr(fip, 'www.a.example.')
    [zone] = [z for z in cloud.all('zones') if z['project_id'] == MANAGED]
    cloud.recordset(zone, gone, zone['name'])  # its SOA, say
    cloud.db['projects'].pop(gone)
    conn = cloud.connection()
    built = kinds_mod.build()

    assert zone['id'] not in {
        r.id for r in built[dns.Zone.name].list(conn, None)
    }
    assert not [
        r
        for r in built[dns.RecordSet.name].list(conn, None)
        if r.attrs['zone_id'] == zone['id']
    ]
    assert dns.MANAGED_PROJECT == MANAGED


def test_ptrs_are_not_searched_for_orphans(cloud, ptrs):
    assert ptrs.list(cloud.connection(), None) == []
    assert cloud.dns_calls == []


# -- shared zones --------------------------------------------------------------


def _delete_headers(cloud, zone):
    return [
        r.headers
        for r in cloud.mocker.request_history
        if r.method == 'DELETE' and r.path.endswith(f'/zones/{zone["id"]}')
    ]


def test_a_zone_shared_with_another_project_is_kept_with_its_records(cloud):
    # the reproduction: the zone was deleted with X-Designate-Delete-Shares,
    # and the record sets of the project it was shared with went along
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    zone = cloud.zone(a, 'a.example.')
    cloud.zone_share(zone, b)
    theirs = cloud.recordset(zone, b, 'www.a.example.')

    assert kept_and_refused(cloud, a, zone['id']) == (
        f'shared with project(s) {b}, whose record sets in it its delete '
        f'would take along'
    )
    assert cloud.exists('zones', zone['id'])
    assert cloud.exists('recordsets', theirs['id'])
    assert _delete_headers(cloud, zone) == []


def test_shares_are_asked_only_of_shared_zones_on_the_owners_behalf(
    cloud, zones
):
    a = scenarios.project(cloud, 'A')['id']
    shared = cloud.zone(a, 'shared.example.')
    cloud.zone_share(shared, 'p-b')
    cloud.zone_share(shared, 'p-c')
    cloud.zone(a, 'alone.example.')
    refs = {r.name: r for r in zones.list(cloud.connection(), a)}
    assert refs['shared.example.'].attrs['shared_with'] == ['p-b', 'p-c']
    assert 'shared_with' not in refs['alone.example.'].attrs
    assert [c for c in cloud.dns_calls if c[1].endswith('/shares')] == [
        ('GET', f'/v2/zones/{shared["id"]}/shares', a)
    ]
    assert zones.primary_step(refs['alone.example.']).is_delete


def test_an_unshared_zone_is_deleted_without_the_delete_shares_header(
    cloud, zones
):
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.')
    run_kind(cloud, zones, zones.list(cloud.connection(), a))
    [headers] = _delete_headers(cloud, zone)
    assert 'X-Designate-Delete-Shares' not in headers
    assert not cloud.exists('zones', zone['id'])


def test_delete_shared_deletes_a_shared_zone_and_says_so(cloud):
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.')
    cloud.zone_share(zone, 'p-b')
    zones = kinds_mod.build(delete_shared=True)[dns.Zone.name]
    refs = zones.list(cloud.connection(), a)
    assert zones.primary_step(refs[0]).is_delete

    [result] = run_kind(cloud, zones, refs).results.values()

    assert result.outcome == DONE
    [headers] = _delete_headers(cloud, zone)
    assert headers['X-Designate-Delete-Shares'] == 'true'
    assert not cloud.exists('zones', zone['id'])


def test_a_zone_shared_after_the_plan_is_refused_by_designate(cloud, zones):
    # planned unshared, shared meanwhile: no header, Designate refuses,
    # the zone and its shares stay
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.')
    refs = zones.list(cloud.connection(), a)
    cloud.zone_share(zone, 'p-b')
    [result] = run_kind(cloud, zones, refs).results.values()
    assert result.outcome == FAILED
    assert 'shared with other projects' in result.error
    assert cloud.exists('zones', zone['id'])


# -- record sets of the project in zones other projects share with it ------


def test_recordsets_in_another_projects_shared_zone_are_deleted(cloud):
    """Issue 29: B shares its zone with A, A creates record sets in it:
    they are A's (Designate's ``tenant_id``: A) though the zone is B's. A
    list of record sets on A's behalf (``GET /v2/recordsets``: central
    filters them by their own project) finds them; the cascade of A
    deletes them, and none of B's."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    zone = cloud.zone(b, 'b.example.')
    cloud.zone_share(zone, a)
    mine = cloud.recordset(zone, a, 'a.b.example.')
    theirs = cloud.recordset(zone, b, 'www.b.example.')
    pc, targets, plan = cascade_for(cloud, a)
    assert step_id('delete', 'dns.recordset', mine['id']) in plan.steps
    pc.execute(plan, targets)
    assert not cloud.exists('recordsets', mine['id'])
    assert cloud.exists('recordsets', theirs['id'])
    assert cloud.exists('zones', zone['id'])
    assert (
        'DELETE',
        f'/v2/zones/{zone["id"]}/recordsets/{mine["id"]}',
        a,
    ) in cloud.dns_calls


def test_recordsets_in_the_projects_own_zones_go_with_the_zone(cloud):
    # no step each: the zone's delete takes them along (one call, not N)
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.')
    cloud.recordset(zone, a, 'www.a.example.')
    kind = kinds_mod.build()['dns.recordset']
    assert kind.list(cloud.connection(), a) == []


def test_the_orphan_search_finds_recordsets_a_gone_project_left(cloud):
    b = scenarios.project(cloud, 'B')['id']
    zone = cloud.zone(b, 'b.example.')
    cloud.zone_share(zone, 'p-gone')
    left = cloud.recordset(zone, 'p-gone', 'x.b.example.')
    cloud.recordset(zone, b, 'www.b.example.')
    kind = kinds_mod.build()['dns.recordset']
    refs = kind.list(cloud.connection(), None)
    assert [(r.id, r.project_id) for r in refs] == [(left['id'], 'p-gone')]


def test_delete_shared_keeps_a_zone_shared_with_another_project_since(cloud):
    # --delete-shared takes along the record sets of the projects the plan
    # named; a project the zone was shared with after the plan was named
    # nowhere: its record sets must not go (Designate deletes every
    # record set of the zone with it)
    a = scenarios.project(cloud, 'A')['id']
    zone = cloud.zone(a, 'a.example.')
    cloud.zone_share(zone, 'p-b')
    zones = kinds_mod.build(delete_shared=True)[dns.Zone.name]
    refs = zones.list(cloud.connection(), a)
    cloud.zone_share(zone, 'p-c')
    theirs = cloud.recordset(zone, 'p-c', 'c.a.example.')
    [result] = run_kind(cloud, zones, refs).results.values()
    assert (result.outcome, result.error) == (
        KEPT,
        'shared since the plan with project(s) p-c, whose record sets in '
        'it its delete would take along',
    )
    assert cloud.exists('recordsets', theirs['id'])
    assert cloud.exists('zones', zone['id'])


def test_a_recordset_whose_zone_was_given_away_since_the_plan_is_kept(cloud):
    # central's transfer accept gives the zone's record sets, A's among
    # them, to the new owner (storage update_zone: tenant_id_changed):
    # each delete reads the record set again first (one GET)
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    c = scenarios.project(cloud, 'C')['id']
    zone = cloud.zone(b, 'b.example.')
    cloud.zone_share(zone, a)
    mine = cloud.recordset(zone, a, 'a.b.example.')
    kind = kinds_mod.build()['dns.recordset']
    refs = kind.list(cloud.connection(), a)
    assert [r.id for r in refs] == [mine['id']]
    assert cloud.accept_zone_transfer(cloud.offer_zone(zone, c)['id'], c)
    [result] = run_kind(cloud, kind, refs).results.values()
    assert (result.outcome, result.error) == (KEPT, f'owner is now {c}')
    assert cloud.exists('recordsets', mine['id'])
