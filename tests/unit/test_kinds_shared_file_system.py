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

"""Manila: shares with their snapshots and replicas, share groups and share
networks, in the order Manila accepts their deletes."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import STUCK
from osc_cascade.kinds import shared_file_system as manila
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.kinds import sdk_error
from tests.unit.fakes.run import cascade_for, run_kind


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


@pytest.fixture
def shares(cloud):
    """Project A's shares: one in a group on a share network with a
    snapshot and a share made from it, one replicated."""
    a = scenarios.project(cloud, 'A')['id']
    net = cloud.manila('share_networks', a)
    group = cloud.manila('share_groups', a, share_network_id=net['id'])
    share = cloud.share(
        a, 'files', share_network_id=net['id'], share_group_id=group['id']
    )
    snap = cloud.manila('share_snapshots', a, share_id=share['id'])
    clone = cloud.share(a, 'clone', snapshot_id=snap['id'])
    replicated = cloud.share(a, 'replicated', replication_type='dr')
    active = cloud.manila(
        'share_replicas',
        None,
        id=replicated['id'],
        share_id=replicated['id'],
        replica_state='active',
    )
    replica = cloud.manila(
        'share_replicas',
        None,
        share_id=replicated['id'],
        replica_state='in_sync',
    )
    return {
        'project': a,
        'network': net['id'],
        'group': group['id'],
        'share': share['id'],
        'snapshot': snap['id'],
        'clone': clone['id'],
        'replicated': replicated['id'],
        'active': active['id'],
        'replica': replica['id'],
    }


def test_each_kind_lists_the_projects_own_through_the_admin_filters(
    cloud, shares
):
    b = scenarios.project(cloud, 'B')['id']
    cloud.share(b, 'files')
    kinds = kinds_mod.build()
    conn = cloud.connection()
    found = {
        name: {r.id for r in kinds[name].list(conn, shares['project'])}
        for name in (
            manila.Share.name,
            manila.ShareSnapshot.name,
            manila.ShareNetwork.name,
            manila.ShareGroup.name,
        )
    }
    assert found == {
        manila.Share.name: {
            shares['share'],
            shares['clone'],
            shares['replicated'],
        },
        manila.ShareSnapshot.name: {shares['snapshot']},
        manila.ShareNetwork.name: {shares['network']},
        manila.ShareGroup.name: {shares['group']},
    }
    assert any(
        p.startswith('/v2/shares/detail')
        and 'all_tenants=1' in p
        and f'project_id={shares["project"]}' in p
        for _, p in cloud.requests
    )


def test_the_order_manila_needs(cloud, shares):
    _pc, _t, plan = cascade_for(cloud, shares['project'])
    d = {
        k: step_id('delete', kind, shares[k])
        for k, kind in (
            ('share', manila.Share.name),
            ('clone', manila.Share.name),
            ('replicated', manila.Share.name),
            ('snapshot', manila.ShareSnapshot.name),
            ('replica', manila.ShareReplica.name),
            ('network', manila.ShareNetwork.name),
            ('group', manila.ShareGroup.name),
        )
    }
    assert {
        (d['snapshot'], d['share']),
        (d['clone'], d['snapshot']),
        (d['replica'], d['replicated']),
        (d['share'], d['group']),
        (d['share'], d['network']),
        (d['group'], d['network']),
    } <= plan.edges
    # the active replica is the share itself
    replica = step_id('delete', manila.ShareReplica.name, shares['active'])
    assert replica not in plan.steps


def test_a_project_of_shares_is_emptied_in_one_round(cloud, shares):
    pc, targets, plan = cascade_for(cloud, shares['project'])
    pc.execute(plan, targets)
    assert len(pc.runs) == 1
    assert cloud.owned_by(shares['project']) == []


def test_a_share_delete_that_errors_is_stuck(cloud):
    # error_deleting: Manila refuses another delete (only from available,
    # error or inactive), so it is stuck, not retried, and says so
    a = scenarios.project(cloud, 'A')['id']
    cloud.share(a, 'files', fail_delete=True)
    kind = kinds_mod.build()[manila.Share.name]
    [result] = run_kind(
        cloud, kind, kind.list(cloud.connection(), a)
    ).results.values()
    assert result.outcome == STUCK
    assert result.error == (
        "is 'error_deleting': Manila deletes a share only when it is "
        'available, error or inactive; an admin can reset its state '
        '(openstack share set --status error) or use --force-stuck'
    )


def test_a_share_that_went_error_deleting_after_its_listing_is_stuck(cloud):
    # Manila answers its refusal (InvalidShare) 403, not 400 (seen on the
    # minicloud): the refused delete is read again and told stuck, not
    # taken for a missing permission
    a = scenarios.project(cloud, 'A')['id']
    share = cloud.share(a, 'files')
    kind = kinds_mod.build()[manila.Share.name]
    refs = kind.list(cloud.connection(), a)
    share['status'] = 'error_deleting'
    [result] = run_kind(cloud, kind, refs).results.values()
    assert result.outcome == STUCK, result.error
    assert "is 'error_deleting'" in result.error


def test_invalid_share_answers_are_in_use_other_400s_are_not():
    kind = manila.Share()
    # Manila's answer to a share with snapshots (InvalidShare: 403)
    assert kind.is_in_use(
        sdk_error(
            sdk_exc.ForbiddenException,
            403,
            'Invalid share: Share still has 1 dependent snapshots.',
        )
    )
    assert not kind.is_in_use(
        sdk_error(sdk_exc.ForbiddenException, 403, 'Policy does not allow')
    )
    assert kind.is_in_use(
        sdk_error(
            sdk_exc.BadRequestException,
            400,
            'Invalid share: Share still has 1 dependent snapshots.',
        )
    )
    assert kind.is_in_use(sdk_error(sdk_exc.ConflictException, 409, 'busy'))
    assert not kind.is_in_use(
        sdk_error(
            sdk_exc.BadRequestException, 400, 'Invalid input for field size'
        )
    )


def test_a_share_group_whose_delete_failed_is_in_error_and_fails(cloud):
    # manila/share/manager.py delete_share_group: a failed delete leaves
    # the group in 'error' (seen on the minicloud: ShareServerNotFound),
    # which is no 'error_deleting'; it was polled until the timeout
    a = scenarios.project(cloud, 'A')['id']
    cloud.manila('share_groups', a, name='group', fail_delete=True)
    kind = kinds_mod.build()[manila.ShareGroup.name]
    [result] = run_kind(
        cloud, kind, kind.list(cloud.connection(), a)
    ).results.values()
    assert result.outcome == 'failed'
    assert result.error == 'delete failed: status is error'


@pytest.mark.parametrize(
    'what', ['share', 'share group'], ids=['share', 'group']
)
def test_a_share_network_another_projects_share_is_on_keeps_the_project(
    cloud, shares, what
):
    """An admin may make a share of project B on A's share network (Manila
    looks a network up for an admin in every project; seen on the
    minicloud), and Manila then refuses the network's delete (409): A's
    cascade keeps the network in one line, and A, and changes nothing."""
    b = scenarios.project(cloud, 'B')['id']
    if what == 'share':
        theirs = cloud.share(b, 'theirs', share_network_id=shares['network'])
    else:
        theirs = cloud.manila(
            'share_groups', b, share_network_id=shares['network']
        )
    pc, targets, plan = cascade_for(cloud, shares['project'])
    keep = step_id('keep', manila.ShareNetwork.name, shares['network'])
    reason = plan.steps[keep].params['reason']
    assert f'a {what} of project {b} is on it' in reason
    assert '\n' not in reason
    with pytest.raises(CascadeError, match='never deleted while'):
        pc.execute(plan, targets)
    assert cloud.changes == []
    assert cloud.get(
        'shares' if what == 'share' else 'share_groups', theirs['id']
    )


def test_a_share_network_of_the_projects_own_shares_alone_goes(cloud, shares):
    _pc, _t, plan = cascade_for(cloud, shares['project'])
    network = manila.ShareNetwork.name
    assert step_id('delete', network, shares['network']) in plan.steps
    assert step_id('keep', network, shares['network']) not in plan.steps
