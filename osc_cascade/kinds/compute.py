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

"""Nova: servers, server groups, the keypairs of the project's users
(reported, never deleted), and the project's access to private flavors
(removed; the flavor stays)."""

from __future__ import annotations

from openstack import exceptions as sdk_exc
from openstack.compute.v2 import server as sdk_server

from osc_cascade.api import direct
from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.access import AccessKind
from osc_cascade.kinds.base import (
    GONE,
    ResourceKind,
    delete_of,
    older_than,
    owned,
    unless_absent,
)
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.identity import users_of
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register

#: the detail list's volumes of a server (the SDK's ``attached_volumes``)
ATTACHED_VOLUMES = 'os-extended-volumes:volumes_attached'


def server_owners(conn, project_id, server_ids, *, scoped=False):
    """The project of each server (of a volume's attachments, of a port's
    binding), GONE for one that no longer exists (an admin GET answers
    404). Cost: nothing without servers to ask of; else one
    list of the project's servers (every project's for the orphan search),
    which at N=300 is one call, and a GET of each server that is not in it
    (another project's or gone: rare). ``scoped``: through a token scoped
    to the project, which sees its own servers alone: another project's
    answers 404 as a gone one does, so a server not listed is unknown
    (''), and its volume is kept."""
    if not server_ids:
        return {}
    every_project = {} if scoped else {'all_tenants': True}
    owners = {
        s['id']: s.get('tenant_id') or ''
        for s in pages(
            conn.compute,
            '/servers/detail',
            'servers',
            {'project_id': project_id, **every_project},
        )
        if s['id'] in server_ids
    }
    for server_id in sorted(set(server_ids) - set(owners)):
        if scoped:
            owners[server_id] = ''
            continue
        try:
            server = conn.compute.get_server(server_id)
        except sdk_exc.NotFoundException:
            owners[server_id] = GONE
        else:
            owners[server_id] = server.project_id or ''
    return owners


@register
class Server(ResourceKind):
    name = 'compute.server'
    sdk_get = 'compute.get_server'
    sdk_resource = sdk_server.Server
    heat_types = ('OS::Nova::Server',)
    service_type = 'compute'
    # ERROR before the delete is common and fine; status() reports a
    # failed delete only when nova has finished with the server
    error_statuses = frozenset({'ERROR (delete failed)'})
    # with reclaim_instance_interval set, nova only soft-deletes: the
    # server would wait there for the reclaim, and the cascade with it
    unfinished_statuses = frozenset({'SOFT_DELETED'})
    # nova/compute/api.py delete: accepted in every vm and task state
    # (check_instance_state(vm_state=None, task_state=None)); a task that
    # never ends (its compute died with it) can hold the delete up on the
    # host: --force-stuck clears it first (os-resetState, an admin's)
    force_action = 'reset_server_state'

    def stuck_status(self, ref):
        """Its task, if one has not moved for ``stuck_after``."""
        task = ref.attrs.get('task_state')
        if task and older_than(ref.attrs.get('updated_at'), self.stuck_after):
            return f'task {task}'
        return ''

    def stuck_step(self, ref):
        return None  # Nova accepts its delete whatever its state

    def force_stuck(self, conn, step):
        # read again (base.apply made sure it is still the project's): a
        # task that ended meanwhile is left alone
        if not conn.compute.get_server(step.target.id).task_state:
            return
        conn.compute.reset_server_state(step.target.id, 'error')

    def list(self, conn, project_id):
        # Every state: ERROR, SHELVED_OFFLOADED, SOFT_DELETED and locked
        # servers are all listed by the admin detail call.
        return owned(
            (
                item_ref(
                    self.name,
                    s,
                    project_key='tenant_id',
                    created_key='created',
                    updated_key='updated',
                    status=s.get('status'),
                    locked=bool(s.get('locked')) or None,
                    task_state=s.get('OS-EXT-STS:task_state'),
                    updated_at=s.get('updated')
                    if s.get('OS-EXT-STS:task_state')
                    else None,
                    volumes=[v['id'] for v in s.get(ATTACHED_VOLUMES) or []],
                )
                for s in self.detail_items(
                    conn.compute,
                    '/servers/detail',
                    'servers',
                    project_id,
                    sdk_server.Server,
                )
            ),
            project_id,
        )

    def delete(self, conn, ref):
        if ref.attrs.get('status') in self.unfinished_statuses:
            self.finish_delete(conn, ref)
        else:
            # as the SDK's delete_server(id): a 404 is no error
            direct.delete(conn.compute, sdk_server.Server, ref.id)

    def finish_delete(self, conn, ref):
        # a plain delete of a soft-deleted server is a no-op in nova; the
        # SDK has no force_delete_server, force is a flag
        conn.compute.delete_server(ref.id, force=True)

    def status(self, conn, ref):
        server = self.fetched(conn, ref)
        return self._status(server.status, server.task_state)

    def list_statuses(self, conn, project_id):
        # nova lists a server until its delete has finished
        return self.detail_statuses(
            conn.compute,
            '/servers/detail',
            'servers',
            project_id,
            lambda s: self._status(
                s.get('status'), s.get('OS-EXT-STS:task_state')
            ),
        )

    @staticmethod
    def _status(status, task_state):
        if status == 'DELETED':
            return GONE
        if status == 'ERROR' and not task_state:
            # nova finished handling the delete and left it in ERROR
            return 'ERROR (delete failed)'
        return status


