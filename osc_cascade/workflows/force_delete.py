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

A cluster built on a Heat stack (``workflows.clusters``) hangs in deletion
when Heat cannot delete one of the stack's resources. Heat can *abandon* a
stack: the stack's record goes, what it made stays. For one cluster,
``ForceDelete``:

1. records the stack's resources, nested ones included, and checks with an
   export (which changes nothing) that the cloud allows abandon at all, and,
   for a plain stack that it will delete itself, that Heat would not take
   the caller's own containers or keypairs of the same name with it;
2. unless the cluster is being deleted already, deletes it the normal way
   and gives that ``grace`` seconds: a delete that finishes abandons
   nothing, and the force path never replaces the normal delete;
3. writes the manifest of what the stack holds, then abandons the stack.
   An answer that may hide an abandon that happened (a 5xx, a dropped
   connection, a timeout) keeps the manifest, marks the abandon's outcome
   unknown and looks at the stack: gone, it was abandoned; still there,
   the cluster fails and says so;
4. checks which of the resources still exist (one list per kind and
   project): the manifest and the outcome list those, not what Heat's
   delete removed during the grace period;
5. lets the service finish the cluster's record (Magnum and Sahara destroy
   a cluster whose stack is gone) and, with ``wait``, waits for it to go;
6. with ``delete_leftovers``, deletes what the manifest lists and still
   exists, in dependency order (``workflows.leftovers``).

One cluster's failure, even an unexpected one, is its outcome's: the
others go on (``preview_all``, ``run_all``). ``load`` and ``resume`` take
up a manifest alone, without the cluster: the deletion of the leftovers
of a run that stopped after the abandon.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import dataclasses
import datetime
import json
import os
import re
from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import heat
from osc_cascade.engine.errors import CascadeError, describe, one_line
from osc_cascade.engine.executor import Event
from osc_cascade.engine.retry import Clock, RetryPolicy, checked, wait_until
from osc_cascade.kinds import orchestration
from osc_cascade.workflows import leftovers
from osc_cascade.workflows.clusters import (
    HEAT,
    NEEDS,
    ClusterRecord,
    ClusterService,
    StackRecord,
    StackResource,
    record_resources,
    utcnow,
)
from osc_cascade.workflows.stopping import PausingClock, Stop

MANIFEST_FORMAT = 1

# How far the force-delete of a cluster went (ForceDeleteOutcome.result).
DELETED_NORMALLY = 'deleted'  # by its normal delete: nothing abandoned
ABANDONED = 'abandoned'  # its stack was abandoned
FAILED = 'failed'  # before either

# A manifest's state: written before the abandon, then its outcome.
ABANDONING = 'abandoning'
ABANDON_UNKNOWN = 'abandon-unknown'  # Heat's answer may hide an abandon

#: the outcome of a cluster that an interruption came before
NOT_STARTED = 'not started: the run was interrupted before it'

