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


"""What a force-delete is asked to do and what became of each cluster:
the options, the preview of a cluster, its outcome, the results."""

from __future__ import annotations

import dataclasses
from typing import Any

from osc_cascade.engine.errors import CascadeError, one_line
from osc_cascade.workflows.clusters.records import (
    ClusterRecord,
    StackRecord,
    StackResource,
)
from osc_cascade.workflows.force_delete import keeps, leftovers

# How far the force-delete of a cluster went (ForceDeleteOutcome.result).
DELETED_NORMALLY = 'deleted'  # by its normal delete: nothing abandoned
ABANDONED = 'abandoned'  # its stack was abandoned
FAILED = 'failed'  # before either
#: no stack to abandon, and the service keeps the record its delete failed
RECORD_LEFT = 'record left'

#: the outcome of a cluster that an interruption came before
NOT_STARTED = 'not started: the run was interrupted before it'


@dataclasses.dataclass
class ForceDeleteOptions:
    #: seconds the normal delete gets before the stack is abandoned
    grace: float = 300.0
    #: wait for the cluster's record to go after the abandon
    wait: bool = False
    #: the longest wait for one thing (the stack, the record, a leftover)
    timeout: float = 600.0
    delete_leftovers: bool = False
    parallel: int = 10
    #: manifest path (one cluster only); default: default_manifest_name()
    manifest: str | None = None
    #: a cluster on a Cluster API driver even if Magnum says it is
    #: healthy or its servers are ACTIVE
    force: bool = False
    #: magnum-capi-helm's ``[capi_helm] namespace_prefix`` (its Cluster
    #: API clusters' namespaces: ``<prefix>-<project>``)
    capi_helm_prefix: str = 'magnum'


@dataclasses.dataclass
class Preview:
    """What is known before anything changes."""

    cluster: ClusterRecord
    stack: StackRecord | None
    resources: list[StackResource]
    #: the stack's export: abandon's data before any delete attempt
    export: dict[str, Any] | None = None
    #: why the cluster cannot be force-deleted (``preview_all``)
    error: str = ''
    #: a Magnum cluster on a Cluster API driver (no stack): what its
    #: controllers made (``workflows.k8s.footprint``) and its plan
    footprint: Any = None
    plan: Any = None

    def left_behind(self) -> list[StackResource]:
        return [r for r in self.resources if r.left_behind]


def planned_action(res: StackResource, delete_leftovers: bool) -> str:
    """What a force-delete would do with a resource its stack leaves."""
    if not delete_leftovers:
        return 'leave behind'
    why = keeps.kept(res)
    if why:
        return f'leave behind ({why})'
    if res.deletable:
        return 'leave behind, then delete'
    return f'leave behind (no cascade kind for {res.type})'


@dataclasses.dataclass
class ForceDeleteOutcome:
    cluster: ClusterRecord
    #: DELETED_NORMALLY, ABANDONED, or FAILED before either
    result: str = FAILED
    #: what remains of the cluster's record: gone, or its status
    record: str = ''
    left_behind: list[StackResource] = dataclasses.field(default_factory=list)
    manifest: str = ''
    #: with delete_leftovers: resource key -> what became of it
    #: (``leftovers``)
    leftovers: dict[str, str] = dataclasses.field(default_factory=dict)
    error: str = ''

    def not_deleted(self) -> list[str]:
        return [
            f'{key}: {outcome}'
            for key, outcome in sorted(self.leftovers.items())
            if outcome not in (leftovers.DELETED, leftovers.GONE)
            and outcome not in keeps.HEAT_KEEPS
        ]

    def kept(self) -> list[str]:
        """What was kept as Heat's own delete would have kept it."""
        return [
            f'{key}: {outcome}'
            for key, outcome in sorted(self.leftovers.items())
            if outcome in keeps.HEAT_KEEPS
        ]

    @property
    def ok(self) -> bool:
        return not self.error and not self.not_deleted()

    def problems(self) -> list[str]:
        """What went wrong, one line each, naming the cluster."""
        lines = []
        if self.error:
            label = self.cluster.label()
            lines.append(
                self.error if label in self.error else f'{label}: {self.error}'
            )
        if self.not_deleted():
            lines.append(
                f'{self.cluster.label()}: what its stack left behind '
                f'was not all deleted ({self.manifest}): '
                + '; '.join(self.not_deleted())
            )
        return lines


def why(exc: Exception) -> str:
    """A cluster's failure in one line: the workflow's own words, or what
    the unexpected error was."""
    if isinstance(exc, CascadeError):
        return str(exc)
    return f'unexpected error: {type(exc).__name__}: {one_line(exc)}'