@register
class ServerGroup(ResourceKind):
    name = 'compute.server_group'
    heat_types = ('OS::Nova::ServerGroup',)
    service_type = 'compute'
    lists_every_project = True
    synchronous_delete = True

    #: groups asked for per page; nova answers at most its max_limit
    page = 1000

    def list(self, conn, project_id):
        # No project filter in nova: every project's, filtered here, page by
        # page (limit and offset; the SDK asks once and nova caps that list
        # at its max_limit, so the rest would be missed). A short page may
        # be max_limit's: only an empty one ends the list.
        refs: list[ResourceRef] = []
        while page := self._page(conn, offset=len(refs)):
            refs += [
                item_ref(self.name, g, members=g['members']) for g in page
            ]
        return owned(refs, project_id)

    def _page(self, conn, offset):
        query = {'limit': self.page, 'offset': offset}
        if not self.scoped:  # Nova refuses it to a non-admin
            query['all_projects'] = 'True'
        # project_id is in the answer from 2.13 on: without it no group
        # could be told the project's. Raw: the SDK's server_groups takes no
        # offset (its query: all_projects, limit, marker), and nova's
        # os-server-groups pages by limit and offset alone
        return request(
            conn.compute,
            'GET',
            '/os-server-groups',
            params=query,
            microversion='2.13',
        ).json()['server_groups']

    def relations(self, ref, inventory):
        for member in ref.attrs.get('members', []):
            yield Edge(
                delete_of(Server.name, member), delete_of(self.name, ref.id)
            )

    def delete(self, conn, ref):
        conn.compute.delete_server_group(ref.id)


@register
class Keypair(ResourceKind):
    """A keypair of a user with a role on the project. Keypairs belong to
    users, not projects (the user may need it elsewhere), so the cascade
    only reports them: a keep step that does not keep the project."""

    name = 'compute.keypair'
    service_type = 'compute'
    needs_admin = "other users' keypairs are shown to admins alone"

    def list(self, conn, project_id):
        if project_id is None:
            return []  # no project owns a keypair: never an orphan
        try:
            users = sorted(users_of(conn, project_id))
        except sdk_exc.NotFoundException:
            return []  # the project is gone (the settle): no one has a role
        # one listing per user, made at once (kinds.calls)
        keypairs = fan_out(
            lambda user_id: unless_absent(
                lambda: conn.compute.keypairs(user_id=user_id)
            ),
            users,
            service=self.service_type,
        )
        return [
            ResourceRef(
                kind=self.name,
                id=f'{user_id}/{k.name}',
                name=k.name,
                project_id=project_id,
                attrs={'user_id': user_id},
            )
            for user_id, found in zip(users, keypairs, strict=True)
            for k in found
        ]

    def primary_step(self, ref):
        user = ref.attrs['user_id']
        return resource.keep(
            ref,
            f'belongs to user {user}, not to the project; delete it '
            f'with `openstack keypair delete --user {user} {ref.name}` '
            f'if it is no longer needed',
            blocking=False,
        )


@register
class FlavorAccess(AccessKind):
    """The project's access to a private flavor (the flavor is the
    admin's and stays; nova pages the flavor list at its max_limit, which
    the SDK follows)."""

    name = 'compute.flavor_access'
    service_type = 'compute'

    def listing(self, conn):
        return conn.compute.flavors(is_public=False)

    def members(self, conn, of):
        return [a['tenant_id'] for a in conn.compute.get_flavor_access(of)]

    def remove(self, conn, of, project_id):
        conn.compute.flavor_remove_tenant_access(of, project_id)
