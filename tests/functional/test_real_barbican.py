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

"""Barbican on the minicloud (issue #31): what the real service decides,
which the kinds of ``osc_cascade.kinds.key_manager`` rest on.

* an admin's list of secrets, containers and orders is its own project's,
  whatever project filter it names (``all_projects`` and ``project_id`` are
  ignored; the container list fails with a 500 on ``project_id``): the
  cascade cannot list another project's, so its kinds are noted as beyond
  reach;
* an admin reads and deletes a secret whose ID it knows, but neither reads
  a container nor an order of another project;
* a secret with a consumer refuses its delete from microversion 1.2 on,
  and is deleted without a word before it;
* a container holds only its own project's secrets, even those whose ACL
  lets its user read them;
* a member's cascade (``--keep-project``, a token scoped to its project,
  no admin) lists and deletes its project's secrets, containers and
  orders, and another project's stay; a container with a consumer is
  kept (the run changes nothing and exits 1) until the consumer goes;
* the cascade notes the three kinds and leaves a secret in Barbican after
  the project is gone; it freezes the project's Barbican quota at 0 (as
  every service's, until the token cache window is over), and a drain's
  restore puts back the project's own values, and only those.

Secrets are created as a project's member would (raw JSON through the
key-manager proxy: the SDK's secret ``id`` is its whole href).
"""

from __future__ import annotations

import contextlib
import json

import openstack
import pytest

from tests.functional import topology
from tests.functional.conftest import service_proxy
from tests.functional.members import domain_member
from tests.functional.topology import unique

pytestmark = pytest.mark.functional

#: the microversion from which a secret with consumers refuses its delete
CONSUMERS_REFUSE = {'OpenStack-API-Version': 'key-manager 1.2'}


admin_km = service_proxy('key-manager', 'Barbican', 'key_manager')


def uuid_of(ref: str) -> str:
    return ref.rstrip('/').rsplit('/', 1)[1]


def make_secret(km, name: str) -> str:
    body = {
        'name': name,
        'payload': 'minicloud',
        'payload_content_type': 'text/plain',
    }
    return uuid_of(km.post('/secrets', json=body).json()['secret_ref'])


def make_container(km, name: str, secret_id: str, base: str) -> str:
    body = {
        'type': 'generic',
        'name': name,
        'secret_refs': [
            {'name': 'one', 'secret_ref': f'{base}/secrets/{secret_id}'}
        ],
    }
    return uuid_of(km.post('/containers', json=body).json()['container_ref'])


def make_order(km, name: str) -> tuple[str, str]:
    """An order for an AES key, and the secret it made: without a worker
    the API process carries it out at once (ACTIVE)."""
    body = {
        'type': 'key',
        'meta': {
            'name': name,
            'algorithm': 'aes',
            'bit_length': 256,
            'mode': 'cbc',
            'payload_content_type': 'application/octet-stream',
        },
    }
    order = uuid_of(km.post('/orders', json=body).json()['order_ref'])
    shown = km.get(f'/orders/{order}').json()
    assert shown['status'] == 'ACTIVE', shown
    return order, uuid_of(shown['secret_ref'])


def listed(km, path: str, key: str, **query) -> set[str]:
    answer = km.get(path, params={'limit': 100, **query}, raise_exc=False)
    if answer.status_code == 500 and 'project_id' in query:
        # Barbican 23's container list takes the filter for its own
        # positional project_id argument: a TypeError, a 500, no list
        assert path == '/containers', answer.text
        return set()
    assert answer.status_code == 200, answer.text
    return {uuid_of(item[key[:-1] + '_ref']) for item in answer.json()[key]}


def status(km, method: str, path: str, **kw) -> int:
    return km.request(path, method, raise_exc=False, **kw).status_code


def base_of(km) -> str:
    return km.get_endpoint().rstrip('/')


@contextlib.contextmanager
def three_kinds(admin, prefix):
    """A project's key-manager proxy and the IDs of a secret, a container
    holding it, an order and the secret the order made; all deleted after,
    as the project."""
    a = topology.make_project(admin, unique(prefix))
    km = topology.scoped(admin, a).key_manager
    secret = make_secret(km, 'one')
    container = make_container(km, 'holder', secret, base_of(km))
    order, ordered = make_order(km, 'key')
    try:
        yield a, km, secret, container, order, ordered
    finally:
        km.delete(f'/orders/{order}')
        km.delete(f'/containers/{container}')
        for s in (secret, ordered):
            km.delete(f'/secrets/{s}', raise_exc=False)


