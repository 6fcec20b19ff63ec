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

"""``openstack cluster force-delete`` and ``openstack cluster stuck list``.

The work is in ``osc_cascade.workflows.force_delete`` (and ``.clusters``
for finding them); these classes parse, confirm and render. The names stay
clear of python-senlinclient's ``cluster`` commands (``cluster list``,
``cluster delete``...) and of Magnum's ``coe cluster``.

``force-delete --delete-leftovers --manifest FILE`` without a cluster
resumes from the manifest alone (``ForceDelete.load`` and ``.resume``).

The workflows are imported inside the functions: ``openstack --help``
imports every command module to list the commands, and the plugin's
machinery (kinds, planner, executor) would add a tenth of a second to it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from osc_lib import exceptions
from osc_lib.command import command

from osc_cascade.engine.errors import Interrupted
from osc_cascade.v1.common import (
    READ_EXIT_STATUSES,
    ExitStatusHelp,
    add_api_timeout_option,
    add_execution_options,
    add_tuning_group,
    confirm,
    connection,
    duration,
    engine_errors,
    exit_interrupted,
    stoppable,
)
from osc_cascade.v1.constants import (
    FORCE_DELETE_COLUMNS,
    FORCE_DELETE_PLAN_COLUMNS,
    STUCK_CLUSTER_COLUMNS,
)

if TYPE_CHECKING:
    from osc_cascade.workflows.clusters.records import (
        ClusterRecord,
        StackResource,
    )
    from osc_cascade.workflows.clusters.stuck import StuckCluster
    from osc_cascade.workflows.force_delete import (
        ForceDeleteOutcome,
        Manifest,
        Preview,
    )

DEFAULT_AGE = '24h'

#: the states ``--stuck`` takes, and those ``--include-updating`` adds
#: (``workflows.clusters.services``: NOT_UPDATING, SAHARA_UPDATING)
STUCK_STATES = (
    'CREATE_IN_PROGRESS, DELETE_IN_PROGRESS or DELETE_FAILED (Sahara: '
    'any state but Active and Error, its scaling states aside)'
)
UPDATING_STATES = (
    'every other *_IN_PROGRESS state (UPDATE, ROLLBACK, RESUME, SUSPEND, '
    'SNAPSHOT, CHECK, RESTORE, ADOPT; Sahara: Scaling, Adding Instances, '
    'Decommissioning)'
)

Rows = tuple[Sequence[str], list[tuple[Any, ...]]]


def non_negative_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError('must not be negative')
    return value


def add_stuck_options(
    parser: argparse.ArgumentParser, *, default_age: str | None
) -> None:
    """The options that choose stuck clusters; without ``default_age``
    (a force-delete), ``--older-than`` must be given."""
    parser.add_argument(
        '--stack',
        action='store_true',
        help='Heat stacks instead of Magnum and Sahara clusters',
    )
    parser.add_argument(
        '--older-than',
        metavar='<duration>',
        type=duration,
        default=default_age,
        help='Only clusters not updated for this long '
        + (f'(default: {default_age})' if default_age else '(with --stuck)'),
    )
    parser.add_argument(
        '--project',
        metavar='<project>',
        help='Only the clusters of <project> (default: all)',
    )
    parser.add_argument(
        '--include-updating',
        action='store_true',
        help='Also clusters being updated (left alone by default)',
    )


class ListStuckCluster(ExitStatusHelp, command.Lister):
    """List clusters stuck in a transitional state or a failed deletion"""

    exit_statuses = READ_EXIT_STATUSES

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_stuck_options(parser, default_age=DEFAULT_AGE)
        return parser

    def get_epilog(self) -> str:
        return (
            f'Stuck are the clusters in {STUCK_STATES}. With '
            f'--include-updating, also {UPDATING_STATES}.'
        )

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.engine.retry import Clock, RetryPolicy
        from osc_cascade.workflows import clusters

        conn = connection(self.app, parsed_args)
        with engine_errors():
            stuck = clusters.stuck_of_project(
                conn,
                clusters.services_for(conn, stacks=parsed_args.stack),
                parsed_args.older_than,
                parsed_args.project,
                include_updating=parsed_args.include_updating,
                retry=RetryPolicy(),
                clock=Clock(),
            )
        return stuck_rows(stuck)


class ForceDeleteCluster(ExitStatusHelp, command.Lister):
    """Force-delete stuck clusters by abandoning their Heat stack"""

    def get_epilog(self) -> str:
        return (
            'The last resort: each cluster is deleted the normal way first; '
            'if that takes longer than --grace, its Heat stack is '
            'abandoned, leaving what the stack made in place. The manifest '
            'file lists what is left. Needs the admin role and '
            'enable_stack_abandon = true in heat.conf. Without a stack '
            '(Cluster API drivers), what its controllers made is deleted.'
        )

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'clusters',
            metavar='<cluster>',
            nargs='*',
            help='Cluster(s) to force-delete (name or ID)',
        )
        parser.add_argument(
            '--stuck',
            action='store_true',
            help="What 'cluster stuck list' lists; without --yes, only "
            'show it',
        )
        add_stuck_options(parser, default_age=None)
        group = parser.add_argument_group('force-delete (osc-cascade)')
        tuning = add_tuning_group(parser)
        add_execution_options(group, tuning)
        add_api_timeout_option(tuning)
        group.add_argument(
            '--grace',
            metavar='<duration>',
            type=duration,
            default=300,
            help='Wait this long for the normal delete (default: 5m)',
        )
        group.add_argument(
            '--wait',
            action='store_true',
            help='Wait for the cluster to disappear (up to --timeout)',
        )
        group.add_argument(
            '--manifest',
            metavar='<file>',
            help='List what the stack left in <file> (default: in ./)',
        )
        group.add_argument(
            '--force',
            action='store_true',
            help='Even a Cluster API cluster that may run (ACTIVE)',
        )
        group.add_argument(
            '--capi-helm-namespace-prefix',
            metavar='<prefix>',
            default='magnum',
            help="magnum-capi-helm's [capi_helm] namespace_prefix, if the "
            "cloud's is not 'magnum'",
        )
        group.add_argument(
            '--delete-leftovers',
            action='store_true',
            help='Then delete what the stack left (or --manifest lists)',
        )
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.engine.retry import Clock, RetryPolicy
        from osc_cascade.v1.progress import Progress
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import clusters, force_delete

        _check_arguments(parsed_args)
        self.record = RunRecord(parsed_args, 'cluster force-delete')
        conn = connection(self.app, parsed_args)
        retry, clock = RetryPolicy(), Clock()
        progress = Progress(fmt=parsed_args.progress)
        dry_run = parsed_args.dry_run
        resuming = _resuming(parsed_args)
        with engine_errors():
            services = [] if resuming else self.services(conn, parsed_args)
            force = force_delete.ForceDelete(
                conn,
                services,
                force_delete.ForceDeleteOptions(
                    grace=parsed_args.grace,
                    wait=parsed_args.wait,
                    timeout=parsed_args.timeout,
                    delete_leftovers=parsed_args.delete_leftovers,
                    parallel=parsed_args.parallel,
                    manifest=parsed_args.manifest,
                    force=parsed_args.force,
                    capi_helm_prefix=parsed_args.capi_helm_namespace_prefix,
                ),
                notify=progress.note,
                on_event=progress,
                on_plan=progress.add_total,
                retry=retry,
                clock=clock,
            )
            if resuming:
                return self._resume(force, parsed_args, progress)
            if parsed_args.stuck:
                targets = [
                    s.cluster
                    for s in clusters.stuck_of_project(
                        conn,
                        services,
                        parsed_args.older_than,
                        parsed_args.project,
                        include_updating=parsed_args.include_updating,
                        retry=retry,
                        clock=clock,
                    )
                ]
                if not (parsed_args.yes or dry_run):
                    progress.note(
                        'Showing what would be force-deleted; pass '
                        '--yes to force-delete.'
                    )
                    dry_run = True
            else:
                targets = [
                    clusters.find_cluster(
                        conn, services, name, retry=retry, clock=clock
                    )
                    for name in parsed_args.clusters
                ]
            previews = force.preview_all(targets)
        refused = [p for p in previews if p.error]
        if dry_run:
            columns, rows = preview_rows(
                previews, parsed_args.delete_leftovers
            )
            if refused:
                self.produce_output(parsed_args, columns, rows)
                raise exceptions.CommandError(
                    f'{len(refused)} of {len(previews)} clusters cannot '
                    f'be force-deleted'
                )
            return columns, rows

        if not parsed_args.stuck and len(refused) < len(previews):
            confirm(question(previews, parsed_args.grace), parsed_args.yes)
        planned = preview_rows(previews, parsed_args.delete_leftovers)
        try:
            with (
                self._recording(conn, planned, force, progress),
                stoppable(force.interrupt),
            ):
                outcomes = force.run_all(previews)
        except Interrupted as exc:
            self._interrupted(parsed_args, force, progress, exc)
        finally:
            progress.close()
        return self._report(parsed_args, outcomes, progress)

    def services(self, conn: Any, parsed_args: argparse.Namespace) -> list:
        """Where the clusters are looked for: Magnum and Sahara, or Heat
        with --stack (``v1.coe_cluster``: Magnum alone)."""
        from osc_cascade.workflows import clusters

        return clusters.services_for(conn, stacks=parsed_args.stack)

    def _resume(
        self, force: Any, parsed_args: argparse.Namespace, progress: Any
    ) -> Rows:
        """Delete what a manifest lists, without its cluster."""
        manifest = force.load(parsed_args.manifest)
        actions = force.pending_actions(manifest)
        if parsed_args.dry_run:
            return resume_rows(manifest, actions)
        confirm(resume_question(manifest, actions), parsed_args.yes)
        planned = resume_rows(manifest, actions)
        try:
            with (
                self._recording(force.conn, planned, force, progress),
                stoppable(force.interrupt),
            ):
                outcome = force.resume(manifest)
        except Interrupted as exc:
            self._interrupted(parsed_args, force, progress, exc)
        finally:
            progress.close()
        return self._report(parsed_args, [outcome], progress)

    def _recording(
        self, conn: Any, planned: Rows, force: Any, progress: Any
    ) -> Any:
        """The record of the run (``RunRecord``): what was planned, and
        each cluster's outcome so far."""
        return self.record.recording(
            lambda error: self.record.of_rows(
                conn,
                list(filter(None, [conn.config.region_name])),
                planned,
                outcome_rows(force.outcomes),
                ok=all(o.ok for o in force.outcomes),
                error=error,
            ),
            progress.note,
        )

    def _interrupted(
        self,
        parsed_args: argparse.Namespace,
        force: Any,
        progress: Any,
        exc: Interrupted,
    ) -> NoReturn:
        """A signal stopped the run: each cluster's outcome, then the
        interruption's line, and exit 128 + the signal."""
        progress.close()
        for o in force.outcomes:
            for line in o.problems():
                progress.note(f'stopped: {line}')
        self.produce_output(parsed_args, *outcome_rows(force.outcomes))
        exit_interrupted(exc)

    def _report(
        self,
        parsed_args: argparse.Namespace,
        outcomes: Sequence[ForceDeleteOutcome],
        progress: Any,
    ) -> Rows:
        """The outcomes' rows; with a failure, its lines on stderr, the
        rows, and "N of M clusters failed"."""
        columns, rows = outcome_rows(outcomes)
        for o in outcomes:
            for line in o.kept():
                progress.note(f'{o.cluster.label()}: {line}')
        failed = [o for o in outcomes if not o.ok]
        if not failed:
            return columns, rows
        for o in failed:
            for line in o.problems():
                progress.note(f'failed: {line}')
        self.produce_output(parsed_args, columns, rows)
        raise exceptions.CommandError(
            f'{len(failed)} of {len(outcomes)} clusters failed'
        )


