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


"""What a force-delete does with what an abandon left behind: which of
it still exists, its deletion (``leftovers``), and the resume
from a manifest alone (``load``, ``pending_actions``, ``resume``)."""

from __future__ import annotations

from collections.abc import Sequence
import os

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows.clusters.records import (
    HEAT,
    ClusterRecord,
    StackRecord,
    StackResource,
)
from osc_cascade.workflows.force_delete import leftovers
from osc_cascade.workflows.force_delete import manifest as manifests
from osc_cascade.workflows.force_delete.base import ForceDeleteBase
from osc_cascade.workflows.force_delete.manifest import (
    Manifest,
    default_manifest_name,
    read_manifest,
)
from osc_cascade.workflows.force_delete.outcome import (
    ABANDONED,
    ForceDeleteOutcome,
    why,
)


class LeftoverSteps(ForceDeleteBase):
    """Check and delete what an abandoned stack left; resume from its
    manifest."""

    def _point_to_manifest(self, cluster: ClusterRecord) -> None:
        """A stack gone before this run may have been abandoned by an
        earlier one that stopped: its manifest says what was left."""
        path = self.options.manifest or (
            cluster.stack_id
            and default_manifest_name(
                cluster, StackRecord(cluster.stack_id, '', '', '')
            )
        )
        if path and os.path.exists(path):
            self.notify(
                f'{cluster.label()}: {path} lists what an earlier run '
                f'left behind; delete it with `openstack cluster '
                f'force-delete --delete-leftovers --manifest {path}`'
            )

    def _remaining(
        self, cluster: ClusterRecord, left: Sequence[StackResource]
    ) -> tuple[list[StackResource], list[StackResource]]:
        """What of ``left`` still exists (or cannot be checked), and what
        is gone; all of it when the check fails."""
        try:
            return leftovers.remaining(
                self.conn,
                left,
                parallel=self.options.parallel,
                retry=self.retry,
                clock=self.clock,
            )
        except CascadeError as exc:
            self.notify(
                f'{cluster.label()}: could not check which of the '
                f'{len(left)} resource(s) its stack left still exist, so '
                f'all are listed: {exc}'
            )
            return list(left), []

    def _delete_leftovers(
        self, left: Sequence[StackResource]
    ) -> dict[str, str]:
        return leftovers.delete(
            self.conn,
            left,
            parallel=self.options.parallel,
            timeout=self.options.timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=self.on_event,
            on_plan=self.on_plan,
            stop=self.stop,
        )

    # -- resuming from a manifest -------------------------------------------

    def load(self, path: str) -> Manifest:
        """The manifest of an earlier run, to delete what it lists. One
        written before the abandon's outcome was known counts once the
        stack is gone; while it exists, what it holds is Heat's."""
        manifest = read_manifest(path)
        if manifest.state != ABANDONED:
            stack, cluster = manifest.stack, manifest.cluster
            if not self._stack_gone(stack):
                again = (
                    f'--stack {stack.id}'
                    if cluster.service == HEAT
                    else cluster.id
                )
                raise CascadeError(
                    f'{path} was written before stack {stack.name} '
                    f'({stack.id}) was abandoned (state {manifest.state}), '
                    f'and the stack still exists: what it holds is still '
                    f'Heat\'s. Force-delete it again (openstack cluster '
                    f'force-delete {again}).'
                )
        return manifest

    def pending_actions(
        self, manifest: Manifest
    ) -> list[tuple[StackResource, str]]:
        """What a resume would do with each resource of the manifest,
        changing nothing."""
        done = manifest.leftovers
        pending = manifest.pending()
        there, _gone, kept = leftovers.check(
            self.conn,
            pending,
            parallel=self.options.parallel,
            retry=self.retry,
            clock=self.clock,
        )
        still = {r.key for r in there}
        out = []
        for res in manifest.resources:
            if res.key in done and res not in pending:
                action = f'nothing: {done[res.key]} before'
            elif res.key in kept:
                action = f'nothing: {kept[res.key]}'
            elif res.key not in still:
                action = 'nothing: already gone'
            elif res.deletable:
                action = 'delete'
            else:
                action = f'leave (no cascade kind for {res.type})'
            out.append((res, action))
        return out

    def resume(self, manifest: Manifest) -> ForceDeleteOutcome:
        """Delete what the manifest lists and still exists, in dependency
        order; the manifest then says what became of each. Interrupted,
        it raises ``Interrupted`` once the manifest is written (``outcomes``
        has the outcome): a re-run looks only for the rest."""
        outcome = ForceDeleteOutcome(
            manifest.cluster,
            ABANDONED,
            record='not checked',
            left_behind=manifest.resources,
            manifest=manifest.path,
        )
        try:
            pending = manifest.pending()
            self.notify(
                f'{manifest.cluster.label()}: deleting what stack '
                f'{manifest.stack.name} left behind, as {manifest.path} '
                f'lists it: {len(pending)} of '
                f'{len(outcome.left_behind)} resource(s) to look for'
            )
            done = {
                **manifest.leftovers,
                **(self._delete_leftovers(pending) if pending else {}),
            }
            outcome.leftovers = {
                r.key: done[r.key]
                for r in outcome.left_behind
                if r.key in done
            }
            manifests.write_manifest(
                manifest.path,
                {
                    **manifest.data,
                    'state': ABANDONED,
                    'leftovers': outcome.leftovers,
                },
            )
        except Exception as exc:  # the outcome says it
            outcome.error = why(exc)
        self.outcomes = [outcome]
        if self.stop.requested:
            raise self.stop.error(
                self._resume_hint(manifest.cluster, manifest.path)
            )
        return outcome
