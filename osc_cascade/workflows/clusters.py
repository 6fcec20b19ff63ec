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


"""The clusters ``cluster force-delete`` works on, the services they live
in, and which of them are stuck.

A cluster is a Magnum cluster (Heat driver), a Sahara cluster, or with
``--stack`` a plain Heat stack: each is built on a stack. Stuck are those
in a state that is not final (``*_IN_PROGRESS``; for Sahara anything but
``Active`` and ``Error``) and those in ``DELETE_FAILED``, a deletion that
stopped while the cluster still exists, not updated for longer than a given
age. The other failed states (``CREATE_FAILED``..., Sahara's ``Error``)
are final: nothing is in progress there, and the way out is a normal
delete.

Of the stuck, those *updating* (``UPDATE_IN_PROGRESS``, a rollback, a
resume...; Sahara's scaling) are clusters in use that an operation is
changing: they are taken only when asked (``include_updating``), whatever
their age. The others are being created or deleted.

Every call is retried with the caller's clock and policy while it may
pass, and a failure that stays is one line (``engine.retry.checked``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import dataclasses
import datetime
import re
from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import heat, sahara
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.retry import Clock, RetryPolicy, checked

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

#: the stuck states of a Heat-based cluster that are no update of a
#: cluster in use: a creation (nothing uses it yet) or a deletion (its
#: owner wants it gone); every other ``*_IN_PROGRESS`` (UPDATE, ROLLBACK,
#: RESUME, SUSPEND, SNAPSHOT, CHECK, RESTORE, ADOPT) is an update
NOT_UPDATING = frozenset({'CREATE_IN_PROGRESS', 'DELETE_IN_PROGRESS'})
#: Sahara's states of a scaling (its creation and scaling share
#: Validating and Configuring, which are not counted)
SAHARA_UPDATING = frozenset({'Scaling', 'Adding Instances', 'Decommissioning'})

_AGE_UNITS = {'s': 1, 'm': 60, 'h': 3600, 'd': 86400}


def parse_age(text: str) -> float:
    """``90s``, ``30m``, ``24h``, ``7d`` (or bare seconds) as seconds."""
    m = re.fullmatch(r'\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*', text.lower())
    if not m:
        raise ValueError(f'{text!r} is not an age such as 90s, 30m, 24h or 7d')
    return float(m.group(1)) * _AGE_UNITS[m.group(2) or 's']


def format_age(seconds: float) -> str:
    seconds = int(seconds)
    parts = []
    for unit, size in (('d', 86400), ('h', 3600), ('m', 60), ('s', 1)):
        if seconds >= size or (unit == 's' and not parts):
            parts.append(f'{seconds // size}{unit}')
            seconds %= size
        if len(parts) == 2:
            break
    return ' '.join(parts)


def parse_time(text: str) -> datetime.datetime:
    """An ISO 8601 time as Heat (``Z``), Magnum (``+00:00``) or Sahara
    (naive, in UTC) writes it."""
    value = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


# -- what is force-deleted ---------------------------------------------------


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
    #: the Heat stack, when the service says which (Sahara does not)
    stack_id: str = ''

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
        return cls(**{k: data[k] for k in fields})


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


# -- the services a cluster lives in ----------------------------------------


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
        try:
            found = conn.container_infrastructure_management.get_cluster(
                name_or_id
            )
        except sdk_exc.NotFoundException:
            return None
        # found.id echoes what was asked for; the UUID is the cluster's id
        return ClusterRecord(
            MAGNUM,
            found.uuid,
            found.name or '',
            found.project_id or '',
            found.status or '',
            found.updated_at or found.created_at or '',
            found.stack_id or '',
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
        # Sahara names the stack after the cluster, in its project
        named = heat.stacks(conn, name=cluster.name, tenant=cluster.project_id)
        return [StackRecord.from_api(s) for s in named]


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


# -- finding them ------------------------------------------------------------


def find_cluster(
    conn: Any,
    services: Sequence[ClusterService],
    name_or_id: str,
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> ClusterRecord:
    matches: list[ClusterRecord] = []
    for service in services:
        found = checked(
            f'looking up {name_or_id!r}',
            lambda s=service: s.find(conn, name_or_id),
            retry=retry,
            clock=clock,
            needs=NEEDS,
        )
        if len(found) > 1:
            raise CascadeError(
                f'More than one {noun(service.service)} is named '
                f'{name_or_id!r}: '
                + ', '.join(f'{c.id} (project {c.project_id})' for c in found)
                + '; name it by ID.'
            )
        matches += found
    what = 'stack' if services[0].service == HEAT else 'cluster'
    if not matches:
        where = ', '.join(s.service for s in services)
        raise CascadeError(
            f'No {what} with a name or ID of {name_or_id!r} '
            f'exists (looked in {where}).'
        )
    if len(matches) > 1:
        raise CascadeError(
            f'{name_or_id!r} names a cluster in more than '
            f'one service: '
            + ', '.join(c.label() for c in matches)
            + '; name it by ID.'
        )
    return matches[0]


@dataclasses.dataclass(frozen=True)
class StuckCluster:
    cluster: ClusterRecord
    age: float


def find_stuck(
    conn: Any,
    services: Iterable[ClusterService],
    older_than: float,
    now: datetime.datetime,
    project_id: str | None = None,
    *,
    include_updating: bool = False,
    retry: RetryPolicy,
    clock: Clock,
) -> list[StuckCluster]:
    """Clusters in a stuck state not updated for ``older_than`` seconds
    (of one project, or of all), oldest first; those updating only with
    ``include_updating``."""
    out = []
    for service in services:
        for cluster in checked(
            f'listing {service.service} clusters',
            lambda s=service: s.unsettled(conn),
            retry=retry,
            clock=clock,
            needs=NEEDS,
        ):
            if not cluster.updated_at or project_id not in (
                None,
                cluster.project_id,
            ):
                continue
            if service.is_updating(cluster.status) and not include_updating:
                continue
            age = (now - parse_time(cluster.updated_at)).total_seconds()
            if age >= older_than:
                out.append(StuckCluster(cluster, age))
    return sorted(out, key=lambda s: (-s.age, s.cluster.name))
