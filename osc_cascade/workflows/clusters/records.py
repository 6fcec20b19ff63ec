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


"""What ``cluster force-delete`` works on, as the services record it: a
cluster, its stack, and the resources Heat holds for the stack."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import heat

MAGNUM = 'magnum'
SAHARA = 'sahara'
HEAT = 'heat'

#: what a 403 means the caller lacks
NEEDS = 'force-delete needs the admin role'

#: a router interface's physical id is ``<router id>:subnet_id=<id>``: it
#: goes when the router's interfaces are removed
ROUTER_INTERFACE = 'OS::Neutron::RouterInterface'
#: types that hold nothing outside Heat, so an abandon leaves nothing
HEAT_ONLY_TYPES = frozenset(
    {
        'OS::Heat::None',
        'OS::Heat::RandomString',
        'OS::Heat::TestResource',
        'OS::Heat::Value',
        'OS::Heat::CloudConfig',
        'OS::Heat::MultipartMime',
        'OS::Heat::SoftwareConfig',
        'OS::Heat::StructuredConfig',
    }
)


def noun(service: str) -> str:
    """What the clusters of a service are called in messages."""
    return 'stack' if service == HEAT else f'{service} cluster'


@dataclasses.dataclass(frozen=True)
class ClusterRecord:
    """A cluster as its service records it."""

    service: str
    id: str
    name: str
    project_id: str
    status: str
    #: last update as the service wrote it (its creation if never updated)
    updated_at: str = ''
    #: the Heat stack, when the service says which (Sahara does not); a
    #: Magnum Cluster API driver's name of the cluster
    stack_id: str = ''
    #: Magnum's health_status (HEALTHY, UNHEALTHY, UNKNOWN), if it says
    health: str = ''
    #: who created it (Magnum's user_id): its driver's application
    #: credential is that user's
    user_id: str = ''

    def label(self) -> str:
        return f'{noun(self.service)} {self.name} ({self.id})'


@dataclasses.dataclass(frozen=True)
class StackRecord:
    """A stack as Heat records it."""

    id: str
    name: str
    project_id: str
    status: str

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> StackRecord:
        return cls(
            id=data['id'],
            name=data['stack_name'],
            project_id=heat.project_of(data),
            status=data['stack_status'],
        )


@dataclasses.dataclass(frozen=True)
class StackResource:
    """A resource that Heat holds for the stack or one of its nested
    stacks."""

    stack: str
    stack_id: str
    name: str
    type: str
    physical_id: str
    project_id: str
    status: str
    #: a nested stack: Heat abandons it with its parent
    nested: bool = False
    #: what the stack's template says Heat does with it when the stack
    #: goes (Delete, Retain, Snapshot); '' when the template no longer
    #: says it (a delete swaps in an empty template)
    deletion_policy: str = ''
    #: the resource the template only adopted (Heat never deletes it)
    external_id: str = ''
    #: a Swift container's PurgeOnDelete: whether Heat's delete empties
    #: it (else it refuses one that holds objects); None when the template
    #: does not say (another type, or a template a delete emptied)
    purge_on_delete: bool | None = None
    #: which Swift container of that name it was when the manifest was
    #: written: Swift's ``X-Timestamp`` (its creation) and
    #: ``X-PUT-Timestamp`` (its last PUT); '' when not read
    incarnation: str = ''

    @property
    def kind(self) -> str:
        return kinds_mod.for_heat_type(self.type)

    @property
    def left_behind(self) -> bool:
        """Whether an abandon leaves something of it in the cloud."""
        return (
            bool(self.physical_id)
            and not self.nested
            and (self.type not in HEAT_ONLY_TYPES)
        )

    @property
    def deletable(self) -> bool:
        """Whether the leftovers' deletion can delete it: with its kind,
        or (an interface) with its router."""
        return bool(self.kind) or self.type == ROUTER_INTERFACE

    @property
    def key(self) -> str:
        return f'{self.type} {self.physical_id}'

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        del data['nested']
        data['kind'] = self.kind
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StackResource:
        """A resource as a manifest lists it (``to_dict``)."""
        fields = {f.name for f in dataclasses.fields(cls)} - {'nested'}
        # a manifest written before the template was read lacks them
        optional = {
            'deletion_policy',
            'external_id',
            'purge_on_delete',
            'incarnation',
        }
        return cls(
            **{k: data[k] for k in fields if k in data or k not in optional}
        )


_STACK_LINK = re.compile(r'/stacks/([^/]+)/([^/]+)$')


def record_resources(conn: Any, stack: StackRecord) -> list[StackResource]:
    out = []
    for res in heat.resources(conn, stack.name, stack.id):
        links = {link['rel']: link['href'] for link in res.get('links', [])}
        owner = _STACK_LINK.search(links.get('stack', ''))
        out.append(
            StackResource(
                stack=owner.group(1) if owner else stack.name,
                stack_id=owner.group(2) if owner else stack.id,
                name=res['resource_name'],
                type=res['resource_type'],
                physical_id=res.get('physical_resource_id') or '',
                project_id=stack.project_id,
                status=res.get('resource_status', ''),
                nested='nested' in links,
            )
        )
    return out
