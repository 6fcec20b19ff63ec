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

An enabled service is disabled before anything is removed and enabled
again if the purge is refused or stops before deleting it
(``ServicePurge.execute``); a dry run only says so.

The hook runs the purge (``workflows.service_purge``) in ``before()``: it
removes the allocations that would orphan the service's resource providers,
deletes the providers, and deletes the service itself; OSC's
``DeleteService.take_action`` is then handed no service. The service must be
deleted by the plan, not by OSC: in the middle of it (after the nested
providers, whose failed delete skips it, and before the check that its
nodes' providers are gone), once it has checked that nothing new holds them,
and by UUID at microversion 2.53 or later whatever
``--os-compute-api-version`` says.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.engine.errors import Interrupted
from osc_cascade.v1 import output
from osc_cascade.v1.common import (
    add_api_timeout_option,
    add_execution_options,
    add_exit_status,
    add_tuning_group,
    confirm,
    connection,
    counts_text,
    engine_errors,
    exit_interrupted,
    hand_to_osc,
    refuse_stray_options,
    stoppable,
)
from osc_cascade.v1.constants import (
    SERVICE_PURGE_BLOCKER_COLUMNS,
    SERVICE_PURGE_PLAN_COLUMNS,
    SUMMARY_COLUMNS,
)

if TYPE_CHECKING:  # imported at start-up: `openstack help` builds the hook
    from osc_cascade.engine.executor import RunResult
    from osc_cascade.engine.planner import Plan

#: options that mean nothing without --purge-allocations
_PURGE_ONLY = (
    'dry_run',
    'yes',
    'force',
    'column',
    'api_timeout',
    'purge_regions',
    'report_file',
    'no_report',
)


class ComputeServiceDeletePurge(hooks.CommandHook):
    """Adds ``--purge-allocations`` and its options to ``openstack compute
    service delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group('purge allocations (osc-cascade)')
        group.add_argument(
            '--purge-allocations',
            action='store_true',
            help='First remove what holds the host in Placement (admin)',
        )
        group.add_argument(
            '--region',
            metavar='<region>',
            dest='purge_regions',
            action='append',
            default=[],
            help='Look for the service in this region only (repeatable)',
        )
        group.add_argument(
            '--force',
            action='store_true',
            help='Also purge allocations of migrations or unknown owners',
        )
        tuning = add_tuning_group(parser)
        add_execution_options(group, tuning)
        add_api_timeout_option(tuning)
        output.add_format_options(parser)
        add_exit_status(parser)
        return parser

    def get_epilog(self) -> str:
        return (
            'With --purge-allocations (service ID or host), the service is '
            'disabled, the allocations left by evacuated or deleted '
            'instances are removed, then its resource providers and the '
            'service are deleted. It refuses while an instance is on the '
            'host, and enables the service again if it stops early.'
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not parsed_args.purge_allocations:
            refuse_stray_options(
                parsed_args, _PURGE_ONLY, '--purge-allocations'
            )
            return parsed_args
        with engine_errors():
            self._purge(parsed_args)
        # the plan deleted the services (or, for a dry run, nothing is to
        # be deleted): OSC's own delete gets none
        return hand_to_osc(parsed_args, 'service', [])

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        return return_code

    def _purge(self, parsed_args: argparse.Namespace) -> None:
        # imported here: `openstack help` builds every hook, keep it cheap
        from osc_cascade.engine.regions import Regions
        from osc_cascade.v1.progress import Progress
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows.service_purge import (
            ServicePurge,
            refuse_blocked,
        )

        record = RunRecord(
            parsed_args, 'compute service delete --purge-allocations'
        )
        stdout = self.cmd.app.stdout
        progress = Progress(self.cmd.app.stderr, fmt=parsed_args.progress)
        conn = connection(self.cmd.app, parsed_args)
        purge = ServicePurge(
            conn,
            force=parsed_args.force,
            parallel=parsed_args.parallel,
            timeout=parsed_args.timeout,
            on_event=progress,
            notify=progress.note,
        )
        purge.locate(
            Regions(conn, parsed_args.purge_regions), parsed_args.service
        )
        services = purge.resolve(parsed_args.service)
        plan = purge.plan(services)
        progress.add_notes(plan.notes)

        if parsed_args.dry_run:
            output.emit(
                parsed_args,
                SERVICE_PURGE_PLAN_COLUMNS,
                plan_rows(plan),
                stdout,
            )
            progress.flush_notes()
            refuse_blocked(plan)
            return
        if plan.kept():
            # the consumers; a provider that is not nova's is one line of
            # the refusal
            rows = blocker_rows(plan)
            if rows:
                output.emit(
                    parsed_args, SERVICE_PURGE_BLOCKER_COLUMNS, rows, stdout
                )
            refuse_blocked(plan)
        output.chosen_columns(parsed_args, SUMMARY_COLUMNS)
        names = ', '.join(f'{s.host} ({s.id})' for s in services)
        enabled = [s.host for s in services if s.status == 'enabled']
        confirm(
            f'The purge will, for compute service(s) {names}:\n'
            + (
                f'  first disable {", ".join(enabled)} (enabled again if '
                f'the purge stops before deleting it)\n'
                if enabled
                else ''
            )
            + counts_text(plan)
            + '\nContinue?',
            parsed_args.yes,
        )
        progress.add_total(len(plan.steps))

        def what_was_done(error: str) -> dict[str, Any]:
            return record.of_plan(
                purge.conn,
                [purge.region],
                plan,
                [purge.result] if purge.result else [],
                parallel=parsed_args.parallel,
                error=error,
            )

        try:
            with (
                record.recording(what_was_done, progress.note),
                stoppable(purge.interrupt),
            ):
                result = purge.execute(plan)
        except Interrupted as exc:
            progress.close()
            if purge.result is not None:
                output.emit(
                    parsed_args,
                    SUMMARY_COLUMNS,
                    purge.result.summary(),
                    stdout,
                )
            exit_interrupted(exc)
        finally:
            progress.close()
        output.emit(parsed_args, SUMMARY_COLUMNS, result.summary(), stdout)
        progress.flush_notes()
        if not result.ok:
            raise exceptions.CommandError(failure_message(result))


# -- what the command shows ----------------------------------------------


def plan_rows(plan: Plan) -> list[tuple[Any, ...]]:
    """Consumers with their class and action, providers in deletion order,
    the services last."""
    from osc_cascade.engine.resource import KEEP
    from osc_cascade.kinds.placement import Allocation, ResourceProvider

    names = _provider_names(plan)
    stages = plan.stages()
    rows = []
    for step_id in plan.order():
        step = plan.steps[step_id]
        ref = step.target
        if ref.kind == Allocation.name:
            action = 'block' if step.action == KEEP else 'remove'
            cls, detail = ref.attrs['class'], ref.attrs['detail']
        elif ref.kind == ResourceProvider.name:
            action = step.action
            parent = ref.attrs.get('parent')
            if parent:
                cls = 'nested provider'
                detail = f'in {names.get(parent, parent)}'
            elif ref.attrs.get('node'):
                cls = 'compute node'
                detail = 'nova deletes it with the service; checked after'
            else:
                cls, detail = 'orphan provider', ''
            if step.action == KEEP:
                detail = step.params['reason']  # not nova's
        else:
            action, cls, detail = step.action, 'nova-compute', ''
        rows.append(
            (stages[step_id], action, ref.kind, ref.id, ref.name, cls, detail)
        )
    return rows


def blocker_rows(plan: Plan) -> list[tuple[Any, ...]]:
    """The consumers that block (the providers kept are in the refusal)."""
    from osc_cascade.kinds.placement import Allocation

    names = _provider_names(plan)
    return sorted(
        (
            s.target.id,
            s.target.attrs['class'],
            [names.get(p, p) for p in s.target.attrs['providers']],
            s.params['reason'],
        )
        for s in plan.kept()
        if s.target.kind == Allocation.name
    )


def _provider_names(plan: Plan) -> dict[str, str]:
    from osc_cascade.kinds.placement import ResourceProvider

    return {
        s.target.id: s.target.name
        for s in plan.steps.values()
        if s.target.kind == ResourceProvider.name
    }


def failure_message(result: RunResult) -> str:
    from osc_cascade.engine.executor import DONE, FAILED, SKIPPED
    from osc_cascade.kinds.placement import ComputeService

    failed = result.by_outcome(FAILED)
    skipped = result.by_outcome(SKIPPED)
    kept = [
        r.step.target
        for r in result.results.values()
        if r.step.target.kind == ComputeService.name and r.outcome != DONE
    ]
    return (
        f'The purge did not finish: {len(failed)} step(s) failed, '
        f'{len(skipped)} skipped. '
        + ' '.join(f'{r.step.describe()}: {r.error}.' for r in failed)
        + (
            ' Not deleted: compute service(s) '
            + ', '.join(f'{s.name} ({s.id})' for s in kept)
            + '.'
            if kept
            else ''
        )
        + ' Run the command again once the cause is fixed: what is '
        'done stays done.'
    )