def _resuming(parsed_args: argparse.Namespace) -> bool:
    """``--delete-leftovers --manifest FILE`` and no cluster: a resume."""
    return bool(
        parsed_args.delete_leftovers
        and parsed_args.manifest
        and not parsed_args.clusters
        and not parsed_args.stuck
    )


def _check_arguments(parsed_args: argparse.Namespace) -> None:
    if parsed_args.stuck == bool(parsed_args.clusters) and not (
        _resuming(parsed_args)
    ):
        raise exceptions.CommandError(
            'Name the cluster(s) to force-delete, or pass --stuck (not '
            'both), or --delete-leftovers --manifest FILE to delete what '
            'a manifest lists.'
        )
    for option in ('older_than', 'project', 'include_updating'):
        if getattr(parsed_args, option) not in (None, False) and not (
            parsed_args.stuck
        ):
            raise exceptions.CommandError(
                f'--{option.replace("_", "-")} needs --stuck'
            )
    if parsed_args.stuck and parsed_args.older_than is None:
        raise exceptions.CommandError(
            '--stuck needs --older-than <age> (such as 24h): a '
            'force-delete assumes no age.'
        )
    if parsed_args.manifest and (
        parsed_args.stuck or len(parsed_args.clusters) > 1
    ):
        raise exceptions.CommandError(
            '--manifest names the file of one cluster; '
            'with several, each gets its default name.'
        )


