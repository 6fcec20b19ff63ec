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

"""``openstack project delete --cascade``: a cliff hook on OSC's own command.

The hook adds the cascade options to ``project delete`` and does the work in
``before()``, which cliff runs after parsing and authentication and right
before OSC's ``DeleteProject.take_action``. A hook cannot skip
``take_action``; instead it hands OSC only the projects that the cascade
emptied and verified: none for ``--dry-run`` (so the project stays), and for
a real run the projects by ID, so that OSC's own code deletes them as it
would without the plugin.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.v1 import output
from osc_cascade.v1.common import (
    add_execution_options,
    confirm,
    counts_text,
    refuse_stray_options,
)

#: options that mean nothing without --cascade
_CASCADE_ONLY = (
    'dry_run',
    'yes',
    'recursive',
    'delete_shared_images',
    'plan_file',
    'report_file',
    'column',
)
#: what a real run prints: per kind, how many steps ended how
SUMMARY_COLUMNS = ('Kind', 'Deleted', 'Failed', 'Skipped')


class ProjectDeleteCascade(hooks.CommandHook):
    """Adds ``--cascade`` and its options to ``openstack project delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group(
            'cascade (osc-cascade)',
            'Delete everything the project owns in every service of the '
            'catalog, in dependency order, then the project.',
        )
        group.add_argument(
            '--cascade',
            action='store_true',
            help='Delete all resources the project owns in every service, '
            'then the project. Needs the admin role.',
        )
        add_execution_options(group)
        group.add_argument(
            '--recursive',
            action='store_true',
            help='With --cascade, also cascade into child projects '
            '(without it, a project with children is refused)',
        )
        group.add_argument(
            '--delete-shared-images',
            action='store_true',
            help='With --cascade, also delete the project\'s public, '
            'community, shared and protected images (kept by '
            'default, which keeps the project too)',
        )
        group.add_argument(
            '--plan-file',
            metavar='<file>',
            help='With --dry-run, save the plan to <file>; without, '
            'execute the plan saved in <file> instead of a new one',
        )
        group.add_argument(
            '--report-file',
            metavar='<file>',
            help='With --cascade, write what was done to <file> as JSON: '
            'the plan, and each step\'s outcome, seconds and attempts '
            '(for benchmarks and post-mortems)',
        )
        output.add_format_options(parser, with_dot=True)
        return parser

    def get_epilog(self) -> str:
        return (
            'With --cascade, the project is first disabled so that '
            'nothing new can be created in it, then everything it owns '
            'is deleted in dependency order, and the project is deleted '
            'only once nothing of it is left.'
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not getattr(parsed_args, 'cascade', False):
            refuse_stray_options(parsed_args, _CASCADE_ONLY, '--cascade')
            return parsed_args
        self._check_identity_v3()
        # imported here: `openstack help` builds every hook, keep it cheap
        from osc_cascade.v1.progress import Progress
        from osc_cascade.workflows import cascade as cascade_mod

        conn = self.cmd.app.client_manager.sdk_connection
        self._phases: dict[str, float] = {}
        progress = Progress()
        cascade = cascade_mod.ProjectCascade(
            conn,
            cascade_mod.CascadeOptions(
                recursive=parsed_args.recursive,
                delete_shared_images=parsed_args.delete_shared_images,
                parallel=parsed_args.parallel,
                timeout=parsed_args.timeout,
            ),
            on_event=progress,
        )
        projects = [
            cascade_mod.resolve_project(conn, p, parsed_args.domain)
            for p in parsed_args.projects
        ]
        targets = cascade.targets(projects)
        started = cascade.clock.now()
        plan = self._plan(cascade, targets, parsed_args)
        self._phases['plan'] = cascade.clock.now() - started
        for note in plan.notes:
            progress.note(f'note: {note}')

        if parsed_args.dry_run:
            if parsed_args.plan_file:
                with open(parsed_args.plan_file, 'w') as f:
                    f.write(plan.to_json())
            self._emit_plan(plan, parsed_args)
            # OSC's take_action deletes what it is handed: nothing
            parsed_args.projects = []
            return parsed_args

        output.chosen_columns(parsed_args, SUMMARY_COLUMNS)
        names = ', '.join(f'{t.name} ({t.id})' for t in targets)
        confirm(
            f'The cascade will delete, in project(s) {names}:\n'
            + counts_text(plan)
            + '\nContinue?',
            parsed_args.yes,
        )
        progress.add_total(len(cascade_mod.without_projects(plan).steps))
        began = cascade.clock.now()
        try:
            outcome = cascade.execute(plan, targets)
        except Exception as exc:
            self._report(parsed_args, cascade, plan, began, exc)
            raise
        else:
            self._report(parsed_args, cascade, plan, began)
        finally:
            progress.close()
        self._emit_summary(outcome, parsed_args)
        parsed_args.projects = [p.id for p in outcome.empty_projects]
        parsed_args.domain = None
        return parsed_args

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        return return_code

    # -- helpers -----------------------------------------------------------

    def _report(
        self,
        parsed_args: argparse.Namespace,
        cascade: Any,
        plan: Any,
        began: float,
        exc: Exception | None = None,
    ) -> None:
        if not parsed_args.report_file:
            return
        from osc_cascade.engine import report
        from osc_cascade.workflows import cascade as cascade_mod

        phases = dict(self._phases, execute=cascade.clock.now() - began)
        report.write(
            parsed_args.report_file,
            report.build(
                cascade_mod.without_projects(plan),
                cascade.runs,
                parallel=parsed_args.parallel,
                phases=phases,
                origin=began,
                error='' if exc is None else str(exc) or type(exc).__name__,
            ),
        )

    def _check_identity_v3(self) -> None:
        from openstackclient.identity.v3 import project as v3_project

        if not isinstance(self.cmd, v3_project.DeleteProject):
            raise exceptions.CommandError(
                '--cascade needs the Identity API v3 '
                '(--os-identity-api-version 3)'
            )

    def _plan(
        self, cascade: Any, targets: list[Any], parsed_args: argparse.Namespace
    ) -> Any:
        from osc_cascade.engine.planner import Plan, PlanError

        path = parsed_args.plan_file
        try:
            if path and not parsed_args.dry_run:
                if not os.path.exists(path):
                    raise exceptions.CommandError(
                        f'Plan file {path} does not exist; make one with '
                        f'--dry-run --plan-file {path}'
                    )
                with open(path) as f:
                    plan = Plan.from_dict(json.load(f))
                planned = {p['id'] for p in plan.projects}
                if planned != {t.id for t in targets}:
                    raise exceptions.CommandError(
                        f'Plan file {path} is for project(s) '
                        f'{", ".join(sorted(planned))}, not for the '
                        f'project(s) given.'
                    )
                return plan
            return cascade.plan(targets)
        except (PlanError, ValueError) as exc:
            raise exceptions.CommandError(f'Cannot plan the cascade: {exc}')

    def _emit_plan(self, plan: Any, parsed_args: argparse.Namespace) -> None:
        if parsed_args.formatter == output.DOT:
            sys.stdout.write(plan.to_dot())
            return
        columns, rows = plan.rows()
        output.emit(parsed_args, columns, rows)

    def _emit_summary(
        self, outcome: Any, parsed_args: argparse.Namespace
    ) -> None:
        from osc_cascade.engine.executor import RunResult

        final = RunResult.merge(outcome.runs)
        rows = [
            (kind, done, failed, skipped)
            for kind, done, failed, skipped in final.summary()
        ]
        rows += [
            (
                'identity.project',
                len(outcome.empty_projects) + len(outcome.deleted_children),
                0,
                0,
            )
        ]
        if parsed_args.formatter == output.DOT:
            parsed_args.formatter = 'table'
        output.emit(parsed_args, SUMMARY_COLUMNS, rows)
