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

"""``cluster force-delete``: the last resort for clusters stuck in deletion.

A cluster built on a Heat stack (a Magnum cluster of the Heat driver, a
Sahara cluster, or a plain stack) hangs in deletion when Heat cannot delete
one of the stack's resources. Heat can *abandon* a stack: the stack's record
goes, what it made stays. For one cluster, ``ForceDelete``:

1. records the stack's resources, nested ones included, and checks with an
   export (which changes nothing) that the cloud allows abandon at all, and,
   for a plain stack that it will delete itself, that Heat would not take
   the caller's own containers or keypairs of the same name with it;
2. unless the cluster is being deleted already, deletes it the normal way
   and gives that ``grace`` seconds: a delete that finishes abandons
   nothing, and the force path never replaces the normal delete;
3. writes the manifest of what the stack holds, then abandons the stack;
4. lets the service finish the cluster's record (Magnum and Sahara destroy
   a cluster whose stack is gone) and, with ``wait``, waits for it to go;
5. with ``delete_leftovers``, deletes what the manifest lists and still
   exists, in dependency order, with the cascade's kinds and executor.

Which clusters are stuck: those in a state that is not final
(``*_IN_PROGRESS``; for Sahara anything but ``Active`` and ``Error``) and
those in ``DELETE_FAILED``, a deletion that stopped while the cluster still
exists, that were not updated for longer than a given age. The other failed
states (``CREATE_FAILED``..., Sahara's ``Error``) are final: nothing is in
progress there, and the way out is a normal delete.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import dataclasses
import datetime
import json
import os
import re
from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade import kinds as kinds_mod
from osc_cascade.api import heat
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError
from osc_cascade.engine.executor import Event, Executor
from osc_cascade.engine.planner import Inventory, build_plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.retry import (
    Clock,
    RetryPolicy,
    is_transient,
    retrying,
)
from osc_cascade.kinds import network, orchestration

MANIFEST_FORMAT = 1

MAGNUM = 'magnum'
SAHARA = 'sahara'
HEAT = 'heat'

# What a force-delete did to a cluster.
DELETED = 'deleted'  # the normal delete finished: nothing abandoned
ABANDONED = 'abandoned'  # the stack was abandoned
FAILED = 'failed'

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

# Outcomes of a leftover that are not a failure.
LEFTOVER_DELETED = 'deleted'
LEFTOVER_GONE = 'already gone'

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


@dataclasses.dataclass(frozen=True)
class Cluster:
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
        what = 'stack' if self.service == HEAT else f'{self.service} cluster'
        return f'{what} {self.name} ({self.id})'


@dataclasses.dataclass(frozen=True)
class Stack:
    id: str
    name: str
    project_id: str
    status: str

    @property
    def path(self) -> str:
        return heat.stack_path(self.name, self.id)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Stack:
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
    def key(self) -> str:
        return f'{self.type} {self.physical_id}'

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        del data['nested']
        data['kind'] = self.kind
        return data


_STACK_LINK = re.compile(r'/stacks/([^/]+)/([^/]+)$')


def record_resources(conn: Any, stack: Stack) -> list[StackResource]:
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
    """How one service finds, deletes and reports its clusters."""

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

    def find(self, conn: Any, name_or_id: str) -> Cluster | None:
        raise NotImplementedError

    def unsettled(self, conn: Any) -> list[Cluster]:
        """Every project's clusters in a stuck state."""
        raise NotImplementedError

    def get(self, conn: Any, cluster: Cluster) -> Cluster | None:
        raise NotImplementedError

    def delete(self, conn: Any, cluster: Cluster) -> None:
        raise NotImplementedError

    def stack(self, conn: Any, cluster: Cluster) -> Stack | None:
        raise NotImplementedError