# -- what the commands print -------------------------------------------------


def stuck_rows(stuck: Sequence[StuckCluster]) -> Rows:
    from osc_cascade.workflows.clusters.stuck import format_age

    return STUCK_CLUSTER_COLUMNS, [
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


def preview_rows(previews: Sequence[Preview], delete_leftovers: bool) -> Rows:
    """What a force-delete would leave behind (or delete), one row per
    resource; a cluster with nothing to leave gets one row that says so."""
    from osc_cascade.v1.cluster_leftovers import footprint_rows
    from osc_cascade.workflows.force_delete.outcome import planned_action

    rows = []
    for p in previews:
        c = p.cluster
        if p.error:
            rows.append(_plan_row(c, f'cannot force-delete: {p.error}'))
        elif p.footprint is not None:
            rows += footprint_rows(p)
        elif p.stack is None:
            rows.append(_plan_row(c, 'delete normally: no stack'))
        elif not p.left_behind():
            rows.append(
                _plan_row(
                    c, 'abandon: nothing left behind', stack=p.stack.name
                )
            )
        else:
            rows += [
                _plan_row(c, planned_action(r, delete_leftovers), res=r)
                for r in p.left_behind()
            ]
    return FORCE_DELETE_PLAN_COLUMNS, rows


def _plan_row(
    cluster: ClusterRecord,
    action: str,
    *,
    stack: str = '',
    res: StackResource | None = None,
) -> tuple[str, ...]:
    """A row of FORCE_DELETE_PLAN_COLUMNS: a cluster's resource, or the
    cluster alone."""
    return (
        cluster.name,
        cluster.service,
        cluster.status,
        res.stack if res else stack,
        res.type if res else '',
        res.physical_id if res else '',
        res.project_id if res else cluster.project_id,
        action,
    )


def question(previews: Sequence[Preview], grace: float) -> str:
    from osc_cascade.v1.cluster_leftovers import footprint_summary

    lines = [
        f'Force-delete {len(previews)} cluster(s)? Each is deleted '
        f'the normal way first; if that has not finished after '
        f'{grace:g}s, its Heat stack is abandoned and what the stack '
        f'made stays:'
    ]
    for p in previews:
        if p.error:
            where = f'left alone: {p.error}'
        elif p.footprint is not None:
            where = footprint_summary(p)
        elif p.stack:
            where = (
                f'stack {p.stack.name}, {len(p.left_behind())} '
                f'resource(s) left behind'
            )
        else:
            where = 'no stack'
        lines.append(f'  {p.cluster.label()}: {where}')
    return '\n'.join(lines) + '\nContinue?'


def resume_rows(
    manifest: Manifest, actions: Sequence[tuple[StackResource, str]]
) -> Rows:
    """What a resume would do with each resource of the manifest."""
    cluster = manifest.cluster
    return FORCE_DELETE_PLAN_COLUMNS, [
        _plan_row(cluster, action, res=r) for r, action in actions
    ]


def resume_question(
    manifest: Manifest, actions: Sequence[tuple[StackResource, str]]
) -> str:
    todo = [r for r, action in actions if action == 'delete']
    return (
        f'Delete what stack {manifest.stack.name} of '
        f'{manifest.cluster.label()} left behind, as {manifest.path} '
        f'lists it: {len(todo)} resource(s) that still exist, in '
        f'dependency order?\nContinue?'
    )


def outcome_rows(outcomes: Sequence[ForceDeleteOutcome]) -> Rows:
    from osc_cascade.workflows.force_delete import leftovers

    rows = []
    for o in outcomes:
        deleted = sum(
            1 for v in o.leftovers.values() if v == leftovers.DELETED
        )
        rows.append(
            (
                o.cluster.service,
                o.cluster.name,
                o.cluster.id,
                _result(o),
                o.record,
                len(o.left_behind),
                deleted,
                len(o.not_deleted()),
                o.manifest,
            )
        )
    return FORCE_DELETE_COLUMNS, rows


def _result(outcome: ForceDeleteOutcome) -> str:
    """How far the force-delete went and, when it failed, why."""
    from osc_cascade.workflows.force_delete import FAILED

    if not outcome.error:
        return outcome.result
    if outcome.result == FAILED:
        return f'failed: {outcome.error}'
    return f'{outcome.result}, then failed: {outcome.error}'
