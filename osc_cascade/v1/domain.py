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

"""``openstack domain delete --cascade``: a cliff hook on OSC's own command.

As ``project delete --cascade`` (``v1.project``): the hook runs the
domain's cascade (``workflows.domain``) in ``before()``, then hands OSC
the domain only if the cascade emptied it (disabled, as Keystone wants),
which OSC's ``DeleteDomain.take_action`` deletes. One domain at a time.
"""

from __future__ import annotations

import argparse

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.engine.errors import Interrupted
from osc_cascade.v1 import output
from osc_cascade.v1.cascade_options import add_plan_file_options
from osc_cascade.v1.common import (
    add_api_timeout_option,
    add_execution_options,
    add_exit_status,
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

#: options that mean nothing without --cascade
_CASCADE_ONLY = (
    'dry_run',
    'yes',
    'column',
    'report_file',
    'no_report',
    'coordination_url',
    'settle',
    'cascade_regions',
    'plan_file',
    'plan_max_age',
)


class DomainDeleteCascade(hooks.CommandHook):
    """Adds ``--cascade`` and its options to ``openstack domain delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group('cascade (osc-cascade)')
        group.add_argument(
            '--cascade',
            action='store_true',
            help='First delete its projects, users, groups (admin)',
        )
        add_execution_options(group, tuning := add_tuning_group(parser))
        add_region_option(group)
        add_plan_file_options(group, tuning)
        group.add_argument(
            '--settle',
            metavar='<duration>',
            type=duration,
            help='After the delete, wait this, then delete what appeared',
        )
        add_api_timeout_option(tuning)
        from osc_cascade.v1.project_drain import add_coordination_option

        add_coordination_option(tuning)
        output.add_format_options(parser)
        add_exit_status(parser)
        return parser

    def get_epilog(self) -> str:
        return (
            'With --cascade, the domain is disabled, its projects drained '
            'and emptied, then its projects, users (and their keypairs), '
            'groups and the domain are deleted; --dry-run shows the plan.'
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not getattr(parsed_args, 'cascade', False):
            refuse_stray_options(parsed_args, _CASCADE_ONLY, '--cascade')
            return parsed_args
        self._check_identity_v3()
        if len(parsed_args.domain) != 1:
            raise exceptions.CommandError(
                '--cascade deletes one domain at a time'
            )
        with engine_errors():
            emptied = self._cascade(parsed_args)
        return hand_to_osc(parsed_args, 'domain', emptied)

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        return return_code

    def _cascade(self, parsed_args: argparse.Namespace) -> list[str]:
        from osc_cascade.engine import planfile
        from osc_cascade.v1.progress import Progress
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import domain as domain_mod
        from osc_cascade.workflows import domain_shown
        from osc_cascade.workflows.cascade import without_projects
        from osc_cascade.workflows.cascade_options import CascadeOptions
        from osc_cascade.workflows.users import without_users

        progress = Progress(
            fmt=parsed_args.progress, rounds='verification round'
        )
        record = RunRecord(parsed_args, 'domain delete --cascade')
        conn = connection(self.cmd.app, parsed_args)
        options = CascadeOptions(
            parallel=parsed_args.parallel,
            timeout=parsed_args.timeout,
            report_file=record.path or None,
            coordination_url=parsed_args.coordination_url,
            settle=parsed_args.settle or 0.0,
            regions=tuple(parsed_args.cascade_regions),
            **(
                {'plan_max_age': parsed_args.plan_max_age}
                if parsed_args.plan_max_age is not None
                else {}
            ),
        )
        workflow = domain_mod.DomainCascade(conn, options, on_event=progress)
        domain = workflow.resolve(parsed_args.domain[0])
        saved = parsed_args.plan_file
        # a saved plan is checked before anything is listed
        shown = (
            domain_shown.load(workflow, saved, domain)
            if saved and not parsed_args.dry_run
            else None
        )
        plan = workflow.plan(domain)
        if shown is not None:  # what it did not show stays
            plan = domain_shown.as_shown(plan, shown)
        whole = plan.whole()
        progress.add_notes(plan.notes)
        if parsed_args.dry_run:
            if saved:
                whole.made_for = workflow.project_cascade._here()
                planfile.save(saved, whole)
            columns, rows = output.plan_table(
                whole, full=parsed_args.formatter in output.MACHINE_FORMATS
            )
            output.emit(parsed_args, columns, rows, self.cmd.app.stdout)
            progress.flush_notes()
            if plan.refused:
                raise exceptions.CommandError(_refusal(plan.refused, True))
            return []
        output.chosen_columns(parsed_args, SUMMARY_COLUMNS)
        confirm(
            f'The cascade will delete domain {domain.label()} and, in it:\n'
            + counts_text(whole)
            + '\nContinue?',
            parsed_args.yes,
        )
        progress.add_total(
            len(without_projects(plan.projects).steps)
            + len(without_users(plan.users).steps)
        )
        options.report_context = record.context(
            conn, workflow.project_cascade.regions.names
        )
        try:
            with stoppable(workflow.interrupt):
                outcome = workflow.execute(plan)
        except Interrupted as exc:
            progress.close()
            progress.flush_notes()
            exit_interrupted(exc)
        finally:
            progress.close()
        self._emit_summary(outcome, parsed_args)
        progress.add_notes(workflow.notes)
        progress.flush_notes()
        if outcome.refused:
            raise exceptions.CommandError(_refusal(outcome.refused, False))
        return [domain.id]

    def _check_identity_v3(self) -> None:
        from openstackclient.identity.v3 import domain as v3_domain

        identity_v3_only(self.cmd, v3_domain.DeleteDomain)

    def _emit_summary(self, outcome, parsed_args: argparse.Namespace) -> None:
        rest = sorted({r.kind for r in outcome.rest})
        rows = output.summary_rows(
            outcome.runs,
            ('identity.project', len(outcome.projects)),
            ('identity.user', len(outcome.users)),
            *((k, sum(r.kind == k for r in outcome.rest)) for k in rest),
        )
        rows.append(
            (
                'identity.domain',
                '',
                0 if outcome.refused else 1,
                0,
                1 if outcome.refused else 0,
                0,
                0,
            )
        )
        output.emit(parsed_args, SUMMARY_COLUMNS, rows, self.cmd.app.stdout)


def _refusal(refused: dict[str, str], dry_run: bool) -> str:
    """One line: what stays, and so the domain."""
    would = 'would stay' if dry_run else 'stayed'
    return (
        f'The domain was not deleted: {len(refused)} of its projects or '
        f'users {would}: '
        + '; '.join(f'{what}: {why}' for what, why in sorted(refused.items()))
    )
