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

"""Manila on the minicloud (issue #31): api, scheduler and share on two
backends of Manila's DummyDriver (``tools/minicloud up --with manila``),
which hold share servers and replicate to each other; what the real
service decides, which ``osc_cascade.kinds.shared_file_system`` rests on.

* a project's share network, its shares (one with an access rule, one made
  from a snapshot, one in a share group, one with a replica), the
  snapshot, the group and the replica are made as the project's member
  would, are in the dry run, go with the cascade and are gone after it;
* a private share type the project may use stays, and only the project's
  access to it goes: another project's access to it is kept;
* a share network of the project that another project's share is on
  (an admin's: Manila lets it) is kept with its reason, and the project
  with it, until that share is gone;
* a share the project offered to another project (a share transfer, 2.77)
  has its offer withdrawn and goes, with its snapshot; a share whose offer
  the other project accepted is that project's, and stays;
* the project's own Manila quotas (the admin's) go: its quota set reads
  the defaults again.
"""

from __future__ import annotations

import pytest

from tests.functional import topology
from tests.functional.conftest import service_proxy
from tests.functional.topology import cascade, unique, wait_for

pytestmark = [pytest.mark.functional, pytest.mark.manila]

#: share groups and replicas left the experimental API in 2.55 and 2.56
MV = {'microversion': '2.56'}
#: share transfers came in 2.77
MV_TRANSFER = {'microversion': '2.77'}

admin_sfs = service_proxy('shared-file-system', 'Manila', 'shared_file_system')


def made(proxy, path: str, key: str, body: dict) -> dict:
    return proxy.post(path, json={key: body}, **MV).json()[key]


def status_of(proxy, path: str, key: str) -> str | None:
    found = proxy.get(path, raise_exc=False, **MV)
    if found.status_code == 404:
        return None
    return found.json()[key]['status']


def available(proxy, path: str, key: str, what: str, wanted='available'):
    def ready():
        status = status_of(proxy, path, key)
        assert status and 'error' not in status, f'{what}: {status}'
        return status == wanted

    wait_for(ready, timeout=180, interval=2, what=f'{what} {wanted}')


def share(sfs, name: str, network_id: str | None, **extra) -> dict:
    """A share, available; without a share network (``None``) on the
    backend without share servers (share type 'plain')."""
    body = {'name': name, 'share_proto': 'NFS', 'size': 1, **extra}
    if network_id is None:
        body.setdefault('share_type', 'plain')
    else:
        body['share_network_id'] = network_id
    found = made(sfs, '/shares', 'share', body)
    available(sfs, f'/shares/{found["id"]}', 'share', f'share {name}')
    return found


def snapshot(sfs, share_id: str) -> dict:
    """A snapshot of the share, available."""
    found = made(
        sfs,
        '/snapshots',
        'snapshot',
        {'share_id': share_id, 'name': unique('snap')},
    )
    available(sfs, f'/snapshots/{found["id"]}', 'snapshot', 'snapshot')
    return found


def a_project_of_every_kind(admin):
    """A project with a share network and, on it, a share with an access
    rule, its snapshot and a share made of it, a share group with a share,
    and a replicated share with a replica: (project, {kind: [ids]})."""
    project = topology.make_project(admin, unique('manila'))
    sfs = topology.scoped(admin, project).shared_file_system
    net = made(sfs, '/share-networks', 'share_network', {'name': unique('sn')})
    first = share(sfs, unique('share'), net['id'])
    sfs.post(
        f'/shares/{first["id"]}/action',
        json={
            'allow_access': {
                'access_type': 'ip',
                'access_to': '192.0.2.5',
                'access_level': 'rw',
            }
        },
        **MV,
    )
    snap = snapshot(sfs, first['id'])
    child = share(sfs, unique('from-snap'), net['id'], snapshot_id=snap['id'])
    group = made(
        sfs,
        '/share-groups',
        'share_group',
        {'name': unique('group'), 'share_network_id': net['id']},
    )
    available(sfs, f'/share-groups/{group["id"]}', 'share_group', 'group')
    grouped = share(
        sfs, unique('grouped'), net['id'], share_group_id=group['id']
    )
    replicated = share(
        sfs, unique('replicated'), net['id'], share_type='replicated'
    )
    replica = made(
        sfs,
        '/share-replicas',
        'share_replica',
        {'share_id': replicated['id']},
    )
    available(
        sfs,
        f'/share-replicas/{replica["id"]}',
        'share_replica',
        'replica',
    )
    return project, {
        'shared_file_system.share_network': [net['id']],
        'shared_file_system.share': [
            first['id'],
            child['id'],
            grouped['id'],
            replicated['id'],
        ],
        'shared_file_system.snapshot': [snap['id']],
        'shared_file_system.share_group': [group['id']],
        'shared_file_system.replica': [replica['id']],
    }