class MagnumClusters(ClusterService):
    service = MAGNUM
    # the official type; catalogs usually say its alias container-infra,
    # which the SDK matches but has_service() does not accept
    service_type = 'container-infrastructure-management'
    deleting = 'DELETE_IN_PROGRESS'

    def find(self, conn, name_or_id):
        # Magnum takes a name or a UUID in the URL (409 if a name is
        # ambiguous)
        try:
            found = conn.container_infrastructure_management.get_cluster(
                name_or_id
            )
        except sdk_exc.NotFoundException:
            return None
        # found.id echoes what was asked for; the UUID is the cluster's id
        return Cluster(
            MAGNUM,
            found.uuid,
            found.name or '',
            found.project_id or '',
            found.status or '',
            found.updated_at or found.created_at or '',
            found.stack_id or '',
        )

    def unsettled(self, conn):
        # the list shows neither the owner nor the times: show each one
        listed = conn.container_infrastructure_management.clusters()
        found = (
            self.find(conn, c.uuid)
            for c in listed
            if self.is_stuck(c.status or '')
        )
        return [c for c in found if c is not None]

    def get(self, conn, cluster):
        return self.find(conn, cluster.id)

    def delete(self, conn, cluster):
        conn.container_infrastructure_management.delete_cluster(
            cluster.id, ignore_missing=True
        )

    def stack(self, conn, cluster):
        found = cluster.stack_id and heat.find_stack(conn, cluster.stack_id)
        return Stack.from_api(found) if found else None


class SaharaClusters(ClusterService):
    """Sahara's API v2 (retired in 2024, still found in the wild)."""

    service = SAHARA
    service_type = 'data-processing'
    deleting = 'Deleting'
    # a failed delete leaves the cluster in Error, which is also where a
    # failed creation ends: final, so not swept
    delete_failed = 'Error'
    final = frozenset({'Active', 'Error'})

    def is_stuck(self, status):
        return status not in self.final

    def _cluster(self, data):
        return Cluster(
            SAHARA,
            data['id'],
            data.get('name') or '',
            data.get('project_id') or data.get('tenant_id', ''),
            data.get('status') or '',
            data.get('updated_at') or data.get('created_at') or '',
        )

    def _call(self, conn, method, path, **kwargs):
        response = conn.data_processing.request(path, method, **kwargs)
        sdk_exc.raise_from_response(response)
        return response

    def find(self, conn, name_or_id):
        try:
            data = self._call(conn, 'GET', f'/clusters/{name_or_id}').json()
            return self._cluster(data['cluster'])
        except sdk_exc.NotFoundException:
            pass
        named = self._call(
            conn, 'GET', '/clusters', params={'name': name_or_id}
        ).json()['clusters']
        if len(named) > 1:
            raise CascadeError(
                f'More than one Sahara cluster is named {name_or_id!r}: '
                + ', '.join(c['id'] for c in named)
                + '; name it by ID.'
            )
        return self._cluster(named[0]) if named else None

    def unsettled(self, conn):
        listed = self._call(conn, 'GET', '/clusters').json()['clusters']
        return [
            self._cluster(c)
            for c in listed
            if self.is_stuck(c.get('status') or '')
        ]

    def get(self, conn, cluster):
        try:
            data = self._call(conn, 'GET', f'/clusters/{cluster.id}').json()
        except sdk_exc.NotFoundException:
            return None
        return self._cluster(data['cluster'])

    def delete(self, conn, cluster):
        try:
            self._call(conn, 'DELETE', f'/clusters/{cluster.id}')
        except sdk_exc.NotFoundException:
            pass

    def stack(self, conn, cluster):
        # Sahara names the stack after the cluster, in its project
        named = heat.stacks(conn, name=cluster.name, tenant=cluster.project_id)
        if len(named) > 1:
            raise CascadeError(
                f'{cluster.label()}: more than one stack of project '
                f'{cluster.project_id} is named {cluster.name!r}; '
                f'force-delete the right one with --stack.'
            )
        return Stack.from_api(named[0]) if named else None


