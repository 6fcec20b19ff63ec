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

"""Designate on the minicloud (issue #31): zones that reach ACTIVE on a
real named (Debian's bind9, Designate's bind9 backend), and what the real
service decides, which ``osc_cascade.kinds.dns`` rests on.

* a zone and its record sets are served by named, and the cascade takes
  them, with the project's pending transfer request, out of named too;
* an admin's list is its own project's unless it says on whose behalf
  (``X-Auth-Sudo-Project-ID``) or for all (``X-Auth-All-Projects``); a
  ``project_id`` query filter is refused (400), not ignored;
* a member's cascade (``--keep-project``, a token scoped to its project,
  no admin) takes its project's zone, the zone's offer and its record set
  in another project's zone shared with it, as the project: Designate
  refuses a token without admin its sudo header (403, policy
  ``use_sudo``), which every dns kind once sent;
* a zone shared with another project, which holds a record set of that
  project, keeps its project (the cascade exits 1 and changes nothing); the
  other project's cascade takes its record set out of the zone and leaves
  the zone; with ``--delete-shared`` the zone goes and takes the other
  project's record sets with it.
"""

from __future__ import annotations

import json
import os

import dns.message
import dns.query
import dns.rcode
import pytest

from tests.functional import topology
from tests.functional.conftest import needs_service, service_proxy
from tests.functional.members import domain_member
from tests.functional.topology import cascade, unique, wait_for

pytestmark = [pytest.mark.functional, pytest.mark.designate]

ALL = {'X-Auth-All-Projects': 'True'}
#: how long a user waits for Designate's worker to bring a change to named
#: (PENDING to ACTIVE, or gone): seconds when idle, minutes on the shared
#: two cores under load, where two tests met a zone still PENDING
SETTLE = 600


admin_dns = service_proxy('dns', 'Designate', 'dns')


@pytest.fixture(scope='module')
def named():
    """(host, port) of the pool's named: the minicloud's port base + 53."""
    base = int(os.environ.get('MINICLOUD_PORT_BASE', '28000'))
    return '127.0.0.1', base + 53


def answer(named, name: str):
    """named's answer to an A query: (rcode, addresses)."""
    reply = dns.query.udp(
        dns.message.make_query(name, 'A'), named[0], port=named[1], timeout=3
    )
    found = [item.address for rrset in reply.answer for item in rrset.items]
    return reply.rcode(), found


def zone_name() -> str:
    return unique('z').replace('_', '-').lower() + '.test.'


def settled(get, what: str):
    """Wait, as a user would, for ``get()``'s status to leave PENDING for
    ACTIVE (up to SETTLE); ERROR fails at once."""

    def check():
        status = get()['status']
        if status == 'ERROR':
            raise AssertionError(f'{what} went to ERROR')
        return status == 'ACTIVE'

    wait_for(check, timeout=SETTLE, interval=2, what=f'{what} ACTIVE')


def zone_settled(conn, zone_id: str, what: str = 'the zone'):
    settled(lambda: conn.dns.get(f'/zones/{zone_id}').json(), what)


def recordset_settled(conn, zone_id: str, rs_id: str, what: str):
    path = f'/zones/{zone_id}/recordsets/{rs_id}'
    settled(lambda: conn.dns.get(path).json(), what)
    # a record set's change makes its zone PENDING too (a new serial)
    zone_settled(conn, zone_id)


def active_zone(conn, name: str, email='admin@minicloud.test'):
    """A zone of the connection's project, ACTIVE on named, and a record
    set www in it, ACTIVE too."""
    zone = conn.dns.create_zone(name=name, email=email, ttl=300)
    zone_settled(conn, zone.id, f'zone {name}')
    rs = conn.dns.create_recordset(
        zone, name='www.' + name, type='A', records=['192.0.2.10']
    )
    recordset_settled(conn, zone.id, rs.id, f'record set www.{name}')
    return zone, rs


def share(conn, zone_id: str, target: str) -> None:
    conn.dns.post(
        f'/zones/{zone_id}/shares', json={'target_project_id': target}
    )


