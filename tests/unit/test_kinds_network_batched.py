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

"""Neutron's re-reads before a delete, made at the same moment by the
executor's threads, are one listing by id (api.batched); what the listing
does not hold, or a listing refused, is read alone as before: the same
outcomes (gone, kept, the error)."""

import threading

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade.api import batched
from osc_cascade.engine.errors import Kept
from osc_cascade.kinds.network import common, core, remote_group
from tests.unit import scenarios
from tests.unit.test_api_batched import until, waiting


def port_refs(cloud, conn, pid, count):
    net, subnet = scenarios.network(cloud, pid)
    for i in range(count):
        scenarios.port(cloud, pid, net, subnet, f'p{i}')
    return [r for r in core.Port().list(conn, pid) if r.name.startswith('p')]


def reads(cloud, since):
    """The GETs of ports since ``since`` requests: their paths."""
    return [
        r.path_url.split('/v2.0')[-1]
        for r in cloud.mocker.request_history[since:]
        if r.method == 'GET' and '/ports' in r.path_url
    ]


def held_first_listing(monkeypatch):
    """neutron_items with its first call held until the event is set."""
    gate, calls = threading.Event(), []
    original = common.neutron_items

    def neutron_items(conn, path, key, project_id=None, **filters):
        calls.append(filters)
        if len(calls) == 1:
            assert gate.wait(10)
        return original(conn, path, key, project_id, **filters)

    monkeypatch.setattr(common, 'neutron_items', neutron_items)
    return gate, calls


def test_rechecks_of_the_same_moment_are_one_listing(
    cloud, conn, pid, monkeypatch
):
    monkeypatch.setattr(batched, 'UNDER_WAY', 1)
    refs = port_refs(cloud, conn, pid, 5)
    gate, calls = held_first_listing(monkeypatch)
    kind = core.Port()
    since = len(cloud.mocker.request_history)
    errors = []

    def recheck(ref):
        try:
            kind.recheck(conn, ref)
        except Exception as exc:  # the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=recheck, args=(r,)) for r in refs]
    threads[0].start()
    until(lambda: calls)
    for t in threads[1:]:
        t.start()
    waiting(batched.batches(conn.network, '/ports', 'id'), 4)
    gate.set()
    for t in threads:
        t.join(10)
    assert errors == []
    first, rest = (
        sorted(r.id for r in refs[:1]),
        sorted(r.id for r in refs[1:]),
    )
    assert [c['id'] for c in calls] == [first, rest]
    # two listings, no GET of one port
    assert len(reads(cloud, since)) == 2
    assert all(path.startswith('/ports?') for path in reads(cloud, since))


def test_a_port_given_away_is_kept_as_when_read_alone(cloud, conn, pid):
    [ref] = port_refs(cloud, conn, pid, 1)
    other = scenarios.project(cloud, 'B')['id']
    cloud.get('ports', ref.id)['project_id'] = other
    cloud.get('ports', ref.id)['tenant_id'] = other
    with pytest.raises(Kept, match=f'owner is now {other}'):
        core.Port().recheck(conn, ref)


def test_a_port_the_listing_does_not_hold_is_read_alone(cloud, conn, pid):
    """Gone is said only of the service's own 404: a listing might have
    been cut short."""
    [ref] = port_refs(cloud, conn, pid, 1)
    cloud.db['ports'].pop(ref.id)
    since = len(cloud.mocker.request_history)
    with pytest.raises(sdk_exc.NotFoundException):
        core.Port().recheck(conn, ref)
    assert reads(cloud, since) == [f'/ports?id={ref.id}', f'/ports/{ref.id}']


def test_a_refused_listing_is_read_alone_and_its_error_raised(
    cloud, conn, pid
):
    [ref] = port_refs(cloud, conn, pid, 1)
    cloud.forbidden.add('/ports/' + ref.id)
    since = len(cloud.mocker.request_history)
    with pytest.raises(sdk_exc.ForbiddenException):
        core.Port().recheck(conn, ref)
    assert reads(cloud, since) == [f'/ports?id={ref.id}', f'/ports/{ref.id}']


def test_a_groups_rules_are_read_by_remote_group(cloud, conn, pid):
    """Another project's rule naming the group keeps it, read through the
    rules listed by remote group (the groups of the moment at once)."""
    group = scenarios.security_group(cloud, pid, 'web')
    other = scenarios.project(cloud, 'B')['id']
    theirs = scenarios.security_group(cloud, other, 'db', rules_to=[group])
    rules = remote_group.foreign_rules_now(conn, _ref(conn, pid, group))
    assert [project for _rule, project in rules] == [other]
    assert theirs['id'] != group['id']


def _ref(conn, pid, group):
    [ref] = [
        r for r in core.SecurityGroup().list(conn, pid) if r.id == group['id']
    ]
    return ref
