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


"""The manifest file: what an abandoned stack left behind, written before
the abandon and after each change, and read back for a resume."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from typing import Any

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows.clusters import policies
from osc_cascade.workflows.clusters.records import (
    HEAT,
    ClusterRecord,
    StackRecord,
    StackResource,
)
from osc_cascade.workflows.force_delete import leftovers

MANIFEST_FORMAT = 1

# A manifest's state: written before the abandon, then its outcome.
ABANDONING = 'abandoning'
ABANDON_UNKNOWN = 'abandon-unknown'  # Heat's answer may hide an abandon


@dataclasses.dataclass
class Manifest:
    """A manifest read back (``read_manifest``)."""

    path: str
    data: dict[str, Any]

    @property
    def state(self) -> str:
        return self.data['state']

    @property
    def cluster(self) -> ClusterRecord:
        return ClusterRecord(**self.data['cluster'])

    @property
    def stack(self) -> StackRecord:
        return StackRecord(**self.data['stack'])

    @property
    def resources(self) -> list[StackResource]:
        return policies.with_policies(
            [StackResource.from_dict(r) for r in self.data['resources']],
            [self.data.get('abandon'), self.data.get('export')],
        )

    @property
    def leftovers(self) -> dict[str, str]:
        """What an earlier deletion made of each resource, by key."""
        return dict(self.data.get('leftovers') or {})

    def pending(self) -> list[StackResource]:
        """The resources no earlier deletion deleted or found gone."""
        done = self.leftovers
        return [
            r
            for r in self.resources
            if done.get(r.key) not in (leftovers.DELETED, leftovers.GONE)
        ]


def default_manifest_name(cluster: ClusterRecord, stack: StackRecord) -> str:
    prefix = 'stack' if cluster.service == HEAT else 'cluster'
    name = re.sub(r'[^A-Za-z0-9_.-]', '_', cluster.name) or cluster.id
    return f'{prefix}-{name}-{stack.id}-abandoned.json'


def write_manifest(path: str, manifest: dict[str, Any]) -> None:
    """Replace the file whole: a reader, or a run that died meanwhile,
    finds the previous manifest or this one, never half of one."""
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(tmp, path)


def read_manifest(path: str) -> Manifest:
    """A manifest this command wrote; what is not one is refused in one
    line."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as exc:
        raise CascadeError(
            f'Cannot read the manifest {path}: {exc.strerror or exc}.'
        ) from exc
    except ValueError as exc:
        raise CascadeError(
            f'{path} is not a force-delete manifest: not JSON ({exc}).'
        ) from exc
    manifest = Manifest(path, data)
    try:
        if data.get('format') != MANIFEST_FORMAT:
            raise ValueError(f'format {data.get("format")!r}')
        # each part as the resume reads it
        _ = (manifest.state, manifest.cluster, manifest.stack)
        _ = (manifest.resources, manifest.leftovers)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise CascadeError(
            f'{path} is not a force-delete manifest of format '
            f'{MANIFEST_FORMAT} ({type(exc).__name__}: {exc}).'
        ) from exc
    return manifest
