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


"""One cluster's force-delete from start to end, and that of several:
the preview (which changes nothing), the normal delete's grace period,
the abandon, the check of what is left, the cluster's record."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from osc_cascade.engine.errors import CascadeError
from osc_cascade.kinds import orchestration
from osc_cascade.workflows.clusters import policies
from osc_cascade.workflows.clusters.records import (
    HEAT,
    MAGNUM,
    ClusterRecord,
    StackRecord,
    StackResource,
    record_resources,
)
from osc_cascade.workflows.clusters.services import ClusterService
from osc_cascade.workflows.force_delete import containers, leftovers
from osc_cascade.workflows.force_delete import manifest as manifests
from osc_cascade.workflows.force_delete.abandon import StackAbandon
from osc_cascade.workflows.force_delete.capi import (
    ClusterApiFootprint,
    on_cluster_api,
)
from osc_cascade.workflows.force_delete.manifest import default_manifest_name
from osc_cascade.workflows.force_delete.outcome import (
    DELETED_NORMALLY,
    NOT_STARTED,
    RECORD_LEFT,
    ForceDeleteOutcome,
    Preview,
    why,
)
from osc_cascade.workflows.force_delete.resume import LeftoverSteps


class ForceDelete(StackAbandon, LeftoverSteps, ClusterApiFootprint):
    """Force-delete clusters: ``preview_all``, then ``run_all``; or
    ``load`` a manifest and ``resume``."""

    # -- 1. look, change nothing ---------------------------------------------

    def preview_all(self, clusters: Iterable[ClusterRecord]) -> list[Preview]:
        """The preview of each cluster; one that cannot be force-deleted
        says why (``Preview.error``) and the others go on."""
        out = []
        for cluster in clusters:
            try:
                out.append(self.preview(cluster))
            except Exception as exc:  # the cluster's failure, not the run's
                out.append(Preview(cluster, None, [], error=why(exc)))
        return out

    def preview(self, cluster: ClusterRecord) -> Preview:
        if on_cluster_api(cluster):
            # its stack_id names no stack: never looked up in Heat
            return self._capi_preview(cluster)
        service = self.services[cluster.service]
        stack = self._stack(service, cluster)
        if stack is None:
            return Preview(cluster, None, [])
        resources = self._resources(stack)
        if service.service == HEAT and cluster.status != service.deleting:
            self._check_namesakes(cluster, resources)
        export = self._stack_data(cluster, stack, 'export')
        return Preview(
            cluster,
            stack,
            policies.with_policies(resources, [export]),
            export,
        )

    def _stack(
        self, service: ClusterService, cluster: ClusterRecord
    ) -> StackRecord | None:
        found = self._checked(
            f'finding the stack of {cluster.label()}',
            lambda: service.stacks(self.conn, cluster),
        )
        if len(found) > 1:
            raise CascadeError(
                f'{cluster.label()}: {len(found)} stacks of project '
                f'{found[0].project_id} are named {found[0].name!r}: '
                f'{", ".join(s.id for s in found)}; force-delete the right '
                f'one with --stack.'
            )
        return found[0] if found else None

    def _resources(self, stack: StackRecord) -> list[StackResource]:
        return self._checked(
            f'listing the resources of stack {stack.name}',
            lambda: record_resources(self.conn, stack),
        )

    def _check_namesakes(
        self, cluster: ClusterRecord, resources: Sequence[StackResource]
    ) -> None:
        """A stack's normal delete, which force-delete starts itself for a
        plain stack, makes Heat delete some resources by name in the
        caller's scope (Magnum and Sahara delete with the owner's trust)."""
        endangered = orchestration.namesakes(
            self.conn,
            [
                {
                    'resource_type': r.type,
                    'physical_resource_id': r.physical_id,
                }
                for r in resources
            ],
        )
        if endangered:
            raise CascadeError(
                f'Refusing to delete {cluster.label()}: Heat would delete '
                f'your own {", ".join(endangered)} with it (it deletes '
                f'these by name in the scope of whoever deletes the '
                f'stack). Rename yours, or run as another user.'
            )

    # -- 2-6. force-delete ---------------------------------------------------

    def run_all(self, previews: Iterable[Preview]) -> list[ForceDeleteOutcome]:
        """Each cluster's force-delete; interrupted, ``Interrupted`` says
        what was done and ``outcomes`` has each cluster's, those not
        started included."""
        self.outcomes = []
        for preview in previews:
            if self.stop.requested:
                outcome = ForceDeleteOutcome(
                    preview.cluster, error=NOT_STARTED
                )
            else:
                outcome = self.run(preview)
            self.outcomes.append(outcome)
        if self.stop.requested:
            stopped = [
                o
                for o in self.outcomes
                if o.error.startswith(('Interrupted', NOT_STARTED))
            ]
            raise self.stop.error(
                f'{len(self.outcomes) - len(stopped)} cluster(s) done or '
                f'failed, {len(stopped)} interrupted or not started. Each '
                f'manifest lists what its stack left; run the same command '
                f'again to finish (`--delete-leftovers --manifest FILE` '
                f'for a stack already abandoned).'
            )
        return self.outcomes

    def run(self, preview: Preview) -> ForceDeleteOutcome:
        """Force-delete one cluster; whatever fails is the outcome's
        ``error``, and what was done before it stays in the outcome."""
        outcome = ForceDeleteOutcome(preview.cluster)
        if preview.error:
            outcome.error = preview.error
            return outcome
        try:
            self._force_delete(preview, outcome)
        except Exception as exc:  # the cluster's failure, not the run's
            outcome.error = why(exc)
        return outcome

    def _force_delete(
        self, preview: Preview, outcome: ForceDeleteOutcome
    ) -> None:
        cluster = preview.cluster
        service = self.services[cluster.service]
        self.stop.check(f'{cluster.label()}: nothing was done')
        if self._deleted_within_grace(service, cluster):
            self.notify(
                f'{cluster.label()}: deleted by the normal '
                f'delete; nothing was abandoned'
            )
            outcome.result, outcome.record = DELETED_NORMALLY, 'gone'
            if on_cluster_api(cluster):
                self._capi_after_normal_delete(cluster, outcome)
            return
        if on_cluster_api(cluster):
            self._capi_force_delete(cluster, outcome)
            return
        stack = self._stack(service, cluster)
        if stack is None:
            self._without_stack(service, cluster, outcome)
            return
        # what Heat still holds now: the normal delete may have removed
        # some of what the preview showed
        # with what the template said before any delete emptied it
        left = policies.with_policies(
            [r for r in self._resources(stack) if r.left_behind],
            [preview.export],
        )
        # which container of its name each is: a later deletion keeps one
        # made since under the same name
        left = containers.recorded(
            self.conn, left, retry=self.retry, clock=self.clock
        )
        path = self.options.manifest or default_manifest_name(cluster, stack)
        self.stop.check(
            f'{cluster.label()}: its stack {stack.name} was not abandoned'
            + (
                ''
                if cluster.status == service.deleting
                else ' (its normal delete was started)'
            )
        )
        manifest = self._abandon(preview, stack, left, path, outcome)
        left = policies.with_policies(
            left, [manifest.get('abandon'), preview.export]
        )
        # what Heat still held may be gone all the same: its delete removes
        # a resource before it drops the resource's row
        there, gone = self._remaining(cluster, left)
        outcome.left_behind = there
        manifest.update(
            resources=[r.to_dict() for r in there],
            already_gone=[r.key for r in gone],
        )
        manifests.write_manifest(path, manifest)
        self.notify(
            f'{cluster.label()}: abandoned stack {stack.name} '
            f'({stack.id}); {len(there)} resource(s) left behind, '
            f'listed in {path}'
            + (
                f' ({len(gone)} more that it held were gone already)'
                if gone
                else ''
            )
        )
        outcome.record = self._finish_record(service, cluster)
        if self.options.delete_leftovers and left:
            outcome.leftovers = {
                **{r.key: leftovers.GONE for r in gone},
                **(self._delete_leftovers(there) if there else {}),
            }
            manifests.write_manifest(
                path, {**manifest, 'leftovers': outcome.leftovers}
            )
            self.stop.check(self._resume_hint(cluster, path))

    def _deleted_within_grace(
        self, service: ClusterService, cluster: ClusterRecord
    ) -> bool:
        if cluster.status == service.deleting:
            self.notify(
                f'{cluster.label()}: already being deleted; '
                f'abandoning its stack'
            )
            return False
        self.notify(
            f'{cluster.label()}: deleting it the normal way first; '
            f'waiting up to {self.options.grace:g}s'
        )
        self._checked(
            f'deleting {cluster.label()}',
            lambda: service.delete(self.conn, cluster),
        )
        last: list[ClusterRecord | None] = [cluster]

        def settled() -> bool:
            last[0] = self._checked(
                f'checking {cluster.label()}',
                lambda: service.get(self.conn, cluster),
            )
            return last[0] is None or (last[0].status == service.delete_failed)

        self._wait(
            settled,
            self.options.grace,
            stopped=f'{cluster.label()}: its normal delete was started; '
            f'nothing was abandoned',
        )
        return last[0] is None

    def _without_stack(
        self,
        service: ClusterService,
        cluster: ClusterRecord,
        outcome: ForceDeleteOutcome,
    ) -> None:
        """Nothing to abandon: the record's delete, asked again. A Magnum
        cluster that names no stack nor Cluster API cluster (its driver
        failed before making one: magnum-cluster-api's create, at its
        first call to a management cluster that is gone) made nothing;
        its record stays when its driver's delete fails too."""
        unnamed = cluster.service == MAGNUM and not cluster.stack_id
        self.notify(
            f'{cluster.label()}: '
            + (
                'it names no stack nor Cluster API cluster (its driver '
                'failed before making one); nothing to abandon or delete'
                if unnamed
                else 'its stack is gone; nothing to abandon'
            )
        )
        if not unnamed:
            self._point_to_manifest(cluster)
        outcome.result = DELETED_NORMALLY
        outcome.record = self._finish_record(service, cluster)
        if unnamed and outcome.record == 'DELETE_FAILED':
            outcome.result = RECORD_LEFT
            self.notify(
                f'{cluster.label()}: Magnum\'s record stays DELETE_FAILED: '
                f'its driver\'s delete failed (Magnum\'s status_reason says '
                f'why); if it keeps failing, only an operator can remove '
                f'the record, from Magnum\'s database'
            )

    def _finish_record(
        self, service: ClusterService, cluster: ClusterRecord
    ) -> str:
        """Magnum and Sahara destroy a cluster whose stack is gone, but a
        cluster whose delete failed stays failed: it needs its normal
        delete again, which now finds no stack and finishes."""
        if service.service == HEAT:
            return 'gone'
        now = self._checked(
            f'checking {cluster.label()}',
            lambda: service.get(self.conn, cluster),
        )
        if now is None:
            return 'gone'
        if now.status != service.deleting:
            self._checked(
                f'deleting {cluster.label()}',
                lambda: service.delete(self.conn, now),
            )
        if not self.options.wait:
            return now.status
        last = [now]

        def gone() -> bool:
            last[0] = self._checked(
                f'checking {cluster.label()}',
                lambda: service.get(self.conn, cluster),
            )
            return last[0] is None

        if not self._wait(
            gone,
            self.options.timeout,
            stopped=f'{cluster.label()}: its stack was abandoned; the '
            f'cluster was not waited for (status {now.status})',
        ):
            raise CascadeError(
                f'{cluster.label()}: its stack was abandoned '
                f'but the cluster still exists after '
                f'{self.options.timeout:g}s (status '
                f'{last[0].status}).'
            )
        return 'gone'
