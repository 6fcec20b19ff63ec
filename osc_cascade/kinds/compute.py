"""Nova: servers and server groups."""

from __future__ import annotations

from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.planner import Edge


class Server(ResourceKind):
    name = 'compute.server'
    service_type = 'compute'
    # ERROR before the delete is common and fine; status() reports a
    # failed delete only when nova has finished with the server
    error_statuses = frozenset({'ERROR (delete failed)'})

    def list(self, conn, project_id):
        # Every state: ERROR, SHELVED_OFFLOADED, SOFT_DELETED and locked
        # servers are all listed by the admin detail call.
        return owned((self.ref(
            s, status=s.status, locked=bool(s.is_locked) or None,
            volumes=[v['id'] for v in (s.attached_volumes or [])])
            for s in conn.compute.servers(details=True, all_projects=True,
                                          project_id=project_id)),
            project_id)

    def delete(self, conn, ref):
        if ref.attrs.get('status') == 'SOFT_DELETED':
            # a plain delete of a soft-deleted server is a no-op in nova
            conn.compute.force_delete_server(ref.id)
        else:
            conn.compute.delete_server(ref.id)

    def status(self, conn, ref):
        server = conn.compute.get_server(ref.id)
        if server.status == 'DELETED':
            return GONE
        if server.status == 'ERROR' and not server.task_state:
            # nova finished handling the delete and left it in ERROR
            return 'ERROR (delete failed)'
        return server.status


class ServerGroup(ResourceKind):
    name = 'compute.server_group'
    service_type = 'compute'
    synchronous_delete = True

    def list(self, conn, project_id):
        # server groups have no project filter: filter client-side
        return owned((self.ref(g, members=list(g.member_ids or []))
                      for g in conn.compute.server_groups(all_projects=True)),
                     project_id)

    def relations(self, ref, inventory):
        for member in ref.attrs.get('members', []):
            yield Edge(delete_of(Server.name, member), delete_of(
                self.name, ref.id))

    def delete(self, conn, ref):
        conn.compute.delete_server_group(ref.id)


KINDS = (Server, ServerGroup)
