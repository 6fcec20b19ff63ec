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

"""``openstack user delete --cascade``: a cliff hook on OSC's own command.

As ``project delete --cascade`` (``v1.project``): the hook plans and
deletes what the users own outside Keystone's reach (``workflows.users``)
in ``before()``, then hands OSC only the users it emptied, which OSC's
``DeleteUser.take_action`` deletes.
"""

from __future__ import annotations

import argparse

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.v1 import output
from osc_cascade.v1.common import (
    add_execution_options,
    add_region_option,
    add_tuning_group,
    confirm,
    connection,
    counts_text,
    engine_errors,
    hand_to_osc,
    identity_v3_only,
    refuse_stray_options,
    stoppable,
)
from osc_cascade.v1.constants import SUMMARY_COLUMNS

#: options that mean nothing without --cascade
_CASCADE_ONLY = ('dry_run', 'yes', 'column', 'cascade_regions')


class UserDeleteCascade(hooks.CommandHook):
    """Adds ``--cascade`` and its options to ``openstack user delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group('cascade (osc-cascade)')
        group.add_argument(
            '--cascade',
            action='store_true',
            help='First delete its keypairs, credentials, trusts (admin)',
        )
        add_execution_options(group, add_tuning_group(parser))
        add_region_option(group)
        output.add_format_options(parser)
        return parser

    def get_epilog(self) -> str:
        return (
            'With --cascade, the user is disabled, its keypairs (every '
            'region), credentials and trusts are deleted, then the user.'
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not getattr(parsed_args, 'cascade', False):
            refuse_stray_options(parsed_args, _CASCADE_ONLY, '--cascade')
            return parsed_args
        self._check_identity_v3()
        with engine_errors():
            emptied = self._cascade(parsed_args)
        parsed_args.domain = None  # the users are handed over by ID
        return hand_to_osc(parsed_args, 'users', emptied)

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        return return_code

    def _cascade(self, parsed_args: argparse.Namespace) -> list[str]:
        from osc_cascade.v1.progress import Progress
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import users
        from osc_cascade.workflows.cascade_options import CascadeOptions

        progress = Progress(fmt=parsed_args.progress)
        record = RunRecord(parsed_args, 'user delete --cascade')
        conn = connection(self.cmd.app, parsed_args)
        options = CascadeOptions(
            parallel=parsed_args.parallel,
            timeout=parsed_args.timeout,
            regions=tuple(parsed_args.cascade_regions),
        )
        workflow = users.UserCascade(conn, options, on_event=progress)
        targets = workflow.resolve(parsed_args.users, parsed_args.domain)
        plan = workflow.plan(targets)
        progress.add_notes(plan.notes)
        if parsed_args.dry_run:
            columns, rows = output.plan_table(
                plan, full=parsed_args.formatter in output.MACHINE_FORMATS
            )
            output.emit(parsed_args, columns, rows, self.cmd.app.stdout)
            progress.flush_notes()
            if plan.kept():
                raise exceptions.CommandError(
                    f'The real run would refuse: {len(plan.kept())} '
                    'resource(s) are kept (see the plan), so the users '
                    'would not be deleted.'
                )
            return []
        output.chosen_columns(parsed_args, SUMMARY_COLUMNS)
        names = ', '.join(f'{t.name} ({t.id})' for t in targets)
        confirm(
            f'The cascade will delete, of user(s) {names}:\n'
            + counts_text(plan)
            + '\nContinue?',
            parsed_args.yes,
        )
        progress.add_total(len(users.without_users(plan).steps))
        try:
            with (
                record.recording(
                    lambda error: record.of_plan(
                        conn,
                        workflow.regions.names,
                        users.without_users(plan),
                        workflow.runs,
                        parallel=options.parallel,
                        error=error,
                    ),
                    progress.note,
                ),
                stoppable(workflow.interrupt),
            ):
                outcome = workflow.execute(plan, targets)
        finally:
            progress.close()
        self._emit_summary(outcome, parsed_args)
        progress.flush_notes()
        return [u.id for u in outcome.empty_users]

    def _check_identity_v3(self) -> None:
        from openstackclient.identity.v3 import user as v3_user

        identity_v3_only(self.cmd, v3_user.DeleteUser)

    def _emit_summary(self, outcome, parsed_args: argparse.Namespace) -> None:
        rows = output.summary_rows(
            outcome.runs, ('identity.user', len(outcome.empty_users))
        )
        output.emit(parsed_args, SUMMARY_COLUMNS, rows, self.cmd.app.stdout)
