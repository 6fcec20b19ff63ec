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

"""Who else uses the project's Neutron resources (issue #29): the owners
of the servers its ports are the NICs of, and the other projects whose
ports, subnets, routers and floating IPs are on its networks."""

from __future__ import annotations

from openstack import exceptions as sdk_exc

from osc_cascade.kinds.base import GONE
from osc_cascade.kinds.paging import pages


def nic_server_owners(conn, project_id, server_ids, *, scoped=False):
    """The project of each server a port is the NIC of; GONE for one that
    no longer exists (an admin's GET answers 404), '' for one a token
    scoped to the project cannot see (another project's, or gone: unknown,
    so its NIC is kept). Cost: nothing without NICs; else one list of the
    project's servers (every project's for the orphan search: one call at
    N=300) and a GET of each server that is not in it (another
    project's: rare)."""
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
            owners[server_id] = conn.compute.get_server(server_id).project_id
        except sdk_exc.NotFoundException:
            owners[server_id] = GONE
    return owners
