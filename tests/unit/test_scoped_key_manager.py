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

"""Barbican through a token scoped to the project (the cascade without
cloud admin, ``workflows.scoped``): Barbican lists the token's project's
secrets, containers and orders, which an admin's list never shows, so
this cascade deletes them as the project; what another service uses, or
another user keeps private, stays (``fakes.key_manager``)."""

import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.kinds import key_manager
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
    """Project target with a secret, a container holding it, an order and
    the secret it made; project other with a secret; target's member
    alice."""
    target = scenarios.project(
        cloud, 'target', domain_id=DOMAIN, parent_id=DOMAIN
    )
    other = scenarios.project(cloud, 'other', domain_id=DOMAIN)
    pid = target['id']
    alice = cloud.add_user('alice', DOMAIN)
    cloud.assign(alice, 'member', project=target)
    secret = cloud.barbican('secrets', pid, 'one')
    ordered = cloud.barbican('secrets', pid, 'ordered')
    container = cloud.barbican(
        'containers',
        pid,
        'holder',
        secret_refs=[{'name': 'one', 'secret_ref': secret['secret_ref']}],
    )
    order = cloud.barbican(
        'orders', pid, '', type='key', secret_ref=ordered['secret_ref']
    )
    theirs = cloud.barbican('secrets', other['id'], 'theirs')
    return {
        'pid': pid,
        'alice': alice,
        'secret': secret,
        'ordered': ordered,
        'container': container,
        'order': order,
        'theirs': theirs,
    }


def member_cascade(cloud, world):
    pid = world['pid']
    wf = scoped_cascade(
        cloud.connection_as(world['alice'], project_id=pid),
        keep_project=True,
    )
    targets = wf.resolve(['target'])
    plan = wf.plan(targets)
    return plan, wf.execute(plan, targets)


def barbican_deletes(cloud):
    return [
        p
        for m, p in cloud.changes
        if m == 'DELETE' and '/v1/' in p and 'quotas' not in p
    ]


def test_a_members_cascade_deletes_its_projects_secrets_containers_orders(
    cloud, world
):
    plan, _outcome = member_cascade(cloud, world)

    assert not [n for n in plan.notes if 'key_manager' in n]
    for coll, item in (
        ('secrets', world['secret']),
        ('secrets', world['ordered']),
        ('containers', world['container']),
        ('orders', world['order']),
    ):
        assert not cloud.exists(coll, item['id']), (coll, item['name'])
    # another project's stays, and no list named a project
    assert cloud.exists('secrets', world['theirs']['id'])
    assert not [
        p
        for _m, p in cloud.requests
        if '/v1/' in p and ('project_id' in p or 'all_projects' in p)
    ]


def test_every_page_of_the_projects_secrets_is_read(cloud, world):
    cloud.item_page = 2
    for n in range(5):
        cloud.barbican('secrets', world['pid'], f'more-{n}')
    conn = cloud.connection_as(world['alice'], project_id=world['pid'])
    kind = kinds_mod.build(scoped=True)[key_manager.Secret.name]

    assert len(kind.list(conn, world['pid'])) == 7


def test_a_secret_another_service_uses_is_refused_and_stays(cloud, world):
    """From microversion 1.2 Barbican refuses it (409); before, its delete
    drops the consumer without a word."""
    world['secret']['consumers'] = [
        {'service': 'image', 'resource_type': 'image', 'resource_id': 'i1'}
    ]
    with pytest.raises(CascadeError) as exc:
        member_cascade(cloud, world)

    assert 'Secret has consumers' in str(exc.value)
    assert cloud.exists('secrets', world['secret']['id'])
    assert not cloud.exists('secrets', world['ordered']['id'])


def test_a_container_another_service_uses_is_kept_with_its_reason(
    cloud, world
):
    world['container']['consumers'] = [
        {'name': 'lb', 'URL': 'https://lb.test/v2/loadbalancers/lb1'}
    ]
    with pytest.raises(CascadeError) as exc:
        member_cascade(cloud, world)

    # kept, so nothing of the project is deleted
    assert 'Nothing was changed' in str(exc.value)
    assert (
        f'keep key_manager.container holder ({world["container"]["id"]}) '
        'in RegionOne: used by https://lb.test/v2/loadbalancers/lb1'
    ) in str(exc.value)
    assert cloud.exists('secrets', world['secret']['id'])
    assert cloud.exists('containers', world['container']['id'])
    assert f'/v1/containers/{world["container"]["id"]}' not in (
        barbican_deletes(cloud)
    )


def test_a_secret_private_to_another_user_is_refused_and_stays(cloud, world):
    world['secret'].update(private=True, creator_id='someone-else')
    with pytest.raises(CascadeError) as exc:
        member_cascade(cloud, world)

    assert '403' in str(exc.value)
    assert cloud.exists('secrets', world['secret']['id'])


def test_an_admins_cascade_still_notes_them_and_lists_none(cloud, world):
    kind = kinds_mod.build()[key_manager.Secret.name]

    assert kind.unlisted == key_manager.UNREACHABLE
    assert kind.list(cloud.connection(), world['pid']) == []
    assert not [p for _m, p in cloud.requests if '/v1/secrets' in p]
