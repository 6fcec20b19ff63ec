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

"""The contract every resource kind fulfils.

A kind is one small class: how to list a project's resources of that kind
(``list``), which ordering edges and break actions it adds (``relations``),
how to delete one (``delete``), how to tell whether the delete has finished
(``status``, or ``list_statuses`` for many at once), and how to carry out
its break actions (``apply``).
``list``/``delete``/``status``/``apply`` talk to the cloud through an
openstacksdk ``Connection``; ``primary_step``/``relations`` are pure and
feed the planner.

A kind whose resources can change owner or use between the plan and the
delete, or between two attempts of it (a volume, zone or share given to
another project by a transfer that is accepted meanwhile), says
``reread``: each call of its ``delete`` then reads the resource again
first (``recheck``, one GET) and deletes only what is still the
project's; the rest is kept (``errors.Kept``), and keeps the project.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
import datetime
import functools
from typing import Any, ClassVar, TypeVar

from openstack import exceptions as sdk_exc

from osc_cascade.api import direct
from osc_cascade.engine import resource
from osc_cascade.engine.errors import Kept
from osc_cascade.engine.planner import Edge, Inventory
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.kinds.facts import Facts
from osc_cascade.kinds.paging import pages, tags_of

GONE = None

#: a kind that a project owns: a cascade and the orphan search list it
PROJECT = 'project'
#: a kind that belongs to a compute service (Placement's), for the purge
SERVICE = 'service'
#: a kind that a user owns (``user delete --cascade``): its keypairs,
#: credentials and trusts
USER = 'user'

T = TypeVar('T')


class ResourceKind:
    #: unique name, ``<service>.<resource>``: ``network.port``
    name: ClassVar[str]
    #: catalog service type the kind needs
    service_type: ClassVar[str]
    #: statuses that mean the delete failed in the service
    error_statuses: ClassVar[frozenset[str]] = frozenset()
    #: statuses in which the service waits for another call to finish the
    #: delete (``finish_delete``): a soft-deleted server
    unfinished_statuses: ClassVar[frozenset[str]] = frozenset()
    #: a delete that returns is final (no status polling needed)
    synchronous_delete: ClassVar[bool] = False
    #: why the cascade cannot list this kind at all, when it cannot: a
    #: note says so instead (a silent skip would hide what stays behind)
    unreachable: ClassVar[str] = ''
    #: why a token scoped to the project (the cascade without cloud admin,
    #: ``workflows.scoped``) cannot list this kind: a note says so instead
    needs_admin: ClassVar[str] = ''
    #: what owns resources of this kind: PROJECT, SERVICE or USER
    scope: ClassVar[str] = PROJECT
    #: its ``list`` asks the same whatever the project (the service has
    #: no project filter, ``owned`` keeps the project's): discovery lists
    #: it once per region for the projects of a plan, not once for each
    lists_every_project: ClassVar[bool] = False
    #: the Heat resource types whose physical resource is of this kind
    heat_types: ClassVar[tuple[str, ...]] = ()
    #: the SDK call that shows one resource (``block_storage.get_volume``),
    #: to say who owns a resource that left the project
    sdk_get: ClassVar[str] = ''
    #: the SDK's class of what ``sdk_get`` returns: then the kind's reads
    #: and deletes go through ``api.direct`` (without resource objects)
    sdk_resource: ClassVar[type | None] = None
    #: the attribute of what ``sdk_get`` returns that names its project
    owner_attr: ClassVar[str] = 'project_id'
    #: each delete reads the resource again first (``recheck``): its owner
    #: or its use can change between attempts
    reread: ClassVar[bool] = False
    #: statuses of a resource on offer to another project (a pending
    #: transfer): it is kept, not retried, if the offer is still there
    offered_statuses: ClassVar[frozenset[str]] = frozenset()
    #: statuses its service refuses to delete from and that waiting does
    #: not change (a volume ``error_deleting``): such a resource is
    #: ``stuck``, shown so in the plan, never retried (``stuck_reason``).
    #: The states a delete is refused from that end by themselves (a
    #: volume ``in-use`` until its server goes) are not among them.
    stuck_statuses: ClassVar[frozenset[str]] = frozenset()
    #: statuses its service refuses to delete from that its own workers
    #: leave by themselves (a load balancer ``PENDING_UPDATE``): stuck only
    #: once the resource has not changed for ``stuck_after`` seconds
    slow_statuses: ClassVar[frozenset[str]] = frozenset()
    stuck_after: ClassVar[float] = 3600.0
    #: the service's own condition for a delete, in a person's words
    #: ("Cinder deletes a volume only when it is available or error")
    deletable_when: ClassVar[str] = ''
    #: the command with which an admin resets the state by hand, or ''
    reset_command: ClassVar[str] = ''
    #: the break action ``--force-stuck`` puts before the delete of a
    #: stuck resource (``force_stuck``), '' if the kind has none
    force_action: ClassVar[str] = ''
    #: what gets one out where neither ``reset_command`` nor
    #: ``force_action`` can (an operator's change in the service's database)
    stuck_help: ClassVar[str] = ''
    #: the HTTP statuses with which the service refuses a delete for the
    #: resource's state (then ``stuck_now`` reads the state)
    stuck_refusals: ClassVar[frozenset[int]] = frozenset({400, 409})
    #: what a 403 on listing means the caller lacks
    forbidden_hint: ClassVar[str] = (
        'the cascade needs the admin role in the {service_type} service'
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get('delete')
        if own is not None:
            cls.delete = _rechecked(own)  # type: ignore[method-assign]
        own = cls.__dict__.get('relations')
        if own is not None:
            cls.relations = _with_force(own)  # type: ignore[method-assign]

    def __init__(self, *, facts: Facts | None = None, **options: Any):
        #: the command's options that change what a kind does
        self.options = options
        #: what the kinds built together learnt of the cloud
        self.facts = facts or Facts()

    @property
    def scoped(self) -> bool:
        """Whether it lists through a token scoped to the project (no
        cloud admin): then no call asks for every project's resources."""
        return bool(self.options.get('scoped'))

    def detail_query(self, project_id: str | None) -> dict[str, Any]:
        """The filter of an SDK detail list (Nova's servers, Cinder's
        volumes, snapshots and backups): as admin, the project's among
        every project's; through a token scoped to the project, none (the
        service lists a non-admin the token's project's alone, and refuses
        it all_projects, Cinder the project filter too)."""
        if self.scoped:
            return {'details': True}
        return {
            'details': True,
            'all_projects': True,
            'project_id': project_id,
        }

    @property
    def unlisted(self) -> str:
        """Why discovery does not list this kind, or ''."""
        if self.unreachable:
            return self.unreachable
        return (
            f'without admin, {self.needs_admin}'
            if self.scoped and self.needs_admin
            else ''
        )

    @property
    def is_global(self) -> bool:
        """Keystone's kinds are global: listed once, not in each region."""
        return self.service_type == 'identity'

    def list(self, conn: Any, project_id: str | None) -> Iterable[ResourceRef]:
        """The project's resources of this kind, or every project's when
        ``project_id`` is None (the orphan search: a None filter is left
        out of the query)."""
        raise NotImplementedError

    def primary_step(self, ref: ResourceRef) -> Step | None:
        """The plan step of the resource itself; None if it goes with
        its owner (a DHCP port goes with its network)."""
        return self.stuck_step(ref) or resource.delete(ref)

    # stuck resources ---------------------------------------------------------

    def stuck_status(self, ref: ResourceRef) -> str:
        """The state the resource was listed in, if its service refuses
        to delete from it and waiting will not change it; else ''."""
        return self.stuck_in(
            str(ref.attrs.get('status') or ''), ref.attrs.get('updated_at')
        )

    def stuck_in(self, status: str, since: Any) -> str:
        """``status`` if it is stuck there (``slow_statuses``: for longer
        than ``stuck_after`` since ``since``, its ``updated_at``)."""
        if status in self.stuck_statuses:
            return status
        if status in self.slow_statuses and older_than(
            since, self.stuck_after
        ):
            return status
        return ''

    def forcing(self, ref: ResourceRef) -> bool:
        """Whether ``--force-stuck`` forces this stuck resource: asked for,
        as an admin (the forced calls are the admin's), by a kind that can,
        and only what the project owns and nothing else uses (a kind keeps
        what another project uses before it asks: ``used_by``)."""
        return bool(
            self.options.get('force_stuck')
            and not self.scoped
            and self.force_action
            and ref.project_id
            and not ref.attrs.get('used_by')
        )

    def stuck_step(self, ref: ResourceRef) -> Step | None:
        """A stuck resource's keep step (``stuck``), or None: not stuck,
        or forced (its delete waits for ``force_action``)."""
        status = self.stuck_status(ref)
        if not status or self.forcing(ref):
            return None
        return resource.keep(
            ref,
            self.stuck_reason(ref, status, ref.attrs.get('updated_at')),
            stuck=True,
        )

    def stuck_reason(
        self, ref: ResourceRef, status: str, since: Any = ''
    ) -> str:
        """One line after the resource's label: its state, since when,
        what the service needs, and what would get it out."""
        when = f' since {since}' if since else ''
        text = f"is '{status}'{when}: {self.deletable_when}"
        reset = (
            f'reset its state ({self.reset_command})'
            if self.reset_command
            else ''
        )
        if self.force_action and self.scoped:
            return (
                f'{text}; only an admin can {reset or "force it"} or use '
                '--force-stuck'
            )
        if self.force_action and self.options.get('force_stuck'):
            if self.forcing(ref):  # stuck after the plan was made
                return (
                    f'{text}; it got there after the plan was made: run '
                    'again, and --force-stuck will reset it'
                )
            # forced only what the project owns and nothing else uses
            return f'{text}; --force-stuck leaves it: another project uses it'
        if self.force_action:
            how = f'an admin can {reset} or use' if reset else 'use'
            return f'{text}; {how} --force-stuck'
        if reset:
            return f'{text}; an admin can {reset} (--force-stuck cannot)'
        return (
            f'{text}; {self.stuck_help or "only its service can get it out"}'
        )

    def stuck_now(self, conn: Any, step: Step, exc: Exception) -> str:
        """After a refused delete (``stuck_refusals``): the stuck line, if the
        resource, read again (one GET), is in a stuck state; else ''.
        The answer alone cannot tell: Cinder says the same to a volume
        ``in-use`` until its server goes, which waiting does change."""
        # slow_statuses are told at listing alone: a run's timeout is far
        # shorter than stuck_after
        if (
            not self.stuck_statuses
            or getattr(exc, 'status_code', None) not in self.stuck_refusals
        ):
            return ''
        try:
            found = self.read(conn, step.target)
        except Exception:  # unknown: retried as before
            return ''
        if found is GONE:
            return ''
        since = getattr(found, 'updated_at', '') or ''
        status = self.stuck_in(str(self.status_in(found) or ''), since)
        return self.stuck_reason(step.target, status, since) if status else ''

    def status_in(self, found: Any) -> str:
        """The state shown by what ``read`` returned."""
        return getattr(found, 'status', '') or ''

    def force_stuck(self, conn: Any, step: Step) -> None:
        """``force_action``: get a stuck resource into a state its service
        deletes from (an admin's reset of its status)."""
        raise NotImplementedError(f'{self.name} cannot force its state')

    def force_edges(self, ref: ResourceRef) -> Iterable[Edge]:
        """The forced action before the delete of a stuck resource that
        ``--force-stuck`` forces."""
        status = self.stuck_status(ref)
        if status and self.forcing(ref):
            yield Edge(
                Step(self.force_action, ref, self.force_params(ref, status)),
                resource.delete(ref),
            )

    def force_params(self, ref: ResourceRef, status: str) -> dict[str, Any]:
        """The forced step's parameters, shown in the plan and the
        record: the state it forces the resource out of."""
        return {'status': status}

    def relations(
        self, ref: ResourceRef, inventory: Inventory
    ) -> Iterable[Edge]:
        # a kind's own relations get the forced actions too (_with_force)
        return self.force_edges(ref)

    def parts(
        self, conn: Any, ref: ResourceRef
    ) -> Iterable[Callable[[], Any]]:
        """Calls to make before ``delete``, one API call each (a
        container's objects). The executor takes them as the generator
        yields them, so a listing is read page by page, and runs them in
        its own API slots, as many at once as ``--parallel`` allows."""
        return ()

    def delete(self, conn: Any, ref: ResourceRef) -> None:
        raise NotImplementedError

    def status(self, conn: Any, ref: ResourceRef) -> str | None:
        """The resource's status, or GONE once it no longer exists."""
        raise NotImplementedError

    def list_statuses(
        self, conn: Any, project_id: str
    ) -> dict[str, str] | None:
        """The status of each of the project's resources of this kind that
        still exist, from one list call, or None where the kind cannot
        (then each delete is polled with ``status``). Steps waiting on
        deletes of the same kind and project share that list."""
        return None

    def detail_statuses(
        self,
        proxy: Any,
        path: str,
        key: str,
        project_id: str,
        status: Callable[[dict[str, Any]], str] | None = None,
    ) -> dict[str, str]:
        """``list_statuses`` from the raw JSON of a detail list (Nova's
        servers, Cinder's volumes, snapshots and backups), with the
        filters and paging of ``detail_query``'s SDK list: an SDK resource
        per item cost more than the rest of a poll (measured: 1.58 ms a
        server, 0.84 ms a volume, against 11 ms for the raw JSON of 1,300
        volumes). ``status``: an item's, by default its ``status``."""
        return {
            item['id']: (
                status(item) if status else str(item.get('status') or '')
            )
            for item in self.detail_items(proxy, path, key, project_id)
        }

    def detail_items(
        self,
        proxy: Any,
        path: str,
        key: str,
        project_id: str | None,
        sdk_resource: Any = None,
    ) -> Iterator[dict[str, Any]]:
        """The raw JSON items of a detail list (Nova's servers, Cinder's
        volumes, snapshots and backups), with the filters and paging of
        ``detail_query``'s SDK list. ``sdk_resource``: the SDK's resource
        class, whose list's microversion is asked (the fields depend on
        it: Cinder names a backup's project from 3.18 on)."""
        query = dict(self.detail_query(project_id))
        query.pop('details', None)  # the path says it
        if query.pop('all_projects', False):
            query['all_tenants'] = True
        return pages(
            proxy,
            path,
            key,
            query,
            microversion=sdk_resource
            and direct.microversion(proxy, sdk_resource),
        )

    def finish_delete(self, conn: Any, ref: ResourceRef) -> None:
        """The call that finishes a delete the service left in one of the
        ``unfinished_statuses``."""
        raise NotImplementedError(f'{self.name} cannot finish a delete')

    def owner(self, conn: Any, ref: ResourceRef) -> str | None:
        """The project that owns the resource now: None if it is gone,
        '' if the kind cannot tell."""
        try:
            found = self.read(conn, ref)
        except NotImplementedError:
            return ''
        return None if found is GONE else self.owner_in(found)

    def read(self, conn: Any, ref: ResourceRef) -> Any:
        """The resource as the service shows it now (one GET, as admin:
        whoever owns it), or GONE; by default through ``sdk_get``."""
        if not self.sdk_get:
            raise NotImplementedError(f'{self.name} cannot be read')
        try:
            return self.fetched(conn, ref)
        except sdk_exc.NotFoundException:
            return GONE

    def fetched(self, conn: Any, ref: ResourceRef) -> Any:
        """What ``sdk_get`` answers (its errors raised, a 404 too)."""
        proxy, call = self.sdk_get.split('.')
        if self.sdk_resource is not None:
            return direct.get(getattr(conn, proxy), self.sdk_resource, ref.id)
        return getattr(getattr(conn, proxy), call)(ref.id)

    def owner_in(self, found: Any) -> str:
        """The project named by what ``read`` returned ('' if none)."""
        return getattr(found, self.owner_attr, '') or ''

    def use_changed(self, conn: Any, found: Any, ref: ResourceRef) -> str:
        """Why what ``read`` returned may no longer be deleted though the
        project still owns it (an image made public since the plan, a port
        plugged into another project's server), or ''."""
        return ''

    def recheck(self, conn: Any, ref: ResourceRef) -> None:
        """Before each delete of a ``reread`` kind: read the resource
        again and raise what the executor makes of it, a 404 (it is gone:
        done) or ``Kept`` (not the project's any more, or on offer to
        another project: kept, not retried)."""
        found = self.read(conn, ref)
        if found is GONE:
            raise sdk_exc.NotFoundException(f'{ref.label()} is gone')
        why = self.why_not_now(conn, found, ref)
        if why:
            self.facts.keep(ref, why)
            raise Kept(why)

    def why_not_now(self, conn: Any, found: Any, ref: ResourceRef) -> str:
        """Why the resource (what ``read`` returned) may not be deleted
        now, or '': it left the project, its use changed, or it is on
        offer to another project."""
        owner = self.owner_in(found) or (ref.project_id if self.scoped else '')
        if ref.project_id and owner != ref.project_id:
            return (
                f'owner is now {owner}'
                if owner
                else 'its owner cannot be read any more'
            )
        status = getattr(found, 'status', '') or ''
        if status in self.offered_statuses:
            return (
                f'it is {status}: offered to another project, and the '
                'offer could not be withdrawn'
            )
        return self.use_changed(conn, found, ref)

    def across_regions(self, ref: ResourceRef) -> Iterable[Edge]:
        """Edges to resources of other regions (their steps name their
        region), for the few references the cloud makes across regions."""
        return ()

    def apply(self, conn: Any, step: Step) -> None:
        if self.force_action and step.action == self.force_action:
            # what the plan forces must still be the project's, and stuck
            self.recheck(conn, step.target)
            return self.force_stuck(conn, step)
        raise NotImplementedError(f'{self.name} has no action {step.action}')

    def is_in_use(self, exc: Exception) -> bool:
        """Whether a failed delete may succeed later (a dependency is
        still being deleted). 409 is the common answer; kinds add theirs."""
        return isinstance(exc, sdk_exc.ConflictException)

    # helpers for subclasses ------------------------------------------------

    def ref(
        self, obj: Any, *, project_id: str | None = None, **attrs: Any
    ) -> ResourceRef:
        return ResourceRef(
            kind=self.name,
            id=obj.id,
            name=getattr(obj, 'name', '') or '',
            project_id=project_id
            if project_id is not None
            else (getattr(obj, 'project_id', '') or ''),
            attrs={k: v for k, v in attrs.items() if v not in (None, [], {})},
            created_at=getattr(obj, 'created_at', None) or '',
            updated_at=getattr(obj, 'updated_at', None) or '',
            tags=tags_of({'tags': getattr(obj, 'tags', None)}),
        )