PATHS = {
    'shared_file_system.share_network': 'share-networks',
    'shared_file_system.share': 'shares',
    'shared_file_system.snapshot': 'snapshots',
    'shared_file_system.share_group': 'share-groups',
    'shared_file_system.replica': 'share-replicas',
}


def test_a_projects_shares_and_what_holds_them_go_with_it(
    admin, admin_sfs, cli
):
    project, made_ids = a_project_of_every_kind(admin)
    [first] = made_ids['shared_file_system.share'][:1]
    rules = admin_sfs.get(
        '/share-access-rules', params={'share_id': first}, **MV
    ).json()['access_list']
    assert [r['access_to'] for r in rules] == ['192.0.2.5']

    dry, run = cascade(cli, project.id)
    assert dry.code == 0, dry.stdout + dry.stderr
    planned = {(r['Kind'], r['ID']) for r in dry.json()}
    for kind, ids in made_ids.items():
        for id_ in ids:
            assert (kind, id_) in planned, (kind, id_, sorted(planned))
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(project.id) is None
    for kind, ids in made_ids.items():
        for id_ in ids:
            found = admin_sfs.get(
                f'/{PATHS[kind]}/{id_}', raise_exc=False, **MV
            )
            assert found.status_code == 404, (kind, id_, found.text)
    # the access rule went with its share
    gone = admin_sfs.get(
        '/share-access-rules',
        params={'share_id': first},
        raise_exc=False,
        **MV,
    )
    assert gone.status_code in (400, 404), gone.text


def test_a_private_share_type_stays_and_only_the_projects_access_goes(
    admin, admin_sfs, cli
):
    a = topology.make_project(admin, unique('manila-type'))
    b = topology.make_project(admin, unique('manila-type-other'))
    stype = made(
        admin_sfs,
        '/types',
        'share_type',
        {
            'name': unique('private'),
            'share_type_access:is_public': False,
            'extra_specs': {'driver_handles_share_servers': 'True'},
        },
    )
    try:
        for p in (a, b):
            admin_sfs.post(
                f'/types/{stype["id"]}/action',
                json={'addProjectAccess': {'project': p.id}},
                **MV,
            )
        dry, run = cascade(cli, a.id)
        assert dry.code == 0, dry.stdout + dry.stderr
        assert ('shared_file_system.type_access', stype['id']) in {
            (r['Kind'], r['ID']) for r in dry.json()
        } or any(
            r['Kind'] == 'shared_file_system.type_access'
            and stype['id'] in r['ID']
            for r in dry.json()
        ), dry.stdout
        assert run.code == 0, run.stdout + run.stderr
        members = admin_sfs.get(
            f'/types/{stype["id"]}/share_type_access', **MV
        ).json()['share_type_access']
        # the type stays, with the other project's access
        assert [m['project_id'] for m in members] == [b.id]
    finally:
        admin_sfs.delete(f'/types/{stype["id"]}', **MV)


def test_a_share_network_another_projects_share_is_on_keeps_the_project(
    admin, admin_sfs, cli
):
    """An admin working in project Q makes a share on project P's share
    network (Manila looks a share network up for an admin in every
    project), and Manila refuses the network's delete while the share is
    on it (409, "it has 1 share(s)"): P's cascade keeps the network with
    its one-line reason, and P, and changes nothing; once Q's share is
    gone, P's cascade deletes both."""
    p = topology.make_project(admin, unique('manila-net'))
    q = topology.make_project(admin, unique('manila-net-user'))
    p_sfs = topology.scoped(admin, p).shared_file_system
    net = made(
        p_sfs, '/share-networks', 'share_network', {'name': unique('sn')}
    )
    mine = share(p_sfs, unique('mine'), net['id'])
    theirs = share(
        topology.scoped(admin, q).shared_file_system,
        unique('theirs'),
        net['id'],
    )
    assert theirs['project_id'] == q.id
    refused = p_sfs.delete(
        f'/share-networks/{net["id"]}', raise_exc=False, **MV
    )
    assert refused.status_code == 409, refused.text

    dry, run = cascade(cli, p.id)
    out = run.stdout + run.stderr
    assert dry.code == 1, dry.stdout + dry.stderr
    assert run.code == 1, out
    assert f'a share of project {q.id} is on it' in out, out
    assert admin.identity.find_project(p.id) is not None
    for path, id_ in (
        ('share-networks', net['id']),
        ('shares', mine['id']),
        ('shares', theirs['id']),
    ):
        found = admin_sfs.get(f'/{path}/{id_}', raise_exc=False, **MV)
        assert found.status_code == 200, (path, id_, found.text)

    # Q's share gone, nothing else keeps P's network
    admin_sfs.delete(f'/shares/{theirs["id"]}', **MV)
    wait_for(
        lambda: (
            status_of(admin_sfs, f'/shares/{theirs["id"]}', 'share') is None
        ),
        timeout=180,
        interval=2,
        what="Q's share gone",
    )
    _dry, run = cascade(cli, p.id)
    assert run.code == 0, run.stdout + run.stderr
    assert admin.identity.find_project(p.id) is None
    gone = admin_sfs.get(f'/share-networks/{net["id"]}', raise_exc=False, **MV)
    assert gone.status_code == 404, gone.text