def shared_zone(admin):
    """Project A's ACTIVE zone, shared with project B, which has a record
    set in it: (a, b, A's connection, the zone, B's record set)."""
    a = topology.make_project(admin, unique('dns-owner'))
    b = topology.make_project(admin, unique('dns-sharer'))
    a_conn, b_conn = topology.scoped(admin, a), topology.scoped(admin, b)
    name = zone_name()
    zone, _rs = active_zone(a_conn, name)
    share(a_conn, zone.id, b.id)
    theirs = b_conn.dns.post(
        f'/zones/{zone.id}/recordsets',
        json={'name': 'b.' + name, 'type': 'A', 'records': ['192.0.2.20']},
    ).json()
    # B's record set makes A's zone PENDING until named has it
    recordset_settled(b_conn, zone.id, theirs['id'], f'record set b.{name}')
    return a, b, a_conn, zone, theirs


def status(proxy, method: str, path: str, **kw) -> int:
    return proxy.request(path, method, raise_exc=False, **kw).status_code


def test_a_served_zone_goes_with_its_project_and_its_offer(
    admin, admin_dns, named, cli
):
    a = topology.make_project(admin, unique('dns-cascade'))
    b = topology.make_project(admin, unique('dns-taker'))
    conn = topology.scoped(admin, a)
    name = zone_name()
    zone, rs = active_zone(conn, name)
    assert answer(named, 'www.' + name) == (dns.rcode.NOERROR, ['192.0.2.10'])
    offer = conn.dns.post(
        f'/zones/{zone.id}/tasks/transfer_requests',
        json={'target_project_id': b.id},
    ).json()

    dry, run = cascade(cli, a.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert ('dns.zone', zone.id) in planned
    assert ('dns.zone_transfer_request', offer['id']) in planned
    # its record sets go with it: no step each
    assert ('dns.recordset', rs.id) not in planned
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(a.id) is None
    assert status(admin_dns, 'GET', f'/zones/{zone.id}', headers=ALL) == 404
    # and named no longer serves it (the worker's delzone over rndc)
    wait_for(
        lambda: answer(named, 'www.' + name)[0] != dns.rcode.NOERROR,
        timeout=SETTLE,
        what=f'named stops serving {name}',
    )


def test_an_admins_project_filter_is_refused_and_sudo_is_the_way(
    admin, admin_dns
):
    a = topology.make_project(admin, unique('dns-filter'))
    conn = topology.scoped(admin, a)
    name = zone_name()
    zone = conn.dns.create_zone(name=name, email='admin@minicloud.test')
    try:
        own = admin_dns.get('/zones').json()['zones']
        assert zone.id not in {z['id'] for z in own}
        refused = admin_dns.get(
            '/zones', params={'project_id': a.id}, raise_exc=False
        )
        assert refused.status_code == 400
        assert 'Invalid filters project_id' in refused.text
        sudo = admin_dns.get(
            '/zones', headers={'X-Auth-Sudo-Project-ID': a.id}
        ).json()['zones']
        assert [z['id'] for z in sudo] == [zone.id]
        every = admin_dns.get(
            '/zones', params={'name': name}, headers=ALL
        ).json()['zones']
        assert [(z['id'], z['project_id']) for z in every] == [(zone.id, a.id)]
    finally:
        conn.dns.delete_zone(zone.id)


def test_a_shared_zone_keeps_its_project_and_the_other_takes_its_records(
    admin, admin_dns, cli
):
    a, b, a_conn, zone, theirs = shared_zone(admin)
    # Designate's own refusals: a shared zone's delete, and an unshare
    # while the other project has record sets in it
    refused = a_conn.dns.delete(f'/zones/{zone.id}', raise_exc=False)
    assert refused.status_code == 400 and 'zone_is_shared' in refused.text
    [share_id] = [
        s['id']
        for s in a_conn.dns.get(f'/zones/{zone.id}/shares').json()[
            'shared_zones'
        ]
    ]
    unshare = f'/zones/{zone.id}/shares/{share_id}'
    assert status(a_conn.dns, 'DELETE', unshare) == 400

    dry, run = cascade(cli, a.id)
    assert dry.code == 1, dry.stdout + dry.stderr
    assert run.code == 1, run.stdout + run.stderr
    assert f'shared with project(s) {b.id}' in run.stdout + run.stderr
    assert admin.identity.find_project(a.id) is not None
    assert a_conn.dns.get_zone(zone.id).status == 'ACTIVE'

    # B's cascade takes its record set out of A's zone, as B
    dry, run = cascade(cli, b.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    assert ('dns.recordset', theirs['id']) in {
        (r['Kind'], r['ID']) for r in dry.json()
    }
    assert run.code == 0, run.stdout + run.stderr
    path = f'/zones/{zone.id}/recordsets/{theirs["id"]}'
    assert status(admin_dns, 'GET', path, headers=ALL) == 404
    # the zone ACTIVE again (its serial changed)
    zone_settled(a_conn, zone.id)
    # nothing of B's left in the zone: its owner may unshare it now
    assert status(a_conn.dns, 'DELETE', unshare) == 204
    dry, run = cascade(cli, a.id)
    assert run.code == 0, run.stdout + run.stderr
    assert status(admin_dns, 'GET', f'/zones/{zone.id}', headers=ALL) == 404


def test_delete_shared_takes_the_other_projects_records_along(
    admin, admin_dns, cli
):
    a, b, _a_conn, zone, theirs = shared_zone(admin)
    dry, run = cascade(cli, a.id, '--delete-shared')
    assert dry.code == 0, dry.stdout + dry.stderr
    assert run.code == 0, run.stdout + run.stderr
    assert status(admin_dns, 'GET', f'/zones/{zone.id}', headers=ALL) == 404
    # the shared zone's delete took B's record set with it
    path = f'/zones/{zone.id}/recordsets/{theirs["id"]}'
    assert status(admin_dns, 'GET', path, headers=ALL) == 404
    listed = admin_dns.get(
        '/recordsets', headers={'X-Auth-Sudo-Project-ID': b.id}
    ).json()['recordsets']
    assert theirs['id'] not in {r['id'] for r in listed}
    assert admin.identity.find_project(b.id) is not None


def ptr_records(admin_dns, address: str) -> list[dict]:
    """Every project's PTR record sets named after the address."""
    name = '.'.join(reversed(address.split('.'))) + '.in-addr.arpa.'
    return admin_dns.get(
        '/recordsets', params={'name': name, 'type': 'PTR'}, headers=ALL
    ).json()['recordsets']


def test_a_floating_ips_ptr_record_is_unset_before_it_goes(
    admin, admin_dns, cli
):
    # without Neutron, Designate has no floating IPs
    needs_service(admin, 'network', 'Neutron')
    a = topology.make_project(admin, unique('dns-ptr'))
    conn = topology.scoped(admin, a)
    fip = conn.network.create_ip(
        floating_network_id=topology.public_network(admin).id
    )
    region = 'RegionOne'
    ptr = f'/reverse/floatingips/{region}:{fip.id}'
    name = zone_name()
    conn.dns.patch(ptr, json={'ptrdname': name, 'description': 'minicloud'})
    settled(lambda: conn.dns.get(ptr).json(), 'PTR record')
    [record] = ptr_records(admin_dns, fip.floating_ip_address)
    assert record['records'] == [name]
    # the record set is the project's, in a reverse zone it cannot see
    # (its managed project's): a delete of it, on the project's behalf,
    # answers 404 zone_not_found
    assert record['project_id'] == a.id
    zone = admin_dns.get(f'/zones/{record["zone_id"]}', headers=ALL).json()
    assert zone['project_id'] != a.id
    path = f'/zones/{record["zone_id"]}/recordsets/{record["id"]}'
    refused = admin_dns.delete(
        path, headers={'X-Auth-Sudo-Project-ID': a.id}, raise_exc=False
    )
    assert refused.status_code == 404 and 'zone_not_found' in refused.text

    dry, run = cascade(cli, a.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    assert ('dns.floating_ip_ptr', f'{region}:{fip.id}') in planned
    # planned once: as the PTR's unset, not as a record set of the project
    assert ('dns.recordset', record['id']) not in planned
    assert run.code == 0, run.stdout + run.stderr
    assert admin.network.find_ip(fip.id) is None
    wait_for(
        lambda: not ptr_records(admin_dns, fip.floating_ip_address),
        timeout=SETTLE,
        what='the PTR record gone from the reverse zone',
    )
    # the reverse zone is Designate's managed project's, which no Keystone
    # project is: no orphan (nor its SOA and NS, whose project is the one
    # that set its first PTR, maybe long gone)
    orphans = cli('orphan', 'list', '--service', 'dns', '-f', 'json')
    assert orphans.code == 0, orphans.stdout + orphans.stderr
    assert record['zone_id'] not in {r['ID'] for r in orphans.json()}
    assert record['zone_id'] not in orphans.stdout


def test_a_members_cascade_takes_its_zone_offer_and_records_as_the_project(
    admin, admin_dns
):
    member = domain_member(admin, 'dns-member')
    project = member.project
    conn = member.connection()
    other = topology.make_project(admin, unique('dns-neighbour'))
    other_conn = topology.scoped(admin, other)
    name = zone_name()
    zone, _rs = active_zone(conn, name)
    offer = conn.dns.post(
        f'/zones/{zone.id}/tasks/transfer_requests',
        json={'target_project_id': other.id},
    ).json()
    # the neighbour's zone, shared with the project, with a record set
    # of each
    their_name = zone_name()
    theirs, their_rs = active_zone(other_conn, their_name)
    share(other_conn, theirs.id, project.id)
    mine = conn.dns.post(
        f'/zones/{theirs.id}/recordsets',
        json={
            'name': 'm.' + their_name,
            'type': 'A',
            'records': ['192.0.2.30'],
        },
    ).json()
    recordset_settled(
        conn, theirs.id, mine['id'], f'record set m.{their_name}'
    )
    try:
        # the token may not act for another project, even its own
        assert (
            status(
                conn.dns,
                'GET',
                '/zones',
                headers={'X-Auth-Sudo-Project-ID': project.id},
            )
            == 403
        )
        dry = member.run(
            'project',
            'delete',
            '--cascade',
            '--keep-project',
            '--dry-run',
            project.id,
            '-f',
            'json',
        )
        assert dry.returncode == 0, dry.stdout + dry.stderr
        planned = {(r['Kind'], r['ID']) for r in json.loads(dry.stdout)}
        assert {
            ('dns.zone', zone.id),
            ('dns.zone_transfer_request', offer['id']),
            ('dns.recordset', mine['id']),
        } <= planned
        assert ('dns.zone', theirs.id) not in planned
        assert ('dns.recordset', their_rs.id) not in planned

        run = member.run(
            'project',
            'delete',
            '--cascade',
            '--keep-project',
            '--yes',
            project.id,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert admin.identity.get_project(project.id).is_enabled
        assert (
            status(admin_dns, 'GET', f'/zones/{zone.id}', headers=ALL) == 404
        )
        offers = admin_dns.get(
            '/zones/tasks/transfer_requests', headers=ALL
        ).json()['transfer_requests']
        assert offer['id'] not in {t['id'] for t in offers}
        path = f'/zones/{theirs.id}/recordsets/{mine["id"]}'
        assert status(admin_dns, 'GET', path, headers=ALL) == 404
        # the neighbour's zone and record set stay
        zone_settled(other_conn, theirs.id, f'zone {their_name}')
        path = f'/zones/{theirs.id}/recordsets/{their_rs.id}'
        assert status(other_conn.dns, 'GET', path) == 200
    finally:
        # nothing of the project's left in it: its owner unshares it, so
        # the module's clean-up may cascade the neighbour
        for s in other_conn.dns.get(f'/zones/{theirs.id}/shares').json()[
            'shared_zones'
        ]:
            other_conn.dns.delete(
                f'/zones/{theirs.id}/shares/{s["id"]}', raise_exc=False
            )
        admin.identity.delete_user(member.user.id)
