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

"""What the planner works on: references to cloud resources and plan steps.

Everything here is plain data that round-trips through JSON, so that a plan
can be saved with ``--plan-file`` and executed later exactly as shown.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class ResourceRef:
    """One resource found in the cloud.

    ``kind`` names the resource kind (``network.port``), ``project_id`` is the
    owner as the service reported it, and ``attrs`` holds only the attributes
    that ordering or deletion needs (a port's device owner, a backup's parent).
    """

    kind: str
    id: str
    name: str = ''
    project_id: str = ''
    attrs: dict[str, Any] = dataclasses.field(default_factory=dict, hash=False)
    #: when the service says it was created (ISO 8601), if it says: what
    #: tells a resource created after the drain from one the preview missed
    created_at: str = dataclasses.field(default='', compare=False)
    #: the catalog region whose service holds it; '' for what is global
    #: (Keystone's): the same ID in two regions is two resources
    region: str = ''

    @property
    def key(self) -> str:
        # made once (frozen: it cannot change): a plan of 100,000
        # resources asked for it 2.3 million times, and Step.id 1.4 million
        # (functools.cached_property takes a lock each time, slower still)
        made = self.__dict__.get('_key')
        if made is None:
            made = f'{self.kind}:{self.id}' + (
                f'@{self.region}' if self.region else ''
            )
            object.__setattr__(self, '_key', made)
        return made

    def label(self) -> str:
        return (
            f'{self.kind} {self.name} ({self.id})'
            if self.name
            else (f'{self.kind} {self.id}')
        ) + (f' in {self.region}' if self.region else '')

    def in_region(self, region: str) -> ResourceRef:
        # not dataclasses.replace: three times slower, and every resource
        # found is placed in its region and out of it again to be planned
        return ResourceRef(
            self.kind,
            self.id,
            self.name,
            self.project_id,
            self.attrs,
            self.created_at,
            region,
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResourceRef:
        return cls(**data)


DELETE = 'delete'
KEEP = 'keep'


@dataclasses.dataclass(frozen=True)
class Step:
    """A node of the plan: delete a resource, keep it, or a break action.

    A break action (``action`` is e.g. ``remove_router_interface``) undoes a
    reference so that a delete can succeed; it acts on ``target`` with
    ``params``. A ``keep`` step records a resource that is listed in the plan
    but deliberately not deleted, with the reason in ``params['reason']``.
    """

    action: str
    target: ResourceRef
    params: dict[str, Any] = dataclasses.field(
        default_factory=dict, hash=False
    )

    @property
    def id(self) -> str:
        made = self.__dict__.get('_id')  # made once, as ResourceRef.key
        if made is None:
            made = f'{self.action}:{self.target.key}'
            if self.action not in (DELETE, KEEP):
                suffix = ','.join(
                    f'{k}={v}' for k, v in sorted(self.params.items())
                )
                made += f'[{suffix}]' if suffix else ''
            object.__setattr__(self, '_id', made)
        return made

    @property
    def is_delete(self) -> bool:
        return self.action == DELETE

    @property
    def is_break_action(self) -> bool:
        return self.action not in (DELETE, KEEP)

    @property
    def is_report_only(self) -> bool:
        """A keep step for something that is not the project's own (a
        user's keypair): it is shown, and keeps nothing alive."""
        return self.action == KEEP and self.params.get('blocking') is False

    @property
    def is_stuck(self) -> bool:
        """A keep of what its service will not delete from its state
        (``keep(stuck=True)``)."""
        return self.action == KEEP and bool(self.params.get('stuck'))

    def describe(self) -> str:
        if self.action == DELETE:
            return f'delete {self.target.label()}'
        if self.action == KEEP and self.params.get('stuck'):
            # the reason starts with its state: "is 'attaching' since ..."
            return f'{self.target.label()} {self.params.get("reason", "")}'
        if self.action == KEEP:
            return (
                f'keep {self.target.label()}: {self.params.get("reason", "")}'
            )
        detail = ', '.join(f'{k}={v}' for k, v in sorted(self.params.items()))
        return f'{self.action} on {self.target.label()}' + (
            f' ({detail})' if detail else ''
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            'action': self.action,
            'target': self.target.to_dict(),
            'params': dict(self.params),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        return cls(
            action=data['action'],
            target=ResourceRef.from_dict(data['target']),
            params=dict(data.get('params') or {}),
        )


def delete(ref: ResourceRef) -> Step:
    return Step(DELETE, ref)


def keep(
    ref: ResourceRef,
    reason: str,
    *,
    blocking: bool = True,
    shared: bool = False,
    stuck: bool = False,
) -> Step:
    """``shared``: kept because others may use it, which ``--delete-shared``
    overrides (the refusal then says so); ``stuck``: kept because its
    service refuses to delete it from its state, which waiting does not
    change (``ResourceKind.stuck_statuses``; ``--force-stuck``)."""
    params: dict[str, Any] = {'reason': reason}
    if stuck:
        params['stuck'] = True
    if not blocking:
        params['blocking'] = False
    if shared:
        params['shared'] = True
    return Step(KEEP, ref, params)
