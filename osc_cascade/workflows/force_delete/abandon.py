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


"""Heat's abandon of a cluster's stack: the export that checks it is
allowed, the abandon with its manifest written first, and an answer that
may hide an abandon that happened (the stack then says)."""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import os
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import heat
from osc_cascade.engine.errors import CascadeError, describe
from osc_cascade.workflows.clusters.records import (
    NEEDS,
    ClusterRecord,
    StackRecord,
    StackResource,
)
from osc_cascade.workflows.force_delete import manifest as manifests
from osc_cascade.workflows.force_delete.base import ForceDeleteBase
from osc_cascade.workflows.force_delete.manifest import (
    ABANDON_UNKNOWN,
    ABANDONING,
    MANIFEST_FORMAT,
)
from osc_cascade.workflows.force_delete.outcome import (
    ABANDONED,
    ForceDeleteOutcome,
    Preview,
)

#: how long a stack gets to be gone after an abandon whose answer was an
#: error that may hide one: Heat's engine answers once it has started to
#: forget the stack, so a stack still there after this was not abandoned
ABANDON_SETTLE = 60.0


def _may_have_happened(exc: BaseException | None) -> bool:
    """Whether a failed abandon may have been carried out all the same:
    only an HTTP 4xx is Heat's refusal; a 5xx may come from a proxy while
    heat-engine went on, a dropped connection or a timeout may have lost
    the answer, and an answer that cannot be read was an answer."""
    if isinstance(exc, sdk_exc.HttpException):
        return exc.status_code is None or exc.status_code >= 500
    return True


class StackAbandon(ForceDeleteBase):
    """Abandon a stack, keeping its manifest consistent."""

    def _abandon(
        self,
        preview: Preview,
        stack: StackRecord,
        left: Sequence[StackResource],
        path: str,
        outcome: ForceDeleteOutcome,
    ) -> dict[str, Any]:
        """Abandon the stack, with the manifest of what it leaves at
        ``path``; the manifest written. The outcome has the manifest as
        long as it is kept, and the result once the stack is abandoned."""
        cluster = preview.cluster
        manifest = {
            'format': MANIFEST_FORMAT,
            'state': ABANDONING,
            'written_at': self.now().isoformat(),
            'cluster': dataclasses.asdict(cluster),
            'stack': dataclasses.asdict(stack),
            'resources': [r.to_dict() for r in left],
            'export': preview.export,
            'abandon': None,
        }
        # written before the abandon: if this run dies right after it, the
        # record of what was left behind is already on disk
        manifests.write_manifest(path, manifest)
        outcome.manifest = path
        try:
            abandoned = self._stack_data(cluster, stack, 'abandon')
        except CascadeError as exc:
            if not _may_have_happened(exc.__cause__):
                os.remove(path)  # Heat refused: nothing was left behind
                outcome.manifest = ''
                raise
            abandoned = self._abandon_unknown(stack, path, manifest, exc)
        outcome.result = ABANDONED
        manifest.update(state=ABANDONED, abandon=abandoned)
        manifests.write_manifest(path, manifest)
        if not self._wait(
            lambda: self._stack_gone(stack),
            self.options.timeout,
            stopped=self._resume_hint(cluster, path),
        ):
            raise CascadeError(
                f'{cluster.label()}: stack {stack.name} was '
                f'abandoned but still exists after '
                f'{self.options.timeout:g}s.'
            )
        return manifest

    def _abandon_unknown(
        self,
        stack: StackRecord,
        path: str,
        manifest: dict[str, Any],
        error: CascadeError,
    ) -> None:
        """After an abandon whose answer may hide that it happened: the
        manifest stays, marked so, and the stack says what happened. Gone,
        it was abandoned (Heat's data went with the answer: None); still
        there, it was not, which fails the cluster."""
        manifest.update(state=ABANDON_UNKNOWN, abandon_answer=str(error))
        manifests.write_manifest(path, manifest)
        settle = min(self.options.timeout, ABANDON_SETTLE)
        self.notify(
            f'{error} The abandon may have happened all the same: '
            f'{path} is kept; checking for up to {settle:g}s whether '
            f'stack {stack.name} is gone'
        )
        if self._wait(
            lambda: self._stack_gone(stack),
            settle,
            stopped=f'the abandon of stack {stack.name} may have happened: '
            f'{path} is kept (state {ABANDON_UNKNOWN}); `openstack cluster '
            f'force-delete --delete-leftovers --manifest {path}` deletes '
            f'what it lists once the stack is gone',
        ):
            self.notify(f'stack {stack.name} is gone: it was abandoned')
            return None
        manifest['stack_after_abandon'] = f'still exists after {settle:g}s'
        manifests.write_manifest(path, manifest)
        raise CascadeError(
            f'{error} Stack {stack.name} still exists {settle:g}s later, '
            f'so it was most likely not abandoned and what it holds is '
            f'still Heat\'s; {path} is kept (state {ABANDON_UNKNOWN}). '
            f'Force-delete it again.'
        ) from error

    def _stack_data(
        self, cluster: ClusterRecord, stack: StackRecord, action: str
    ) -> dict[str, Any] | None:
        """Export (changes nothing) or abandon the stack, once. What Heat's
        refusal means for a force-delete is said here: a cloud without
        abandon answers 400 NotSupported."""
        call = heat.export_stack if action == 'export' else heat.abandon_stack
        try:
            return call(self.conn, stack.name, stack.id)
        except sdk_exc.HttpException as exc:
            code, error = exc.status_code, heat.error_of(exc)
            if code == 404 and action == 'export':
                return None  # a Heat without export: the abandon will tell
            detail = error.get('message') or exc.response.text.strip()
            what = f'Cannot force-delete {cluster.label()}'
            if code == 400 and error.get('type') == 'NotSupported':
                message = (
                    f'the cloud has stack abandon disabled '
                    f'(enable_stack_abandon = false in heat.conf, Heat\'s '
                    f'default; heat-engine needs it set to true). Heat '
                    f'said: {error.get("message", "")} Stack {stack.name} '
                    f'was not abandoned.'
                )
            elif code == 403:
                message = (
                    f'Heat refused to {action} stack {stack.name} (HTTP '
                    f'403): {NEEDS}. {detail}'
                )
            elif code == 404:
                message = (
                    f'Heat no longer knows stack {stack.name} ({stack.id}) '
                    f'(HTTP 404): it was deleted meanwhile or is not '
                    f'visible to you. Nothing was abandoned.'
                )
            elif code == 409:
                message = (
                    f'stack {stack.name} is locked by another operation '
                    f'(HTTP 409); run again later. {detail}'
                )
            else:
                message = (
                    f'Heat answered HTTP {code} to the {action} of stack '
                    f'{stack.name}. {detail}'
                )
            raise CascadeError(f'{what}: {message}') from exc
        except Exception as exc:  # no answer, or one that is not JSON
            raise CascadeError(
                describe(
                    f'Cannot force-delete {cluster.label()}: the {action} '
                    f'of stack {stack.name}',
                    exc,
                    needs=NEEDS,
                )
            ) from exc
