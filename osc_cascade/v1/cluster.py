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

The work is in ``osc_cascade.clusters``; these classes parse, confirm and
print. The names stay clear of python-senlinclient's ``cluster`` commands
(``cluster list``, ``cluster delete``...) and of Magnum's ``coe cluster``.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from osc_lib.command import command

from osc_cascade.engine.errors import CascadeError
from osc_cascade.v1.common import add_execution_options, confirm


class _Lazy:
    """A module imported on first use: ``openstack --help`` imports every
    command module to list the commands, and the plugin's machinery (kinds,
    planner, executor) would add a tenth of a second to it."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


clusters = _Lazy('osc_cascade.clusters')
_cascade = _Lazy('osc_cascade.workflows.cascade')
_progress = _Lazy('osc_cascade.v1.progress')

DEFAULT_AGE = '24h'


def age(text: str) -> float:
    try:
        return clusters.parse_age(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def non_negative_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError('must not be negative')
    return value


def add_stuck_options(
    parser: argparse.ArgumentParser, *, default_age: str | None
) -> None:
    parser.add_argument(
        '--stack',
        action='store_true',
        help='Work on Heat stacks themselves instead of Magnum and Sahara '
        'clusters',
    )
    parser.add_argument(
        '--older-than',
        metavar='<age>',
        type=age,
        default=default_age,
        help='Only clusters not updated for longer than <age>, such as '
        f'90s, 30m, 24h or 7d (default: {default_age or DEFAULT_AGE})',
    )
    parser.add_argument(
        '--project',
        metavar='<project>',
        help='Only the clusters of <project> (name or ID; default: all '
        'projects)',
    )


class ListStuckCluster(command.Lister):
    """List clusters stuck in a transitional state or a failed deletion"""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_stuck_options(parser, default_age=DEFAULT_AGE)
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        conn = self.app.client_manager.sdk_connection
        stuck = clusters.find_stuck(
            conn,
            clusters.services_for(conn, stacks=parsed_args.stack),
            parsed_args.older_than,
            clusters.utcnow(),
            _project_id(conn, parsed_args.project),
        )
        return clusters.stuck_rows(stuck)


class ForceDeleteCluster(command.Lister):
    """Force-delete stuck clusters by abandoning their Heat stack"""

    def get_epilog(self) -> str:
        return (
            'The last resort: each cluster is first deleted the normal '
            'way; only if that does not finish within --grace seconds is '
            'its Heat stack abandoned, which deletes Heat\'s record of '
            'the stack and leaves everything the stack made in place. '
            'What is left is listed in a manifest file and, with '
            '--delete-leftovers, deleted in dependency order. Needs the '
            'admin role, and enable_stack_abandon = true in heat.conf.'
        )

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'clusters',
            metavar='<cluster>',
            nargs='*',
            help='Cluster(s) to force-delete, by name or ID: Magnum or '
            'Sahara clusters, or with --stack Heat stacks',
        )
        parser.add_argument(
            '--stuck',
            action='store_true',
            help='Force-delete every stuck cluster (see "cluster stuck '
            'list"); without --yes, only show them',
        )
        add_stuck_options(parser, default_age=None)
        group = parser.add_argument_group('force-delete (osc-cascade)')
        add_execution_options(group)
        group.add_argument(
            '--grace',
            metavar='<seconds>',
            type=non_negative_float,
            default=300,
            help='Give the normal delete <seconds> to finish before the '
            'stack is abandoned (default: 300)',
        )
        group.add_argument(
            '--wait',
            action='store_true',
            help='Wait for the cluster to disappear once its stack is '
            'abandoned (at most --timeout seconds)',
        )
        group.add_argument(
            '--manifest',
            metavar='<file>',
            help='Write what the abandoned stack left behind to <file> '
            '(one cluster only; default: '
            'cluster-<name>-<stack id>-abandoned.json, or stack-... '
            'with --stack, in the current directory)',
        )
        group.add_argument(
            '--delete-leftovers',
            action='store_true',
            help='Then delete what the stack left behind and still '
            'exists, in dependency order, and report what could not '
            'be deleted',
        )
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        _check_arguments(parsed_args)
        conn = self.app.client_manager.sdk_connection
        services = clusters.services_for(conn, stacks=parsed_args.stack)
        progress = _progress.Progress()
        force = clusters.ForceDelete(
            conn,
            services,
            clusters.Options(
                grace=parsed_args.grace,
                wait=parsed_args.wait,
                timeout=parsed_args.timeout,
                delete_leftovers=parsed_args.delete_leftovers,
                parallel=parsed_args.parallel,
                manifest=parsed_args.manifest,
            ),
            notify=progress.note,
            on_event=progress,
            on_plan=progress.add_total,
        )

        dry_run = parsed_args.dry_run
        if parsed_args.stuck:
            targets = [
                s.cluster
                for s in clusters.find_stuck(
                    conn,
                    services,
                    parsed_args.older_than,
                    clusters.utcnow(),
                    _project_id(conn, parsed_args.project),
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
                clusters.find_cluster(conn, services, name)
                for name in parsed_args.clusters
            ]
        previews = [force.preview(t) for t in targets]
        if dry_run:
            return clusters.preview_rows(
                previews, parsed_args.delete_leftovers
            )

        if not parsed_args.stuck:
            confirm(
                clusters.question(previews, parsed_args.grace), parsed_args.yes
            )
        try:
            outcomes = [force.run(p) for p in previews]
        finally:
            progress.close()
        columns, rows = clusters.outcome_rows(outcomes)
        failed = [o for o in outcomes if not o.ok]
        if failed:
            self.produce_output(parsed_args, columns, rows)
            raise CascadeError(clusters.failure_message(failed, len(outcomes)))
        return columns, rows


def _project_id(conn: Any, name_or_id: str | None) -> str | None:
    return name_or_id and _cascade.resolve_project(conn, name_or_id).id


def _check_arguments(parsed_args: argparse.Namespace) -> None:
    if parsed_args.stuck == bool(parsed_args.clusters):
        raise CascadeError(
            'Name the cluster(s) to force-delete, or pass --stuck (not both).'
        )
    for option in ('older_than', 'project'):
        if getattr(parsed_args, option) is not None and not (
            parsed_args.stuck
        ):
            raise CascadeError(f'--{option.replace("_", "-")} needs --stuck')
    if parsed_args.stuck and parsed_args.older_than is None:
        parsed_args.older_than = clusters.parse_age(DEFAULT_AGE)
    if parsed_args.manifest and (
        parsed_args.stuck or len(parsed_args.clusters) > 1
    ):
        raise CascadeError(
            '--manifest names the file of one cluster; '
            'with several, each gets its default name.'
        )