def _rechecked(delete: Callable[..., None]) -> Callable[..., None]:
    """A kind's own ``delete``, made to ``recheck`` first if the kind
    ``reread``s (the executor calls ``delete`` at each attempt)."""

    @functools.wraps(delete)
    def rechecked(self: ResourceKind, conn: Any, ref: ResourceRef) -> None:
        if self.reread:
            self.recheck(conn, ref)
        delete(self, conn, ref)

    return rechecked


def older_than(when: Any, seconds: float) -> bool:
    """Whether the ISO 8601 time ``when`` (a service's ``updated_at``,
    UTC when it names no zone) is more than ``seconds`` ago; False when
    it cannot be read."""
    try:
        then = datetime.datetime.fromisoformat(
            str(when).replace('Z', '+00:00')
        )
    except ValueError:
        return False
    if then.tzinfo is None:
        then = then.replace(tzinfo=datetime.UTC)
    now = datetime.datetime.now(datetime.UTC)
    return (now - then).total_seconds() > seconds


def _with_force(
    relations: Callable[..., Iterable[Edge]],
) -> Callable[..., Iterable[Edge]]:
    """A kind's own ``relations``, with its ``force_edges`` after them."""

    @functools.wraps(relations)
    def with_force(
        self: ResourceKind, ref: ResourceRef, inventory: Inventory
    ) -> Iterator[Edge]:
        yield from relations(self, ref, inventory)
        yield from self.force_edges(ref)

    return with_force


def unless_absent(items: Callable[[], Iterable[T]]) -> list[T]:
    """What an optional API lists, or nothing where the cloud lacks it
    (404): a cloud without an extension or a quota API holds none."""
    try:
        return list(items())
    except sdk_exc.NotFoundException:
        return []


def delete_of(kind: str, id_: str) -> Step:
    """The delete step of a resource known only by kind and id (edges may
    name resources that the inventory does not hold: the planner drops
    such edges)."""
    return resource.delete(ResourceRef(kind=kind, id=id_))


def owned(
    refs: Iterable[ResourceRef], project_id: str | None
) -> list[ResourceRef]:
    """Second check of ownership, client-side: a list call's project filter
    that a service ignores must never let another project's resource in.
    With no project (every project's resources) all are kept."""
    return [
        r for r in refs if project_id is None or r.project_id == project_id
    ]