def test_an_admins_list_is_its_own_projects_whatever_the_filter(
    admin, admin_km
):
    with three_kinds(admin, 'barbican-list') as made:
        a, km, secret, container, order, ordered = made
        ours = {
            ('/secrets', 'secrets'): {secret, ordered},
            ('/containers', 'containers'): {container},
            ('/orders', 'orders'): {order},
        }
        for (path, key), ids in ours.items():
            # the project's own token lists them
            assert ids <= listed(km, path, key)
            for query in ({}, {'project_id': a.id}, {'all_projects': True}):
                assert not ids & listed(admin_km, path, key, **query), (
                    path,
                    query,
                )


def test_an_admin_deletes_a_secret_by_id_but_reads_no_container_or_order(
    admin, admin_km
):
    with three_kinds(admin, 'barbican-admin') as made:
        _a, km, secret, container, order, _ordered = made
        assert status(admin_km, 'GET', f'/secrets/{secret}') == 200
        assert status(admin_km, 'GET', f'/containers/{container}') == 403
        assert status(admin_km, 'DELETE', f'/containers/{container}') == 403
        # an order is looked up within the token's project
        assert status(admin_km, 'GET', f'/orders/{order}') == 404
        assert status(admin_km, 'DELETE', f'/orders/{order}') == 404
        # the role admin in any project deletes another project's secret
        assert status(admin_km, 'DELETE', f'/secrets/{secret}') == 204
        assert status(km, 'GET', f'/secrets/{secret}') == 404
        # the container that held it stays, without it
        assert status(km, 'GET', f'/containers/{container}') == 200


def test_a_secret_with_a_consumer_refuses_its_delete_from_1_2(admin, admin_km):
    a = topology.make_project(admin, unique('barbican-consumer'))
    km = topology.scoped(admin, a).key_manager
    consumer = {
        'service': 'image',
        'resource_type': 'image',
        'resource_id': unique('img'),
    }
    refused, silent = make_secret(km, 'used'), make_secret(km, 'used-too')
    for secret in (refused, silent):
        km.post(f'/secrets/{secret}/consumers', json=consumer)
    try:
        assert (
            status(
                km, 'DELETE', f'/secrets/{refused}', headers=CONSUMERS_REFUSE
            )
            == 400
        )
        assert status(km, 'GET', f'/secrets/{refused}') == 200
        # before 1.2 (no microversion asked) the consumer is no obstacle
        assert status(km, 'DELETE', f'/secrets/{silent}') == 204
        assert status(km, 'GET', f'/secrets/{silent}') == 404
    finally:
        km.delete(f'/secrets/{refused}')


def test_a_container_holds_only_its_own_projects_secrets(admin, admin_km):
    a = topology.make_project(admin, unique('barbican-owner'))
    b = topology.make_project(admin, unique('barbican-other'))
    a_km = topology.scoped(admin, a).key_manager
    b_km = topology.scoped(admin, b).key_manager
    secret = make_secret(a_km, 'theirs')
    try:
        # the user of B's token may read it (an ACL, and the admin role)
        a_km.put(
            f'/secrets/{secret}/acl',
            json={'read': {'users': [admin.current_user_id]}},
        )
        assert status(b_km, 'GET', f'/secrets/{secret}') == 200
        answer = b_km.post(
            '/containers',
            json={
                'type': 'generic',
                'name': 'borrowed',
                'secret_refs': [
                    {
                        'name': 'one',
                        'secret_ref': f'{base_of(b_km)}/secrets/{secret}',
                    }
                ],
            },
            raise_exc=False,
        )
        assert answer.status_code == 404, answer.text
        assert not listed(b_km, '/containers', 'containers')
    finally:
        a_km.delete(f'/secrets/{secret}')


