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

The hook adds the cascade options to ``project delete`` and runs the
cascade workflow in ``before()``, which cliff runs after parsing and
authentication and right before OSC's ``DeleteProject.take_action``; it
then hands OSC only the projects that the cascade emptied and verified
(``common.hand_to_osc``), so that OSC's own code deletes them.
"""

from __future__ import annotations

import argparse

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.engine.errors import Interrupted
from osc_cascade.v1 import output
from osc_cascade.v1.cascade_options import (
    add_plan_file_options,
    add_workers_option,
)
from osc_cascade.v1.common import (
    UsageGroup,
    add_api_timeout_option,
    add_execution_options,
    add_exit_status,
    add_force_stuck_option,
    add_region_option,
    add_tuning_group,
    confirm,
    connection,
    counts_text,
    duration,
    engine_errors,
    exit_interrupted,
    hand_to_osc,
    identity_v3_only,
    refuse_stray_options,
    stoppable,
)
from osc_cascade.v1.constants import SUMMARY_COLUMNS
from osc_cascade.v1.selection import DESTS as SELECTION_OPTIONS
from osc_cascade.v1.selection import EPILOG as SELECTIVE_EPILOG
from osc_cascade.v1.selection import add_selection_options

#: options that mean nothing without --cascade
_CASCADE_ONLY = (
    'dry_run',
    'yes',
    'recursive',
    'delete_shared',
    'force_stuck',
    'plan_file',
    'plan_max_age',
    'report_file',
    'no_report',
    'column',
    'cascade_regions',
    'settle',
    'graph',
    'coordination_url',
    'keep_project',
    'without_admin',
    *SELECTION_OPTIONS,
)


class ProjectDeleteCascade(hooks.CommandHook):
    """Adds ``--cascade`` and its options to ``openstack project delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group('cascade (osc-cascade)')
        group.add_argument(
            '--cascade',
            action='store_true',
            help='First delete all it owns (admin or domain manager)',
        )
        add_execution_options(group, tuning := add_tuning_group(parser))
        # past the three every run names, one [cascade options] in usage
        group = UsageGroup(group, 'cascade options')
        add_force_stuck_option(group)
        group.add_argument(
            '--recursive',
            action='store_true',
            help='Also delete the child projects (else they are refused)',
        )
        group.add_argument(
            '--delete-shared',
            action='store_true',
            help='Also delete images, zones, templates... others may use',
        )
        # its first name, which still works: not a second help line
        group.add_argument(
            '--delete-shared-images',
            dest='delete_shared',
            action='store_true',
            help=argparse.SUPPRESS,
        )
        add_region_option(group)
        group.add_argument(
            '--keep-project',
            action='store_true',
            help='Empty the project but keep it (a role on it is enough)',
        )
        group.add_argument(
            '--without-admin',
            action='store_true',
            help='Work as the project\'s member, even with the admin role',
        )
        group.add_argument(
            '--settle',
            metavar='<duration>',
            type=duration,
            help='After the delete, wait this, then delete what appeared',
        )
        add_plan_file_options(group, tuning)
        add_workers_option(tuning)
        add_selection_options(parser)
        add_api_timeout_option(tuning)
        from osc_cascade.v1.project_drain import add_coordination_option

        add_coordination_option(tuning)
        output.add_format_options(parser, with_dot=True)
        add_exit_status(parser)
        return parser

    def get_epilog(self) -> str:
        return (
            '--cascade: disable the project, delete all it owns, then the '
            'project. ' + SELECTIVE_EPILOG
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not getattr(parsed_args, 'cascade', False):
            refuse_stray_options(parsed_args, _CASCADE_ONLY, '--cascade')
            return parsed_args
        self._check_identity_v3()
        with engine_errors():
            try:
                emptied = self._cascade(parsed_args)
            finally:
                # a dry run or a failure before the run: what the workflow
                # holds (a role given for the run) goes back now
                workflow = getattr(self, '_workflow', None)
                if workflow is not None and not hasattr(self, '_finish'):
                    workflow.release()
        parsed_args.domain = None  # the projects are handed over by ID
        return hand_to_osc(parsed_args, 'projects', emptied)

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        """After OSC deleted the projects: the settle, then the release
        of the quotas the drain froze (``after_delete.finish``)."""
        finish = getattr(self, '_finish', None)
        if finish is None:
            return return_code
        workflow, outcome = finish
        if return_code:  # OSC did not delete them: nothing to finish
            workflow.release()
            return return_code
        from osc_cascade.workflows import after_delete

        try:
            with engine_errors(), stoppable(workflow.interrupt):
                notes = after_delete.finish(workflow, outcome)
        except Interrupted as exc:
            exit_interrupted(exc)
        for note in notes:
            self._progress.note(f'note: {note}')  # a JSON event with json
        return return_code

    def _cascade(self, parsed_args: argparse.Namespace) -> list[str]:
        """Plan, confirm, run; the IDs of the projects it emptied."""
        # imported here: `openstack help` builds every hook, keep it cheap
        from osc_cascade.engine import planfile
        from osc_cascade.v1.progress import Progress
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import cascade, scoped

        if parsed_args.graph:
            if not parsed_args.dry_run:
                raise exceptions.CommandError('--graph needs --dry-run')
            output.graph_format(parsed_args.graph)  # before any call
        progress = self._progress = Progress(
            fmt=parsed_args.progress, rounds='verification round'
        )
        record = RunRecord(parsed_args, 'project delete --cascade')
        conn = connection(self.cmd.app, parsed_args)
        options = cascade.CascadeOptions(
            recursive=parsed_args.recursive,
            delete_shared=parsed_args.delete_shared,
            force_stuck=parsed_args.force_stuck,
            parallel=parsed_args.parallel,
            workers=getattr(parsed_args, "workers", None),
            timeout=parsed_args.timeout,
            report_file=record.path or None,
            regions=tuple(parsed_args.cascade_regions),
            settle=parsed_args.settle or 0.0,
            coordination_url=parsed_args.coordination_url,
            **(
                {'plan_max_age': parsed_args.plan_max_age}
                if parsed_args.plan_max_age is not None
                else {}
            ),
        )
        if self._selective(parsed_args):
            workflow: cascade.ProjectCascade = self._selective_workflow(
                conn, options, parsed_args, progress
            )
        elif (
            parsed_args.keep_project
            or parsed_args.without_admin
            or scoped.needs_scoped(conn)
        ):
            workflow = scoped.ScopedCascade(
                conn,
                options,
                keep_project=parsed_args.keep_project,
                on_event=progress,
            )
        else:
            workflow = cascade.ProjectCascade(conn, options, on_event=progress)
        self._workflow = workflow
        targets = workflow.resolve(parsed_args.projects, parsed_args.domain)
        saved = parsed_args.plan_file
        if saved and not parsed_args.dry_run:
            plan = workflow.load_plan(saved, targets)
        else:
            plan = workflow.plan(targets)
        progress.add_notes(plan.notes)

        if parsed_args.dry_run:
            if saved:
                planfile.save(saved, plan)
            self._emit_plan(plan, parsed_args)
            progress.flush_notes()
            if plan.refusing() and not plan.selection:
                raise exceptions.CommandError(
                    f'The real run would refuse: {len(plan.refusing())} '
                    'resource(s) are kept (see the plan), so the projects '
                    'would not be deleted.'
                )
            if plan.stuck():
                drained = (
                    ''
                    if plan.selection
                    else (' and leave the projects drained')
                )
                raise exceptions.CommandError(
                    f'The real run would delete the rest{drained}: '
                    f'{len(plan.stuck())} resource(s) are stuck (see the '
                    'plan).'
                )
            outside = workflow.outside(plan)
            if outside and not plan.selection:
                raise exceptions.CommandError(
                    f'The real run would delete in '
                    f'{", ".join(workflow.regions.names)} only: '
                    f'{len(outside)} resource(s) in '
                    f'{", ".join(sorted({s.target.region for s in outside}))} '
                    'stay (see the plan), so the projects would stay drained.'
                )
            return []

        output.chosen_columns(parsed_args, SUMMARY_COLUMNS)
        names = ', '.join(f'{t.name} ({t.id})' for t in targets)
        confirm(
            f'The cascade will delete, in project(s) {names}:\n'
            + counts_text(plan)
            + '\nContinue?',
            parsed_args.yes,
        )
        progress.add_total(len(cascade.without_projects(plan).steps))
        options.report_context = record.context(conn, workflow.regions.names)
        try:
            with stoppable(workflow.interrupt):
                outcome = workflow.execute(plan, targets)
        except Interrupted as exc:
            progress.close()
            self._emit_summary(workflow.runs, [], parsed_args)
            progress.flush_notes()
            exit_interrupted(exc)
        finally:
            progress.close()
            record.announce(workflow.unwritten, progress.note)
        self._emit_summary(
            outcome.runs,
            outcome.empty_projects + outcome.deleted_children,
            parsed_args,
        )
        progress.add_notes(workflow.notes)  # the drain's
        progress.flush_notes()
        self._finish = (workflow, outcome)
        return [p.id for p in outcome.empty_projects]

    def _selective(self, parsed_args: argparse.Namespace) -> bool:
        """A selection option, or a selective plan file to run."""
        from osc_cascade.engine import plan_rows
        from osc_cascade.v1 import selection

        saved = parsed_args.plan_file
        return selection.given(parsed_args) or bool(
            saved and not parsed_args.dry_run and plan_rows.is_selective(saved)
        )

    def _selective_workflow(self, conn, options, parsed_args, progress):
        """A selective cleanup: the project stays (--keep-project)."""
        from osc_cascade.v1 import selection
        from osc_cascade.workflows import scoped, selective

        chosen, ages = selection.selection_of(
            parsed_args, selection.known_kinds()
        )
        parsed_args.keep_project = True
        cls = (
            selective.ScopedSelectiveCascade
            if parsed_args.without_admin or scoped.needs_scoped(conn)
            else selective.SelectiveCascade
        )
        return cls(
            conn, options, selection=chosen, ages=ages, on_event=progress
        )

    def _check_identity_v3(self) -> None:
        from openstackclient.identity.v3 import project as v3_project

        identity_v3_only(self.cmd, v3_project.DeleteProject)

    def _emit_plan(self, plan, parsed_args: argparse.Namespace) -> None:
        stdout = self.cmd.app.stdout
        if parsed_args.graph:
            output.render_graph(output.plan_dot(plan), parsed_args.graph)
        if parsed_args.formatter == output.DOT:
            stdout.write(output.plan_dot(plan))
            return
        columns, rows = output.plan_table(
            plan, full=parsed_args.formatter in output.MACHINE_FORMATS
        )
        output.emit(parsed_args, columns, rows, stdout)

    def _emit_summary(
        self, runs, projects, parsed_args: argparse.Namespace
    ) -> None:
        from osc_cascade.engine.executor import RunResult

        rows = list(RunResult.merge(runs).summary())
        rows.append(('identity.project', '', len(projects), 0, 0, 0, 0))
        if parsed_args.formatter == output.DOT:
            parsed_args.formatter = 'table'
        output.emit(parsed_args, SUMMARY_COLUMNS, rows, self.cmd.app.stdout)
