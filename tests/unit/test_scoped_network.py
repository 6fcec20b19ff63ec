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

"""Neutron through a token scoped to the project (the cascade without
admin), where listing security groups makes the project's ``default``
group (issue #29 item 10)."""

import pytest

from osc_cascade.kinds.network import core
from tests.unit import scenarios
from tests.unit.fakes.common import ADMIN_PROJECT
from tests.unit.fakes.run import scoped_cascade
from tests.unit.fakes.scoped import ScopedCloud

DOMAIN = 'dom-managed'


@pytest.fixture
def clouds():
    """RegionOne's cloud and RegionTwo's (its own Neutron)."""
    with ScopedCloud() as one:
        yield one, one.add_region('RegionTwo', ['network'])


@pytest.fixture
def world(clouds):
    """A project with a routed server and its default group in RegionOne,
    as Neutron makes them, nothing in RegionTwo, and its member alice."""
    cloud, _two = clouds
    project = scenarios.project(
        cloud, 'target', domain_id=DOMAIN, parent_id=DOMAIN
    )
    pid = project['id']
    alice = cloud.add_user('alice', DOMAIN)
    cloud.assign(alice, 'member', project=project)
    scenarios.security_group(cloud, pid, 'default')
    net, subnet = scenarios.network(cloud, pid)
    scenarios.server(cloud, pid, net=net, subnet=subnet)
    return {'pid': pid, 'alice': alice}


def groups_of(cloud, pid):
    return [g for g in cloud.all('security_groups') if g['project_id'] == pid]


def test_the_fake_neutron_makes_the_default_group_when_groups_are_listed(
    clouds, world
):
    """As Neutron's get_security_groups does: for the project the filter
    names, else the token's, if the caller may (an admin, or the project's
    own token); an admin's unfiltered list makes the admin's own."""
    cloud, two = clouds
    pid = world['pid']
    conn = cloud.connection_as(world['alice'], project_id=pid)
    list(conn.network.security_groups())
    assert [g['name'] for g in groups_of(two, pid)] == []  # RegionOne's
    list(conn.network.security_groups(project_id='someone-else'))
    assert groups_of(cloud, 'someone-else') == []
    list(cloud.connection().network.security_groups())
    assert [g['name'] for g in groups_of(cloud, ADMIN_PROJECT)] == ['default']
    before = len(groups_of(cloud, pid))
    cloud._remove('security_groups', groups_of(cloud, pid)[0]['id'])
    list(conn.network.security_group_rules())
    assert len(groups_of(cloud, pid)) == before


def test_the_cascade_without_admin_makes_no_default_group_where_none_was(
    clouds, world
):
    cloud, two = clouds
    pid = world['pid']
    wf = scoped_cascade(
        cloud.connection_as(world['alice'], project_id=pid),
        keep_project=True,
    )
    targets = wf.resolve(['target'])
    wf.execute(wf.plan(targets), targets)
    assert two.owned_by(pid) == []
    assert not [p for _m, p in two.requests if '/security-groups' in p]
    # RegionOne's stays (admins alone delete it), as before
    assert [g['name'] for g in groups_of(cloud, pid)] == ['default']


def test_through_the_projects_token_groups_are_listed_where_it_has_some(
    clouds, world
):
    cloud, _two = clouds
    pid = world['pid']
    kind = core.SecurityGroup(scoped=True)
    scenarios.security_group(cloud, pid, 'web')
    conn = cloud.connection_as(world['alice'], project_id=pid)
    assert {r.name for r in kind.list(conn, pid)} == {'default', 'web'}
    # a project with no group: no list, so no default group made
    bare = scenarios.project(cloud, 'bare', domain_id=DOMAIN)
    cloud.assign(world['alice'], 'member', project=bare)
    conn = cloud.connection_as(world['alice'], project_id=bare['id'])
    cloud.requests.clear()
    assert kind.list(conn, bare['id']) == []
    assert groups_of(cloud, bare['id']) == []
    assert [p for _m, p in cloud.requests if p.startswith('/v2.0')] == [
        f'/v2.0/quotas/{bare["id"]}/details'
    ]
