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


"""The services a cluster lives in, adapted to one interface: Magnum
(Heat driver), Sahara, and Heat itself for a plain stack; and which of
them the catalog has."""

from __future__ import annotations

from typing import Any, ClassVar
import urllib.parse

from openstack import exceptions as sdk_exc

from osc_cascade.api import heat, sahara
from osc_cascade.api.http import request
from osc_cascade.engine.errors import CascadeError
from osc_cascade.kinds.container_infra import stack_id_of
from osc_cascade.workflows.clusters.records import (
    HEAT,
    MAGNUM,
    SAHARA,
    ClusterRecord,
    StackRecord,
)

#: the stuck states of a Heat-based cluster that are no update of a
#: cluster in use: a creation (nothing uses it yet) or a deletion (its
#: owner wants it gone); every other ``*_IN_PROGRESS`` (UPDATE, ROLLBACK,
#: RESUME, SUSPEND, SNAPSHOT, CHECK, RESTORE, ADOPT) is an update
NOT_UPDATING = frozenset({'CREATE_IN_PROGRESS', 'DELETE_IN_PROGRESS'})
#: Sahara's states of a scaling (its creation and scaling share
#: Validating and Configuring, which are not counted)
SAHARA_UPDATING = frozenset({'Scaling', 'Adding Instances', 'Decommissioning'})


class ClusterService:
    """How one service finds, deletes and reports its clusters. Its calls
    decide nothing: the callers retry them and judge what they return."""

    service: ClassVar[str]
    service_type: ClassVar[str]
    #: the state of a cluster being deleted
    deleting: ClassVar[str]
    #: the state a deletion that stopped leaves the cluster in
    delete_failed: ClassVar[str] = 'DELETE_FAILED'

    def is_stuck(self, status: str) -> bool:
        return status.endswith('_IN_PROGRESS') or (
            status == self.delete_failed
        )

    def is_updating(self, status: str) -> bool:
        """A cluster in use that an operation is changing: stuck, but
        taken only when asked."""
        return status.endswith('_IN_PROGRESS') and (status not in NOT_UPDATING)

    def find(self, conn: Any, name_or_id: str) -> list[ClusterRecord]:
        """The clusters ``name_or_id`` names: more than one is ambiguous."""
        raise NotImplementedError

    def unsettled(self, conn: Any) -> list[ClusterRecord]:
        """Every project's clusters in a stuck state."""
        raise NotImplementedError

    def get(self, conn: Any, cluster: ClusterRecord) -> ClusterRecord | None:
        raise NotImplementedError

    def delete(self, conn: Any, cluster: ClusterRecord) -> None:
        raise NotImplementedError

    def stacks(self, conn: Any, cluster: ClusterRecord) -> list[StackRecord]:
        """The stacks the cluster may be built on: more than one is
        ambiguous."""
        raise NotImplementedError


class MagnumClusters(ClusterService):
    service = MAGNUM
    # the official type; catalogs usually say its alias container-infra,
    # which the SDK matches but has_service() does not accept
    service_type = 'container-infrastructure-management'
    deleting = 'DELETE_IN_PROGRESS'

    def _get(self, conn: Any, name_or_id: str) -> ClusterRecord | None:
        # Magnum takes a name or a UUID in the URL (409 if a name is
        # ambiguous)
        # raw: the SDK's Cluster has no cluster_id (microversion 1.13's
        # name of stack_id)
        try:
            found = request(
                conn.container_infrastructure_management,
                'GET',
                f'/clusters/{urllib.parse.quote(name_or_id, safe="")}',
            ).json()
        except sdk_exc.NotFoundException:
            return None
        # the URL's id echoes what was asked for; the UUID is the cluster's
        return ClusterRecord(
            MAGNUM,
            found['uuid'],
            found.get('name') or '',
            found.get('project_id') or '',
            found.get('status') or '',
            found.get('updated_at') or found.get('created_at') or '',
            stack_id_of(found),
            health=found.get('health_status') or '',
            user_id=found.get('user_id') or '',
        )

    def find(self, conn, name_or_id):
        found = self._get(conn, name_or_id)
        return [found] if found else []

    def unsettled(self, conn):
        # the list shows neither the owner nor the times: show each one
        listed = conn.container_infrastructure_management.clusters()
        found = (
            self._get(conn, c.uuid)
            for c in listed
            if self.is_stuck(c.status or '')
        )
        return [c for c in found if c is not None]

    def get(self, conn, cluster):
        return self._get(conn, cluster.id)

    def delete(self, conn, cluster):
        conn.container_infrastructure_management.delete_cluster(
            cluster.id, ignore_missing=True
        )

    def stacks(self, conn, cluster):
        found = cluster.stack_id and heat.find_stack(conn, cluster.stack_id)
        return [StackRecord.from_api(found)] if found else []


