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

"""Magnum clusters on a Cluster API driver: no Heat stack to abandon.

magnum-cluster-api and magnum-capi-helm keep in the cluster's
``stack_id`` (``cluster_id`` from microversion 1.13) the name of the
Cluster API cluster they made, not a stack's UUID: magnum-cluster-api
``kube-<5 random>`` in the namespace ``magnum-system``, its cloud
controller manager and Cinder CSI knowing the cluster by its Magnum UUID;
magnum-capi-helm ``<name>-<12 random>`` (the Helm release) in the
namespace ``<namespace_prefix>-<project id, alphanumerics>`` (its
``[capi_helm] namespace_prefix``, ``magnum`` unless the operator says
another: ``ForceDeleteOptions.capi_helm_prefix``), its controllers knowing
the cluster by the release's name. Such a cluster's force-delete deletes
what its controllers made (``workflows.k8s``: both drivers' conventions,
each matched whole), after the normal delete's grace period, and then
asks Magnum to delete the record again.

What Magnum is left in: its driver deletes the record when its management
cluster reports the Cluster API cluster gone. With the OpenStack
resources gone, Cluster API's provider finishes that delete; with the
management cluster gone too, nothing will: the record stays
DELETE_IN_PROGRESS (or DELETE_FAILED), and only an operator can remove it
from Magnum's database. The outcome says which.
"""

from __future__ import annotations

import re
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import keystone
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds import container_infra
from osc_cascade.kinds.identity import ApplicationCredential
from osc_cascade.workflows.clusters.records import MAGNUM, ClusterRecord
from osc_cascade.workflows.force_delete import leftovers
from osc_cascade.workflows.force_delete.base import ForceDeleteBase
from osc_cascade.workflows.force_delete.outcome import (
    ForceDeleteOutcome,
    Preview,
)
from osc_cascade.workflows.k8s import footprint
from osc_cascade.workflows.k8s.conventions import Identity
from osc_cascade.workflows.stopping import run_plan

#: magnum-capi-helm's ``[capi_helm] namespace_prefix`` by default
CAPI_HELM_PREFIX = 'magnum'
#: how far the force-delete of such a cluster went
FOOTPRINT_DELETED = 'footprint deleted'
#: Magnum's states of a cluster being or failing to be deleted
_DELETING = frozenset({'DELETE_IN_PROGRESS', 'DELETE_FAILED'})


def on_cluster_api(cluster: ClusterRecord) -> bool:
    """A Magnum cluster whose ``stack_id`` names a Cluster API cluster."""
    return cluster.service == MAGNUM and container_infra.on_cluster_api(
        cluster.stack_id
    )


def capi_clusters(
    cluster: ClusterRecord, helm_prefix: str = CAPI_HELM_PREFIX
) -> list[str]:
    """Where the drivers made its Cluster API cluster (namespace/name):
    magnum-cluster-api's, then magnum-capi-helm's with its
    ``namespace_prefix``."""
    project = re.sub('[^a-z0-9]', '', cluster.project_id.lower())
    return [
        f'magnum-system/{cluster.stack_id}',
        f'{helm_prefix}-{project}/{cluster.stack_id}',
    ]


def identities(
    cluster: ClusterRecord, helm_prefix: str = CAPI_HELM_PREFIX
) -> list[Identity]:
    """The cluster as magnum-cluster-api's controllers know it, then as
    magnum-capi-helm's."""
    (mca, mch) = capi_clusters(cluster, helm_prefix)
    return [
        Identity(cluster.id, mca.replace('/', '-'), cluster.id),
        Identity(cluster.stack_id, mch.replace('/', '-'), cluster.stack_id),
    ]


def driver_credential(cluster: ClusterRecord, cred: dict[str, Any]) -> str:
    """The driver whose application credential for the cluster ``cred``
    is, by its whole name and description, in the cluster's project; ''
    for none. magnum-cluster-api (``driver.py``) names it the cluster's
    UUID, described ``Magnum cluster (<uuid>)``; magnum-capi-helm
    (``common/app_creds.py``) ``magnum-<uuid>-<8 hex>``, described
    ``Magnum cluster (<name or uuid>)``."""
    if cred.get('project_id') != cluster.project_id:
        return ''
    name, description = cred.get('name') or '', cred.get('description')
    if name == cluster.id and description == f'Magnum cluster ({cluster.id})':
        return 'magnum-cluster-api application credential'
    if (
        re.fullmatch(f'magnum-{re.escape(cluster.id)}-[0-9a-f]{{8}}', name)
        and description == f'Magnum cluster ({cluster.name or cluster.id})'
    ):
        return 'magnum-capi-helm application credential'
    return ''