def test_a_projects_own_manila_quota_goes_with_it(admin, admin_sfs, cli):
    """The admin gives the project Manila quotas of its own. The dry run
    changes nothing; the cascade's drain freezes them (Manila answers
    ``/quota-sets`` from 2.7 on: asked at none, the 404 read as "no quota
    API", and the rows stayed), and ``--settle`` releases them with the
    project: its quota set reads Manila's defaults again (its rows
    gone)."""
    project = topology.make_project(admin, unique('manila-quota'))
    path = f'/quota-sets/{project.id}'
    defaults = admin_sfs.get(f'{path}/defaults', **MV).json()['quota_set']
    own = {'shares': defaults['shares'] + 7, 'gigabytes': 77}
    admin_sfs.put(path, json={'quota_set': own}, **MV)

    def quota_set():
        found = admin_sfs.get(path, **MV).json()['quota_set']
        found.pop('id', None)
        return found

    assert {k: quota_set()[k] for k in own} == own

    dry, run = cascade(cli, project.id, '--settle', '5s')
    assert dry.code == 0, dry.stdout + dry.stderr
    assert run.code == 0, run.stdout + run.stderr
    assert 'shared-file-system' not in run.stderr, run.stderr
    assert admin.identity.find_project(project.id) is None
    defaults.pop('id', None)
    assert quota_set() == defaults


def test_an_offered_share_is_withdrawn_and_goes_an_accepted_one_stays(
    admin, admin_sfs, cli
):
    """P offers two shares (Manila's share transfers: a share without a
    share network, then ``awaiting_transfer``, which Manila refuses to
    delete); Q accepts the second, which becomes Q's. P's dry run shows
    the open offer, its share and the share's snapshot, and not Q's
    share; the cascade withdraws the offer, deletes the share and its
    snapshot, and Q's share stays, available."""
    p = topology.make_project(admin, unique('manila-offer'))
    q = topology.make_project(admin, unique('manila-taker'))
    p_sfs = topology.scoped(admin, p).shared_file_system
    q_sfs = topology.scoped(admin, q).shared_file_system
    offered = share(p_sfs, unique('offered'), None)
    snap = snapshot(p_sfs, offered['id'])
    given = share(p_sfs, unique('given'), None)
    transfer, handed = (
        p_sfs.post(
            '/share-transfers',
            json={'transfer': {'share_id': s['id'], 'name': unique('t')}},
            **MV_TRANSFER,
        ).json()['transfer']
        for s in (offered, given)
    )
    assert transfer['source_project_id'] == p.id
    assert status_of(admin_sfs, f'/shares/{offered["id"]}', 'share') == (
        'awaiting_transfer'
    )
    refused = admin_sfs.delete(
        f'/shares/{offered["id"]}', raise_exc=False, **MV
    )
    # Manila: InvalidShare, answered 403
    assert refused.status_code == 403, refused.text
    q_sfs.post(
        f'/share-transfers/{handed["id"]}/accept',
        json={'accept': {'auth_key': handed['auth_key']}},
        **MV_TRANSFER,
    )
    theirs = admin_sfs.get(f'/shares/{given["id"]}', **MV).json()['share']
    assert theirs['project_id'] == q.id, theirs
    try:
        dry, run = cascade(cli, p.id)
        assert dry.code == 0, dry.stdout + dry.stderr
        planned = {(r['Kind'], r['ID']): r['Action'] for r in dry.json()}
        for key in (
            ('shared_file_system.share_transfer', transfer['id']),
            ('shared_file_system.share', offered['id']),
            ('shared_file_system.snapshot', snap['id']),
        ):
            assert planned.get(key) == 'delete', (key, dry.stdout)
        assert not [k for k in planned if given['id'] in k[1]], dry.stdout
        assert run.code == 0, run.stdout + run.stderr
        assert admin.identity.find_project(p.id) is None
        for path in (
            f'/share-transfers/{transfer["id"]}',
            f'/shares/{offered["id"]}',
            f'/snapshots/{snap["id"]}',
        ):
            found = admin_sfs.get(path, raise_exc=False, **MV_TRANSFER)
            assert found.status_code == 404, (path, found.text)
        kept = admin_sfs.get(f'/shares/{given["id"]}', **MV).json()['share']
        assert (kept['project_id'], kept['status']) == (q.id, 'available')
    finally:
        admin_sfs.delete(f'/shares/{given["id"]}', raise_exc=False, **MV)