#: how long a stack gets to be gone after an abandon whose answer was an
#: error that may hide one: Heat's engine answers once it has started to
#: forget the stack, so a stack still there after this was not abandoned
ABANDON_SETTLE = 60.0


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

    def left_behind(self) -> list[StackResource]:
        return [r for r in self.resources if r.left_behind]


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
    #: (``workflows.leftovers``)
    leftovers: dict[str, str] = dataclasses.field(default_factory=dict)
    error: str = ''

    def not_deleted(self) -> list[str]:
        return [
            f'{key}: {outcome}'
            for key, outcome in sorted(self.leftovers.items())
            if outcome not in (leftovers.DELETED, leftovers.GONE)
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
        return [StackResource.from_dict(r) for r in self.data['resources']]

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


def _why(exc: Exception) -> str:
    """A cluster's failure in one line: the workflow's own words, or what
    the unexpected error was."""
    if isinstance(exc, CascadeError):
        return str(exc)
    return f'unexpected error: {type(exc).__name__}: {one_line(exc)}'


def _may_have_happened(exc: BaseException | None) -> bool:
    """Whether a failed abandon may have been carried out all the same:
    only an HTTP 4xx is Heat's refusal; a 5xx may come from a proxy while
    heat-engine went on, a dropped connection or a timeout may have lost
    the answer, and an answer that cannot be read was an answer."""
    if isinstance(exc, sdk_exc.HttpException):
        return exc.status_code is None or exc.status_code >= 500
    return True


class ForceDelete:
    def __init__(
        self,
        conn: Any,
        services: Iterable[ClusterService],
        options: ForceDeleteOptions | None = None,
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
        self.options = options or ForceDeleteOptions()
        self.notify = notify or (lambda text: None)
        self.on_event = on_event
        #: told the number of steps of each leftover plan before it runs
        self.on_plan = on_plan or (lambda steps: None)
        self.clock = clock or Clock()
        self.retry = retry or RetryPolicy()
        self.now = now
        #: a signal stops the force-delete at its next safe point
        #: (``interrupt``)
        self.stop = Stop()
        #: the outcomes of the last ``run_all``, also when interrupted
        self.outcomes: list[ForceDeleteOutcome] = []

    def _checked(self, what: str, call: Callable[[], Any]) -> Any:
        """Lookups and the cluster's normal delete, which a second try
        cannot harm, retried while they may pass (the abandon is not made
        through here)."""
        return checked(
            what, call, retry=self.retry, clock=self.clock, needs=NEEDS
        )

    def _wait(
        self, check: Callable[[], bool], seconds: float, *, stopped: str
    ) -> bool:
        """``check()`` until true or ``seconds`` have passed; a signal
        ends the wait with ``Interrupted``, ``stopped`` saying where the
        cluster was left."""

        def check_or_stop() -> bool:
            self.stop.check(stopped)
            return check()

        return wait_until(
            check_or_stop,
            seconds,
            retry=self.retry,
            clock=PausingClock(self.clock, self.stop),
        )

    def interrupt(self, signum: int) -> None:
        """Stop (from a signal handler): no cluster is started or
        abandoned after it, a wait ends at once, a deletion of leftovers
        starts no more steps; each manifest stays consistent with what was
        done, so that a re-run finishes the job."""
        self.stop(signum)

    # -- 1. look, change nothing ---------------------------------------------

    def preview_all(self, clusters: Iterable[ClusterRecord]) -> list[Preview]:
        """The preview of each cluster; one that cannot be force-deleted
        says why (``Preview.error``) and the others go on."""
        out = []
        for cluster in clusters:
            try:
                out.append(self.preview(cluster))
            except Exception as exc:  # the cluster's failure, not the run's
                out.append(Preview(cluster, None, [], error=_why(exc)))
        return out

    def preview(self, cluster: ClusterRecord) -> Preview:
        service = self.services[cluster.service]
        stack = self._stack(service, cluster)
        if stack is None:
            return Preview(cluster, None, [])
        resources = self._resources(stack)
        if service.service == HEAT and cluster.status != service.deleting:
            self._check_namesakes(cluster, resources)
        return Preview(
            cluster,
            stack,
            resources,
            self._stack_data(cluster, stack, 'export'),
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
                f'{cluster.label()}: more than one stack of project '
                f'{cluster.project_id} is named {cluster.name!r}; '
                f'force-delete the right one with --stack.'
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
            outcome.error = _why(exc)
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
            return
        stack = self._stack(service, cluster)
        if stack is None:
            self.notify(
                f'{cluster.label()}: its stack is gone; nothing to abandon'
            )
            self._point_to_manifest(cluster)
            outcome.result = DELETED_NORMALLY
            outcome.record = self._finish_record(service, cluster)
            return
        # what Heat still holds now: the normal delete may have removed
        # some of what the preview showed
        left = [r for r in self._resources(stack) if r.left_behind]
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
        # what Heat still held may be gone all the same: its delete removes
        # a resource before it drops the resource's row
        there, gone = self._remaining(cluster, left)
        outcome.left_behind = there
        manifest.update(
            resources=[r.to_dict() for r in there],
            already_gone=[r.key for r in gone],
        )
        write_manifest(path, manifest)
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
            write_manifest(path, {**manifest, 'leftovers': outcome.leftovers})
            self.stop.check(self._resume_hint(cluster, path))

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

    @staticmethod
    def _resume_hint(cluster: ClusterRecord, path: str) -> str:
        """Where an interrupted cluster was left once its stack was
        abandoned, and what finishes the job."""
        return (
            f'{cluster.label()}: its stack was abandoned; {path} lists what '
            f'it left and what of it was deleted; `openstack cluster '
            f'force-delete --delete-leftovers --manifest {path}` deletes '
            f'the rest'
        )

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
        write_manifest(path, manifest)
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
        write_manifest(path, manifest)
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

    def _stack_gone(self, stack: StackRecord) -> bool:
        return (
            self._checked(
                f'checking stack {stack.name}',
                lambda: heat.get_stack(self.conn, stack.name, stack.id),
            )
            is None
        )

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
        write_manifest(path, manifest)
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
        write_manifest(path, manifest)
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
        there, _gone = leftovers.remaining(
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
            write_manifest(
                manifest.path,
                {
                    **manifest.data,
                    'state': ABANDONED,
                    'leftovers': outcome.leftovers,
                },
            )
        except Exception as exc:  # the outcome says it
            outcome.error = _why(exc)
        self.outcomes = [outcome]
        if self.stop.requested:
            raise self.stop.error(
                self._resume_hint(manifest.cluster, manifest.path)
            )
        return outcome

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