class HeatStacks(ClusterService):
    """A plain stack is its own cluster."""

    service = HEAT
    service_type = 'orchestration'
    deleting = 'DELETE_IN_PROGRESS'

    def _cluster(self, data):
        stack = Stack.from_api(data)
        return Cluster(
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
            return self._cluster(found)
        # Heat finds names in the caller's project only
        named = heat.stacks(conn, name=name_or_id)
        if len(named) > 1:
            raise CascadeError(
                f'More than one stack is named {name_or_id!r}: '
                + ', '.join(
                    f'{s["id"]} (project {heat.project_of(s)})' for s in named
                )
                + '; name it by ID.'
            )
        return self._cluster(named[0]) if named else None

    def unsettled(self, conn):
        return [
            self._cluster(s)
            for s in heat.stacks(conn)
            if self.is_stuck(s['stack_status'])
        ]

    def get(self, conn, cluster):
        found = heat.get_stack(conn, cluster.name, cluster.id)
        return self._cluster(found) if found else None

    def delete(self, conn, cluster):
        try:
            heat.call(
                conn,
                'DELETE',
                heat.stack_path(cluster.name, cluster.id),
            )
        except sdk_exc.NotFoundException:
            pass

    def stack(self, conn, cluster):
        found = self.get(conn, cluster)
        return (
            Stack(cluster.id, cluster.name, cluster.project_id, found.status)
            if found
            else None
        )


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


def find_cluster(
    conn: Any, services: Sequence[ClusterService], name_or_id: str
) -> Cluster:
    matches = [
        c
        for c in (
            _checked(
                f'looking up {name_or_id!r}',
                lambda s=s: s.find(conn, name_or_id),
            )
            for s in services
        )
        if c is not None
    ]
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
    cluster: Cluster
    age: float


def find_stuck(
    conn: Any,
    services: Iterable[ClusterService],
    older_than: float,
    now: datetime.datetime,
    project_id: str | None = None,
) -> list[StuckCluster]:
    """Clusters in a stuck state not updated for ``older_than`` seconds
    (of one project, or of all), oldest first."""
    out = []
    for service in services:
        for cluster in _checked(
            f'listing {service.service} clusters',
            lambda s=service: s.unsettled(conn),
        ):
            if not cluster.updated_at or project_id not in (
                None,
                cluster.project_id,
            ):
                continue
            age = (now - parse_time(cluster.updated_at)).total_seconds()
            if age >= older_than:
                out.append(StuckCluster(cluster, age))
    return sorted(out, key=lambda s: (-s.age, s.cluster.name))


def _checked(what: str, call: Callable[[], Any]) -> Any:
    """An API call whose failure becomes one clear line. What may pass (a
    dropped connection, 5xx, 429) is retried with the executor's backoff:
    these are lookups and the cluster's normal delete, which a second try
    cannot harm (the abandon is not made through here)."""
    retry = RetryPolicy()
    try:
        return retrying(call, retry=retry, clock=Clock())
    except sdk_exc.HttpException as exc:
        raise CascadeError(http_message(what, exc)) from exc
    except Exception as exc:
        if is_transient(exc):  # a connection that kept failing
            raise CascadeError(
                f'{what} failed after {retry.max_attempts} attempts: {exc}'
            ) from exc
        raise


def http_message(what: str, exc: Exception) -> str:
    code = getattr(exc, 'status_code', None)
    detail = ' '.join(str(getattr(exc, 'details', None) or exc).split())
    if code == 403:
        return (
            f'{what} was refused (HTTP 403): force-delete needs the '
            f'admin role. {detail}'
        )
    if code == 404:
        return f'{what}: not found (HTTP 404). {detail}'
    return f'{what} failed (HTTP {code}): {detail}'


# -- force-delete ------------------------------------------------------------


@dataclasses.dataclass
class Options:
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


@dataclasses.dataclass
class Preview:
    """What is known before anything changes."""

    cluster: Cluster
    stack: Stack | None
    resources: list[StackResource]
    #: the stack's export: abandon's data before any delete attempt
    export: dict[str, Any] | None = None

    def left_behind(self) -> list[StackResource]:
        return [r for r in self.resources if r.left_behind]


@dataclasses.dataclass
class Outcome:
    cluster: Cluster
    #: how far it went: DELETED, ABANDONED, or FAILED before either
    result: str = FAILED
    #: what remains of the cluster's record: gone, or its status
    record: str = ''
    left_behind: list[StackResource] = dataclasses.field(default_factory=list)
    manifest: str = ''
    #: with delete_leftovers: resource key -> outcome
    leftovers: dict[str, str] = dataclasses.field(default_factory=dict)
    error: str = ''

    def not_deleted(self) -> list[str]:
        return [
            f'{key}: {outcome}'
            for key, outcome in sorted(self.leftovers.items())
            if outcome not in (LEFTOVER_DELETED, LEFTOVER_GONE)
        ]

    @property
    def ok(self) -> bool:
        return not self.error and not self.not_deleted()


def default_manifest_name(cluster: Cluster, stack: Stack) -> str:
    prefix = 'stack' if cluster.service == HEAT else 'cluster'
    name = re.sub(r'[^A-Za-z0-9_.-]', '_', cluster.name) or cluster.id
    return f'{prefix}-{name}-{stack.id}-abandoned.json'


class ForceDelete:
    def __init__(
        self,
        conn: Any,
        services: Iterable[ClusterService],
        options: Options | None = None,
        *,
        notify: Callable[[str], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        on_plan: Callable[[int], None] | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        now: Callable[[], datetime.datetime] = utcnow,
    ):
        self.conn = conn
        self.services = {s.service: s for s in services}
        self.options = options or Options()
        self.notify = notify or (lambda text: None)
        self.on_event = on_event
        #: told the number of steps of each leftover plan before it runs
        self.on_plan = on_plan or (lambda steps: None)
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.now = now

    # -- 1. look, change nothing ---------------------------------------------

    def preview(self, cluster: Cluster) -> Preview:
        service = self.services[cluster.service]
        stack = _checked(
            f'finding the stack of {cluster.label()}',
            lambda: service.stack(self.conn, cluster),
        )
        if stack is None:
            return Preview(cluster, None, [])
        resources = _checked(
            f'listing the resources of stack {stack.name}',
            lambda: record_resources(self.conn, stack),
        )
        if service.service == HEAT and cluster.status != service.deleting:
            self._check_namesakes(cluster, resources)
        return Preview(
            cluster,
            stack,
            resources,
            self._stack_data(cluster, stack, 'export'),
        )

    def _check_namesakes(
        self, cluster: Cluster, resources: Sequence[StackResource]
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

    # -- 2-5. force-delete ---------------------------------------------------

    def run(self, preview: Preview) -> Outcome:
        cluster = preview.cluster
        service = self.services[cluster.service]
        outcome = Outcome(cluster)
        try:
            if self._deleted_within_grace(service, cluster):
                self.notify(
                    f'{cluster.label()}: deleted by the normal '
                    f'delete; nothing was abandoned'
                )
                outcome.result, outcome.record = DELETED, 'gone'
                return outcome
            stack = _checked(
                f'finding the stack of {cluster.label()}',
                lambda: service.stack(self.conn, cluster),
            )
            if stack is None:
                self.notify(
                    f'{cluster.label()}: its stack is gone; nothing to abandon'
                )
                outcome.result = DELETED
            else:
                outcome.left_behind, outcome.manifest = self._abandon(
                    preview, stack
                )
                outcome.result = ABANDONED
            outcome.record = self._finish_record(service, cluster)
            if self.options.delete_leftovers and outcome.left_behind:
                outcome.leftovers = self.delete_leftovers(outcome.left_behind)
                self._update_manifest(
                    outcome.manifest, leftovers=outcome.leftovers
                )
        except CascadeError as exc:
            outcome.error = str(exc)
        return outcome

    def _deleted_within_grace(
        self, service: ClusterService, cluster: Cluster
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
        _checked(
            f'deleting {cluster.label()}',
            lambda: service.delete(self.conn, cluster),
        )
        last: list[Cluster | None] = [cluster]

        def settled() -> bool:
            last[0] = _checked(
                f'checking {cluster.label()}',
                lambda: service.get(self.conn, cluster),
            )
            return last[0] is None or (last[0].status == service.delete_failed)

        self._poll(settled, self.options.grace)
        return last[0] is None

    def _abandon(
        self, preview: Preview, stack: Stack
    ) -> tuple[list[StackResource], str]:
        cluster = preview.cluster
        # what Heat still holds now: the normal delete may have removed
        # some of what the preview showed
        resources = _checked(
            f'listing the resources of stack {stack.name}',
            lambda: record_resources(self.conn, stack),
        )
        left = [r for r in resources if r.left_behind]
        path = self.options.manifest or default_manifest_name(cluster, stack)
        manifest = {
            'format': MANIFEST_FORMAT,
            'state': 'abandoning',
            'written_at': self.now().isoformat(),
            'cluster': dataclasses.asdict(cluster),
            'stack': dataclasses.asdict(stack),
            'resources': [r.to_dict() for r in left],
            'export': preview.export,
            'abandon': None,
        }
        # written before the abandon: if this run dies right after it, the
        # record of what was left behind is already on disk
        _write_json(path, manifest)
        try:
            manifest['abandon'] = self._stack_data(cluster, stack, 'abandon')
        except CascadeError:
            os.remove(path)  # nothing was left behind
            raise
        manifest['state'] = 'abandoned'
        _write_json(path, manifest)
        self.notify(
            f'{cluster.label()}: abandoned stack {stack.name} '
            f'({stack.id}); {len(left)} resource(s) left behind, '
            f'listed in {path}'
        )
        if not self._poll(
            lambda: (
                _checked(
                    f'checking stack {stack.name}',
                    lambda: heat.get_stack(self.conn, stack.name, stack.id),
                )
                is None
            ),
            self.options.timeout,
        ):
            raise CascadeError(
                f'{cluster.label()}: stack {stack.name} was '
                f'abandoned but still exists after '
                f'{self.options.timeout:g}s.'
            )
        return left, path

    def _stack_data(
        self, cluster: Cluster, stack: Stack, action: str
    ) -> dict[str, Any] | None:
        """Export (GET, changes nothing) or abandon (DELETE) the stack,
        checking Heat's answer: openstacksdk's abandon_stack() would hand
        back a 400 body as if it were the stack's data."""
        response = self.conn.orchestration.request(
            f'{stack.path}/{action}', 'GET' if action == 'export' else 'DELETE'
        )
        if response.status_code == 200:
            return response.json()
        what = f'Cannot force-delete {cluster.label()}'
        error = _error_of(response)
        if response.status_code == 400 and error.get('type') == (
            'NotSupported'
        ):
            raise CascadeError(
                f'{what}: the cloud has stack abandon disabled '
                f'(enable_stack_abandon = false in heat.conf, Heat\'s '
                f'default; heat-engine needs it set to true). Heat said: '
                f'{error.get("message", "")} Stack {stack.name} was not '
                f'abandoned.'
            )
        if response.status_code == 404 and action == 'export':
            return None  # a Heat without export: the abandon will tell
        detail = error.get('message') or response.text.strip()
        if response.status_code == 403:
            raise CascadeError(
                f'{what}: Heat refused to {action} stack '
                f'{stack.name} (HTTP 403): force-delete '
                f'needs the admin role. {detail}'
            )
        if response.status_code == 404:
            raise CascadeError(
                f'{what}: Heat no longer knows stack '
                f'{stack.name} ({stack.id}) (HTTP 404): it '
                f'was deleted meanwhile or is not visible '
                f'to you. Nothing was abandoned.'
            )
        if response.status_code == 409:
            raise CascadeError(
                f'{what}: stack {stack.name} is locked by '
                f'another operation (HTTP 409); run again '
                f'later. {detail}'
            )
        raise CascadeError(
            f'{what}: Heat answered HTTP '
            f'{response.status_code} to the {action} of '
            f'stack {stack.name}. {detail}'
        )

    def _finish_record(self, service: ClusterService, cluster: Cluster) -> str:
        """Magnum and Sahara destroy a cluster whose stack is gone, but a
        cluster whose delete failed stays failed: it needs its normal
        delete again, which now finds no stack and finishes."""
        if service.service == HEAT:
            return 'gone'
        now = _checked(
            f'checking {cluster.label()}',
            lambda: service.get(self.conn, cluster),
        )
        if now is None:
            return 'gone'
        if now.status != service.deleting:
            _checked(
                f'deleting {cluster.label()}',
                lambda: service.delete(self.conn, now),
            )
        if not self.options.wait:
            return now.status
        last = [now]

        def gone() -> bool:
            last[0] = _checked(
                f'checking {cluster.label()}',
                lambda: service.get(self.conn, cluster),
            )
            return last[0] is None

        if not self._poll(gone, self.options.timeout):
            raise CascadeError(
                f'{cluster.label()}: its stack was abandoned '
                f'but the cluster still exists after '
                f'{self.options.timeout:g}s (status '
                f'{last[0].status}).'
            )
        return 'gone'

    # -- leftovers -----------------------------------------------------------

    def delete_leftovers(
        self, left: Sequence[StackResource]
    ) -> dict[str, str]:
        """Delete what the abandon left and still exists, in dependency
        order; returns each resource's outcome."""
        kinds = kinds_mod.build()
        mine, interfaces, usable = self._inventory(
            kinds, [r for r in left if r.kind in kinds]
        )
        projects = [
            {'id': p, 'name': ''} for p in sorted({r.project_id for r in left})
        ]
        plan = build_plan(
            Inventory([*mine.values(), *interfaces]), kinds, projects
        )
        self.on_plan(len(plan.steps))
        run = Executor(
            self.conn,
            kinds,
            parallel=self.options.parallel,
            timeout=self.options.timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=self.on_event,
        ).run(plan)

        def outcome_of(kind: str, physical_id: str) -> str:
            ref = mine.get((kind, physical_id))
            if ref is None:
                return LEFTOVER_GONE
            result = run.results.get(f'delete:{ref.key}') or (
                run.results.get(f'keep:{ref.key}')
            )
            if result is None:
                return 'not deleted: it goes with another resource'
            if result.outcome == 'done':
                return LEFTOVER_DELETED
            return f'{result.outcome}: {result.error}'

        out = {}
        for res in left:
            if res.type == ROUTER_INTERFACE:
                router = res.physical_id.split(':')[0]
                out[res.key] = outcome_of(network.Router.name, router)
            elif res.kind not in kinds:
                out[res.key] = (
                    f'not deleted: the cascade has no kind for {res.type}'
                )
            elif res.kind not in usable:
                out[res.key] = (
                    f'not deleted: {kinds[res.kind].service_type}'
                    f' is not in the catalog'
                )
            else:
                out[res.key] = outcome_of(res.kind, res.physical_id)
        return out

    def _inventory(
        self, kinds: dict[str, Any], known: Sequence[StackResource]
    ) -> tuple[
        dict[tuple[str, str], ResourceRef], list[ResourceRef], set[str]
    ]:
        """The refs of the resources that still exist, by kind and Heat's
        physical id, as the kinds list them (so that they carry what the
        planner needs); the routers' interface ports, which the routers'
        plan steps remove; the kinds whose service is in the catalog."""
        wanted = {(r.kind, r.physical_id) for r in known}
        needed = {r.kind for r in known}
        if network.Router.name in needed:
            needed.add(network.Port.name)
        usable = {
            k for k in needed if self.conn.has_service(kinds[k].service_type)
        }
        refs, _notes = Discovery(
            self.conn,
            {k: kinds[k] for k in usable},
            parallel=self.options.parallel,
            clock=self.clock,
        ).run(sorted({r.project_id for r in known}))
        mine = {
            (r.kind, orchestration.physical_id(r)): r
            for r in refs
            if (r.kind, orchestration.physical_id(r)) in wanted
        }
        routers = {
            r.id for r in mine.values() if r.kind == network.Router.name
        }
        port = kinds[network.Port.name]
        interfaces = [
            r
            for r in refs
            if r.kind == network.Port.name
            and (r.kind, r.id) not in wanted
            and r.attrs.get('device_id') in routers
            and port.primary_step(r) is None
        ]
        return mine, interfaces, usable

    def _update_manifest(self, path: str, **changes: Any) -> None:
        with open(path) as f:
            manifest = json.load(f)
        manifest.update(changes)
        _write_json(path, manifest)

    # -- time ----------------------------------------------------------------

    def _poll(self, check: Callable[[], bool], seconds: float) -> bool:
        """Check until true or ``seconds`` have passed, backing off."""
        deadline = self.clock.now() + seconds
        delay = self.retry.poll_min
        while True:
            if check():
                return True
            left = deadline - self.clock.now()
            if left <= 0:
                return False
            self.clock.sleep(min(delay, left))
            delay = min(self.retry.poll_max, delay * 2)


def _error_of(response: Any) -> dict[str, Any]:
    try:
        return response.json().get('error') or {}
    except ValueError:
        return {}


def _write_json(path: str, data: dict[str, Any]) -> None:
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(tmp, path)


# -- what the commands print -------------------------------------------------


def stuck_rows(
    stuck: Sequence[StuckCluster],
) -> tuple[list[str], list[tuple[Any, ...]]]:
    columns = [
        'Service',
        'ID',
        'Name',
        'Project',
        'Status',
        'Stack ID',
        'Updated At',
        'Age',
    ]
    return columns, [
        (
            s.cluster.service,
            s.cluster.id,
            s.cluster.name,
            s.cluster.project_id,
            s.cluster.status,
            s.cluster.stack_id,
            s.cluster.updated_at,
            format_age(s.age),
        )
        for s in stuck
    ]


def preview_rows(
    previews: Sequence[Preview], delete_leftovers: bool
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """What a force-delete would leave behind (or delete), one row per
    resource; a cluster with nothing to leave gets one row that says so."""
    columns = [
        'Cluster',
        'Service',
        'Status',
        'Stack',
        'Type',
        'Physical ID',
        'Project',
        'Action',
    ]
    rows = []
    for p in previews:
        c = p.cluster
        if p.stack is None:
            rows.append(
                (
                    c.name,
                    c.service,
                    c.status,
                    '',
                    '',
                    '',
                    c.project_id,
                    'delete normally: no stack',
                )
            )
            continue
        left = p.left_behind()
        if not left:
            rows.append(
                (
                    c.name,
                    c.service,
                    c.status,
                    p.stack.name,
                    '',
                    '',
                    c.project_id,
                    'abandon: nothing left behind',
                )
            )
        for r in left:
            rows.append(
                (
                    c.name,
                    c.service,
                    c.status,
                    r.stack,
                    r.type,
                    r.physical_id,
                    r.project_id,
                    _planned_action(r, delete_leftovers),
                )
            )
    return columns, rows


def _planned_action(res: StackResource, delete_leftovers: bool) -> str:
    if not delete_leftovers:
        return 'leave behind'
    if res.kind or res.type == ROUTER_INTERFACE:
        return 'leave behind, then delete'
    return f'leave behind (no cascade kind for {res.type})'


def question(previews: Sequence[Preview], grace: float) -> str:
    lines = [
        f'Force-delete {len(previews)} cluster(s)? Each is deleted '
        f'the normal way first; if that has not finished after '
        f'{grace:g}s, its Heat stack is abandoned and what the stack '
        f'made stays:'
    ]
    for p in previews:
        where = (
            f'stack {p.stack.name}, {len(p.left_behind())} '
            f'resource(s) left behind'
            if p.stack
            else 'no stack'
        )
        lines.append(f'  {p.cluster.label()}: {where}')
    return '\n'.join(lines) + '\nContinue?'


def outcome_rows(
    outcomes: Sequence[Outcome],
) -> tuple[list[str], list[tuple[Any, ...]]]:
    columns = [
        'Service',
        'Cluster',
        'ID',
        'Result',
        'Record',
        'Left Behind',
        'Leftovers Deleted',
        'Leftovers Not Deleted',
        'Manifest',
    ]
    rows = []
    for o in outcomes:
        deleted = sum(1 for v in o.leftovers.values() if v == LEFTOVER_DELETED)
        rows.append(
            (
                o.cluster.service,
                o.cluster.name,
                o.cluster.id,
                o.result,
                o.record,
                len(o.left_behind),
                deleted,
                len(o.not_deleted()),
                o.manifest,
            )
        )
    return columns, rows


def failure_message(failed: Sequence[Outcome], total: int) -> str:
    parts = []
    for o in failed:
        if o.error:
            parts.append(o.error)
        if o.not_deleted():
            parts.append(
                f'{o.cluster.label()}: what its stack left behind '
                f'was not all deleted ({o.manifest}): '
                + '; '.join(o.not_deleted())
            )
    if total == 1:
        return ' '.join(parts)
    return (
        f'{len(failed)} of {total} cluster(s) were not force-deleted '
        f'cleanly: ' + ' '.join(parts)
    )
