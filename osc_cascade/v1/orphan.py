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

"""``openstack orphan list`` and ``openstack orphan purge``."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from osc_lib import exceptions
from osc_lib.command import command

from osc_cascade.v1.common import add_execution_options, confirm

LOG = logging.getLogger(__name__)


def _add_search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--service',
        metavar='<service-type>',
        action='append',
        default=[],
        help='Search only this service type (network, compute, ...); '
        'repeat for more',
    )
    parser.add_argument(
        '--kind',
        metavar='<kind>',
        action='append',
        default=[],
        help='Search only this resource kind (network.port, ...); repeat '
        'for more',
    )
    parser.add_argument(
        '--parallel-discovery',
        metavar='<n>',
        type=int,
        default=8,
        help='List at most <n> kinds at once (default: 8)',
    )


def _search(
    app: Any, parsed_args: argparse.Namespace, owners: list[str]
) -> tuple[Any, Any, Any]:
    from osc_cascade import kinds as kinds_mod
    from osc_cascade.workflows import orphans

    conn = app.client_manager.sdk_connection
    kinds = orphans.select_kinds(
        kinds_mod.build(), parsed_args.service, parsed_args.kind
    )
    findings = orphans.find(
        conn,
        kinds,
        owners_filter=owners,
        parallel=parsed_args.parallel_discovery,
    )
    for note in findings.notes:
        LOG.warning('note: %s', note)
    return conn, findings, kinds


class ListOrphan(command.Lister):
    """List resources whose owner project no longer exists"""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_search_options(parser)
        parser.add_argument(
            '--owner',
            metavar='<project-id>',
            action='append',
            default=[],
            help='Only orphans of this (deleted) project ID; repeat for more',
        )
        parser.add_argument(
            '--exit-code',
            action='store_true',
            help='Exit with status 2 when orphans are found (for '
            'monitoring); 0 when none are',
        )
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.workflows import orphans

        _conn, findings, _kinds = _search(
            self.app, parsed_args, parsed_args.owner
        )
        self.found = len(findings.orphans)
        return orphans.COLUMNS, [o.row() for o in findings.orphans]

    def run(self, parsed_args: argparse.Namespace) -> int:
        code = super().run(parsed_args)
        if parsed_args.exit_code and self.found:
            return 2
        return code


class PurgeOrphan(command.Lister):
    """Delete the resources of deleted projects, in dependency order"""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_search_options(parser)
        parser.add_argument(
            '--project-id',
            metavar='<project-id>',
            action='append',
            default=[],
            help='Purge only the orphans of this deleted project ID; repeat '
            'for more (default: of every deleted project)',
        )
        add_execution_options(parser)
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.engine.executor import Executor
        from osc_cascade.engine.planner import PlanError
        from osc_cascade.v1.progress import Progress
        from osc_cascade.workflows import orphans

        conn, findings, kinds = _search(
            self.app, parsed_args, parsed_args.project_id
        )
        try:
            plan = orphans.purge_plan(findings, kinds)
        except PlanError as exc:
            raise exceptions.CommandError(f'Cannot plan the purge: {exc}')
        if parsed_args.dry_run or not plan.steps:
            return plan.rows()
        owners = ', '.join(p['id'] for p in plan.projects)
        confirm(
            f'Delete {len(plan.steps)} orphaned resource(s) of deleted '
            f'project(s) {owners}?',
            parsed_args.yes,
        )
        progress = Progress()
        progress.add_total(len(plan.steps))
        try:
            result = Executor(
                conn,
                kinds,
                parallel=parsed_args.parallel,
                timeout=parsed_args.timeout,
                on_event=progress,
            ).run(plan)
        finally:
            progress.close()
        columns = ('Kind', 'Deleted', 'Failed', 'Skipped')
        if not result.ok:
            LOG.error(
                '%d orphaned resource(s) could not be deleted',
                len(result.by_outcome('failed')),
            )
            self.failed = True
        return columns, result.summary()

    def run(self, parsed_args: argparse.Namespace) -> int:
        self.failed = False
        code = super().run(parsed_args)
        return 1 if self.failed else code
