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

"""``openstack compute service delete --purge-allocations``: a cliff hook on
OSC's own command.

The hook does the whole job in ``before()``: it purges the allocations that
would orphan the service's resource providers, deletes the providers, and
deletes the service itself, then hands OSC's ``DeleteService.take_action``
an empty list of services. The service must be deleted by the plan, not by
OSC: in the middle of it (after the nested providers, whose failed delete
skips it, and before the check that its nodes' providers are gone), once it
has checked that nothing new holds them, and by UUID at microversion 2.53
or later whatever ``--os-compute-api-version`` says.
"""

from __future__ import annotations

import argparse

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.v1 import output
from osc_cascade.v1.common import (
    add_execution_options,
    confirm,
    counts_text,
    refuse_stray_options,
)

#: options that mean nothing without --purge-allocations
_PURGE_ONLY = ('dry_run', 'yes', 'force', 'column')


class ComputeServiceDeletePurge(hooks.CommandHook):
    """Adds ``--purge-allocations`` and its options to ``openstack compute
    service delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group(
            'purge allocations (osc-cascade)',
            'Remove what holds the service\'s resource providers in '
            'Placement, delete them, then the service.',
        )
        group.add_argument(
            '--purge-allocations',
            action='store_true',
            help='Remove the allocations left on the resource providers of '
            'the service\'s compute nodes (of evacuated or deleted '
            'instances, of ended migrations), delete the providers, '
            'then the service. Refuses while an instance is on the '
            'host. Takes the service UUID or its host. Needs the admin '
            'role.',
        )
        group.add_argument(
            '--force',
            action='store_true',
            help='With --purge-allocations, also remove the allocations of '
            'unconfirmed or unfinished migrations and of consumers '
            'nova does not know (they refuse the purge by default)',
        )
        add_execution_options(group)
        output.add_format_options(parser)
        return parser

    def get_epilog(self) -> str:
        return (
            'With --purge-allocations, the service is deleted only once '
            'none of its resource providers is left: nova alone deletes '
            'the service even when Placement refuses to delete a '
            'provider that still has allocations, which orphans it.'
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not parsed_args.purge_allocations:
            refuse_stray_options(
                parsed_args, _PURGE_ONLY, '--purge-allocations'
            )
            return parsed_args
        # imported here: `openstack help` builds every hook, keep it cheap
        from osc_cascade import purge
        from osc_cascade.v1.progress import Progress

        progress = Progress()
        service_purge = purge.ServicePurge(
            self.cmd.app.client_manager.sdk_connection,
            purge.PurgeOptions(
                force=parsed_args.force,
                parallel=parsed_args.parallel,
                timeout=parsed_args.timeout,
            ),
            on_event=progress,
        )
        services = service_purge.resolve(parsed_args.service)
        plan = service_purge.plan(services)
        for note in plan.notes:
            progress.note(f'note: {note}')

        if parsed_args.dry_run:
            output.emit(parsed_args, purge.PLAN_COLUMNS, purge.plan_rows(plan))
            if plan.kept():
                raise exceptions.CommandError(purge.blocked_message(plan))
            # OSC's take_action deletes what it is handed: nothing
            parsed_args.service = []
            return parsed_args

        if plan.kept():
            output.emit(
                parsed_args, purge.BLOCKER_COLUMNS, purge.blocker_rows(plan)
            )
            raise exceptions.CommandError(purge.blocked_message(plan))
        output.chosen_columns(parsed_args, purge.SUMMARY_COLUMNS)
        names = ', '.join(f'{s.host} ({s.id})' for s in services)
        confirm(
            f'The purge will, for compute service(s) {names}:\n'
            + counts_text(plan)
            + '\nContinue?',
            parsed_args.yes,
        )
        progress.add_total(len(plan.steps))
        try:
            result = service_purge.execute(plan)
        finally:
            progress.close()
        output.emit(parsed_args, purge.SUMMARY_COLUMNS, result.summary())
        if not result.ok:
            raise exceptions.CommandError(purge.failure_message(result))
        # the plan deleted the services
        parsed_args.service = []
        return parsed_args

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        return return_code