class SaharaClusters(ClusterService):
    service = SAHARA
    service_type = 'data-processing'
    deleting = 'Deleting'
    # a failed delete leaves the cluster in Error, which is also where a
    # failed creation ends: final, so not swept
    delete_failed = 'Error'
    final = frozenset({'Active', 'Error'})

    def is_stuck(self, status):
        return status not in self.final

    def is_updating(self, status):
        return status in SAHARA_UPDATING

    def _record(self, data: dict[str, Any]) -> ClusterRecord:
        return ClusterRecord(
            SAHARA,
            data['id'],
            data.get('name') or '',
            data.get('project_id') or data.get('tenant_id', ''),
            data.get('status') or '',
            data.get('updated_at') or data.get('created_at') or '',
        )

    def _get(self, conn: Any, id_: str) -> ClusterRecord | None:
        try:
            return self._record(sahara.get_cluster(conn, id_))
        except sdk_exc.NotFoundException:
            return None

    def find(self, conn, name_or_id):
        found = self._get(conn, name_or_id)
        if found:
            return [found]
        named = sahara.clusters(conn, name=name_or_id)
        return [self._record(c) for c in named]

    def unsettled(self, conn):
        return [
            self._record(c)
            for c in sahara.clusters(conn)
            if self.is_stuck(c.get('status') or '')
        ]

    def get(self, conn, cluster):
        return self._get(conn, cluster.id)

    def delete(self, conn, cluster):
        try:
            sahara.delete_cluster(conn, cluster.id)
        except sdk_exc.NotFoundException:
            pass

    def stacks(self, conn, cluster):
        """Sahara's Heat engine names the stack ``<name><first 8 of the
        cluster's id>`` (its extra['heat_stack_name'], which the API does
        not show); a cluster made before that (``stack_name`` falls back to
        it) after the cluster alone. Either is in the cluster's project
        and described ``Data Processing Cluster by Sahara`` / ``Sahara
        cluster name: <name>`` (service/heat/templates.py). A stack of the
        name that is not so is refused, not passed over: the cluster's
        normal delete would make Sahara delete it by that name."""
        for name in (cluster.name + cluster.id[:8], cluster.name):
            named = [
                s
                for s in heat.stacks(
                    conn, name=name, tenant=cluster.project_id
                )
                # checked here too: a filter Heat ignored would let others in
                if s.get('stack_name') == name
                and heat.project_of(s) == cluster.project_id
            ]
            strangers = [s for s in named if not _made_for(s, cluster)]
            if strangers:
                s = strangers[0]
                raise CascadeError(
                    f'{cluster.label()}: stack {name} ({s["id"]}) of its '
                    f'project is named after it, but its description does '
                    f'not say that Sahara made it for this cluster: '
                    f'refusing; force-delete the right stack with --stack.'
                )
            if named:
                return [StackRecord.from_api(s) for s in named]
        return []


#: how Sahara describes a cluster's stack: its first line, and the line
#: that names the cluster
SAHARA_STACK = 'Data Processing Cluster by Sahara'
SAHARA_CLUSTER_LINE = 'Sahara cluster name: {}'


def _made_for(stack: dict[str, Any], cluster: ClusterRecord) -> bool:
    """Whether the stack's description says Sahara made it for a cluster
    of the cluster's name."""
    lines = (stack.get('description') or '').splitlines()
    return bool(lines) and (
        lines[0].strip() == SAHARA_STACK
        and SAHARA_CLUSTER_LINE.format(cluster.name)
        in (line.strip() for line in lines)
    )


class HeatStacks(ClusterService):
    """A plain stack is its own cluster."""

    service = HEAT
    service_type = 'orchestration'
    deleting = 'DELETE_IN_PROGRESS'

    def _record(self, data: dict[str, Any]) -> ClusterRecord:
        stack = StackRecord.from_api(data)
        return ClusterRecord(
            HEAT,
            stack.id,
            stack.name,
            stack.project_id,
            stack.status,
            data.get('updated_time') or data.get('creation_time') or '',
            stack.id,
        )

    def find(self, conn, name_or_id):
        found = heat.find_stack(conn, name_or_id)
        if found:
            return [self._record(found)]
        # Heat finds names in the caller's project only
        return [self._record(s) for s in heat.stacks(conn, name=name_or_id)]

    def unsettled(self, conn):
        return [
            self._record(s)
            for s in heat.stacks(conn)
            if self.is_stuck(s['stack_status'])
        ]

    def get(self, conn, cluster):
        found = heat.get_stack(conn, cluster.name, cluster.id)
        return self._record(found) if found else None

    def delete(self, conn, cluster):
        try:
            heat.call(
                conn,
                'DELETE',
                heat.stack_path(cluster.name, cluster.id),
            )
        except sdk_exc.NotFoundException:
            pass

    def stacks(self, conn, cluster):
        found = self.get(conn, cluster)
        if not found:
            return []
        # the cluster is the stack
        return [
            StackRecord(
                cluster.id, cluster.name, cluster.project_id, found.status
            )
        ]


def services_for(conn: Any, *, stacks: bool) -> list[ClusterService]:
    """The services to look in: Heat itself with ``stacks``, otherwise
    Magnum and Sahara, where the catalog has them."""
    if stacks:
        if not conn.has_service('orchestration'):
            raise CascadeError('Heat (orchestration) is not in the catalog.')
        return [HeatStacks()]
    found = [
        s
        for s in (MagnumClusters(), SaharaClusters())
        if conn.has_service(s.service_type)
    ]
    if not found:
        raise CascadeError(
            'Neither Magnum (container-infra) nor Sahara '
            '(data-processing) is in the catalog; pass '
            '--stack to work on Heat stacks.'
        )
    return found