def test_the_cascade_notes_barbican_and_freezes_its_quota(
    admin, admin_km, cli
):
    a = topology.make_project(admin, unique('barbican-cascade'))
    km = topology.scoped(admin, a).key_manager
    secret = make_secret(km, 'left')
    quota = f'/project-quotas/{a.id}'
    admin_km.put(quota, json={'project_quotas': {'secrets': 5}})
    try:
        dry = cli(
            'project', 'delete', '--cascade', '--dry-run', a.id, '-f', 'json'
        )
        assert dry.code == 0, dry.stdout + dry.stderr
        assert not [r for r in dry.json() if r['Kind'].startswith('key_')]
        assert (
            'not listed: key_manager.container, key_manager.order, '
            'key_manager.secret: Barbican lists them only to a token '
            'scoped to their own project'
        ) in dry.stderr
        run = cli('project', 'delete', '--cascade', '--yes', a.id)
        assert run.code == 0, run.stdout + run.stderr
        assert admin.identity.find_project(a.id) is None
        # frozen at 0 (every resource) until the token cache window is
        # over; the reaper or orphan purge releases it after
        assert admin_km.get(quota).json()['project_quotas'] == dict.fromkeys(
            ('secrets', 'orders', 'containers', 'consumers', 'cas'), 0
        )
        assert 'its quotas stay frozen at 0' in run.stderr
        # the secret outlives its project, as the note says
        assert status(admin_km, 'GET', f'/secrets/{secret}') == 200
    finally:
        with contextlib.suppress(openstack.exceptions.SDKException):
            admin_km.delete(f'/secrets/{secret}')
        with contextlib.suppress(openstack.exceptions.SDKException):
            admin_km.delete(quota)


def test_a_drain_freezes_the_barbican_quota_and_restore_puts_it_back(
    admin, admin_km, cli
):
    a = topology.make_project(admin, unique('barbican-drain'))
    quota = f'/project-quotas/{a.id}'
    admin_km.put(quota, json={'project_quotas': {'secrets': 5, 'cas': 2}})
    before = admin_km.get(quota).json()['project_quotas']
    assert before == {
        'secrets': 5,
        'orders': None,
        'containers': None,
        'consumers': None,
        'cas': 2,
    }
    try:
        drained = cli('project', 'drain', a.id)
        assert drained.code == 0, drained.stdout + drained.stderr
        assert set(admin_km.get(quota).json()['project_quotas'].values()) == {
            0
        }
        restored = cli('project', 'restore', a.id)
        assert restored.code == 0, restored.stdout + restored.stderr
        assert admin_km.get(quota).json()['project_quotas'] == before
    finally:
        with contextlib.suppress(openstack.exceptions.SDKException):
            admin_km.delete(quota)


def test_a_members_cascade_deletes_its_projects_barbican_resources(
    admin, admin_km
):
    member = domain_member(admin, 'barbican-member')
    project = member.project
    km = member.connection().key_manager
    base = base_of(km)
    secret = make_secret(km, 'one')
    container = make_container(km, 'holder', secret, base)
    order, ordered = make_order(km, 'key')
    used = make_container(km, 'used', make_secret(km, 'two'), base)
    consumer = {'name': 'minicloud', 'URL': 'https://lb.test/v2/lb/1'}
    km.post(f'/containers/{used}/consumers', json=consumer)
    other = topology.make_project(admin, unique('barbican-neighbour'))
    other_km = topology.scoped(admin, other).key_manager
    theirs = make_secret(other_km, 'theirs')
    keep = ('project', 'delete', '--cascade', '--keep-project')
    try:
        # the container with a consumer keeps the project: nothing changes
        refused = member.run(*keep, '--yes', project.id)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f'keep key_manager.container used ({used})' in (
            refused.stdout + refused.stderr
        )
        assert status(km, 'GET', f'/secrets/{secret}') == 200
        km.delete(f'/containers/{used}/consumers', json=consumer)

        dry = member.run(*keep, '--dry-run', project.id, '-f', 'json')
        assert dry.returncode == 0, dry.stdout + dry.stderr
        planned = {(r['Kind'], r['ID']) for r in json.loads(dry.stdout)}
        assert {
            ('key_manager.secret', secret),
            ('key_manager.secret', ordered),
            ('key_manager.container', container),
            ('key_manager.container', used),
            ('key_manager.order', order),
        } <= planned
        assert 'key_manager' not in dry.stderr  # no "not listed" note
        run = member.run(*keep, '--yes', project.id)
        assert run.returncode == 0, run.stdout + run.stderr
        for path, key in (
            ('/secrets', 'secrets'),
            ('/containers', 'containers'),
            ('/orders', 'orders'),
        ):
            assert listed(km, path, key) == set(), path
        assert admin.identity.get_project(project.id).is_enabled
        # the neighbour's secret stays
        assert status(other_km, 'GET', f'/secrets/{theirs}') == 200
    finally:
        other_km.delete(f'/secrets/{theirs}', raise_exc=False)
        admin.identity.delete_user(member.user.id)