class ClusterApiFootprint(ForceDeleteBase):
    """The force-delete of a Magnum cluster on a Cluster API driver."""

    def _footprint(self, cluster: ClusterRecord) -> tuple[Any, Any]:
        if (
            cluster.health == 'HEALTHY'
            and cluster.status not in _DELETING
            and not self.options.force
        ):
            raise CascadeError(
                f'{cluster.label()} is {cluster.status} and Magnum says it '
                f'is HEALTHY: refusing; pass --force if you know it is dead'
            )
        fp = self._checked(
            f'finding what the controllers of {cluster.label()} made',
            lambda: footprint.find(
                self.conn,
                identities(cluster, self.options.capi_helm_prefix),
                cluster.project_id,
                parallel=self.options.parallel,
                retry=self.retry,
                clock=self.clock,
            ),
        )
        if fp.active and not self.options.force:
            raise CascadeError(
                f'{cluster.label()}: {len(fp.active)} of its servers are '
                f'ACTIVE ({", ".join(r.name or r.id for r in fp.active[:3])}'
                f'): it may still run; pass --force if you know it is dead'
            )
        self._credentials(cluster, fp)
        return fp, footprint.plan(fp, kinds_mod.build())

    def _credentials(self, cluster: ClusterRecord, fp: Any) -> None:
        """The application credential the driver made for the cluster,
        its creator's: deleted with the footprint (the driver deletes it
        only when its management cluster says the cluster is gone)."""
        if not cluster.user_id:
            return
        try:
            creds = self._checked(
                f'listing the application credentials of {cluster.user_id}',
                lambda: keystone.complete(
                    f'the application credentials of user {cluster.user_id}',
                    keystone.application_credentials(
                        self.conn, cluster.user_id
                    ),
                ),
            )
        except sdk_exc.NotFoundException:
            return  # its user is gone, and Keystone deleted them with it
        for cred in creds:
            convention = driver_credential(cluster, cred)
            if convention:
                ref = ResourceRef(
                    ApplicationCredential.name,
                    cred['id'],
                    cred.get('name') or '',
                    cluster.project_id,
                    attrs={'user_id': cluster.user_id},
                )
                fp.mine[ref.key] = (ref, convention)

    def _capi_preview(self, cluster: ClusterRecord) -> Preview:
        fp, plan = self._footprint(cluster)
        return Preview(cluster, None, [], footprint=fp, plan=plan)

    def _capi_force_delete(
        self, cluster: ClusterRecord, outcome: ForceDeleteOutcome
    ) -> None:
        """After the grace period: the footprint as it is now, deleted;
        then the record."""
        service = self.services[cluster.service]
        self._delete_footprint(cluster, outcome)
        outcome.result = FOOTPRINT_DELETED
        outcome.record = self._finish_record(service, cluster)
        self.notify(
            magnum_state(
                cluster, outcome.record, self.options.capi_helm_prefix
            )
        )

    def _capi_after_normal_delete(
        self, cluster: ClusterRecord, outcome: ForceDeleteOutcome
    ) -> None:
        """Magnum deleted the record, and Cluster API what it made; the
        cloud controller manager's load balancers and the CSI volumes of
        a cluster whose workloads were not deleted first stay behind
        (cloud-provider-openstack's orphaned load balancers): deleted
        too, the cluster being gone."""
        fp, plan = self._footprint(cluster)
        if any(s.is_delete for s in plan.steps.values()) or fp.kept:
            self._delete_footprint(cluster, outcome, (fp, plan))

    def _delete_footprint(
        self,
        cluster: ClusterRecord,
        outcome: ForceDeleteOutcome,
        found: tuple[Any, Any] | None = None,
    ) -> None:
        fp, plan = found or self._footprint(cluster)
        deletes = sum(1 for s in plan.steps.values() if s.is_delete)
        prefix = self.options.capi_helm_prefix
        self.notify(
            f'{cluster.label()}: no Heat stack (Cluster API cluster '
            f'{" or ".join(capi_clusters(cluster, prefix))}); deleting '
            f'what its '
            f'controllers made: {deletes} resource(s), {len(fp.kept)} kept'
        )
        self.on_plan(len(plan.steps))
        result = run_plan(
            self.conn,
            plan,
            kinds_mod.build(),
            parallel=self.options.parallel,
            timeout=self.options.timeout,
            on_event=self.on_event,
            stop=self.stop,
            retry=self.retry,
            clock=self.clock,
        )
        outcome.leftovers = {
            r.step.target.key: leftovers.DELETED
            if r.outcome == 'done'
            else f'{r.outcome}: {r.error}'
            for r in result.results.values()
            if r.step.is_delete
        }
        outcome.leftovers.update(
            {ref.key: f'kept: {why}' for ref, why in fp.kept.values()}
        )
        self.stop.check(
            f'{cluster.label()}: its footprint was being deleted; run the '
            f'same command again'
        )


def magnum_state(
    cluster: ClusterRecord, record: str, helm_prefix: str = CAPI_HELM_PREFIX
) -> str:
    """What Magnum is left in, and what only the operator can still do."""
    if record == 'gone':
        return f'{cluster.label()}: Magnum deleted its record'
    where = ' or '.join(capi_clusters(cluster, helm_prefix))
    if record == 'DELETE_FAILED':
        return (
            f'{cluster.label()}: Magnum\'s record stays DELETE_FAILED: its '
            f'Cluster API driver failed to delete the Cluster API cluster '
            f'({where}; Magnum\'s status_reason says why); if its management '
            f'cluster answers again, the same command finishes it; if the '
            f'management cluster is gone, only an operator can remove the '
            f'record, from Magnum\'s database'
        )
    return (
        f'{cluster.label()}: Magnum\'s record stays {record}: its Cluster '
        f'API driver deletes it once its management cluster reports the '
        f'Cluster API cluster ({where}) gone, which Cluster API\'s provider '
        f'finishes now that its OpenStack resources are gone; if the '
        f'management cluster is gone too, only an operator can remove the '
        f'record, from Magnum\'s database'
    )
