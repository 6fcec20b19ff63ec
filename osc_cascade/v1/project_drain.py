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

"""A soft delete: ``openstack project drain`` (stage 1 of the cascade
only: the project stays, disabled, its quotas frozen, the drain recorded on
it), ``openstack project restore`` (the record reversed) and ``openstack
project sweep`` (for cron: the full cascade of every project drained
longer ago than ``--older-than``, dry unless ``--yes``)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from osc_lib import exceptions
from osc_lib.command import command

from osc_cascade.engine.errors import Interrupted, one_line
from osc_cascade.v1.common import (
    READ_EXIT_STATUSES,
    ExitStatusHelp,
    add_api_timeout_option,
    add_rate_limit_option,
    add_tuning_group,
    confirm,
    connection,
    duration,
    engine_errors,
    exit_interrupted,
    positive_duration,
    positive_int,
    stoppable,
)

LOG = logging.getLogger(__name__)

DRAIN_COLUMNS = ('ID', 'Name', 'State', 'Drained At', 'Drained By')
RESTORE_COLUMNS = ('ID', 'Name', 'Enabled', 'State')
SWEEP_COLUMNS = (
    'ID',
    'Name',
    'Drained At',
    'Drained By',
    'State',
    'Result',
)

#: the sweep's results
DUE = 'due: deleted with --execute'
DELETED = 'deleted'
#: the outcomes of a project's turn in the sweep: a skip of a project
#: protected when listed, or held by another actor, is no failure; one
#: that is no longer as listed (changed meanwhile) exits 1, as a failure
DONE, SKIPPED, CHANGED, FAILED = 'done', 'skipped', 'changed', 'failed'


def add_coordination_option(parser: Any) -> None:
    parser.add_argument(
        '--coordination-url',
        metavar='<url>',
        help='Where runs lock projects (tooz URL; default: local)',
    )


def _add_projects(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        'projects',
        metavar='<project>',
        nargs='+',
        help=f'Project(s) to {what} (name or ID)',
    )
    parser.add_argument(
        '--domain',
        metavar='<domain>',
        help='Domain owning the projects (name or ID)',
    )
    parser.add_argument(
        '--recursive',
        action='store_true',
        help=f'Also {what} the child projects',
    )
    tuning = add_tuning_group(parser)
    add_coordination_option(tuning)
    add_api_timeout_option(tuning)


def _workflow(
    app: Any, parsed_args: argparse.Namespace, verb: str, *, many=False, **kw
):
    from osc_cascade.workflows import cascade
    from osc_cascade.workflows import many as many_mod

    cls = many_mod.ManyProjects if many else cascade.ProjectCascade
    return cls(
        connection(app, parsed_args),
        cascade.CascadeOptions(
            recursive=getattr(parsed_args, 'recursive', False),
            coordination_url=parsed_args.coordination_url,
            **kw,
        ),
        verb=verb,
    )


def _user(by: Any) -> str:
    return str((by or {}).get('user_id') or '')


class DrainProject(ExitStatusHelp, command.Lister):
    """Soft-delete projects: disable them and freeze their quotas

    Nothing is deleted; 'openstack project restore' undoes it.
    """

    exit_statuses = READ_EXIT_STATUSES

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_projects(parser, 'drain')
        return parser

    def get_epilog(self) -> str:
        return (
            "'openstack project show' shows the drain (cascade_state). "
            "'openstack project sweep --older-than 30d --execute' deletes "
            'the projects drained longer ago, with all they own.'
        )

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.workflows import drain_record, soft_delete

        with engine_errors():
            workflow = _workflow(self.app, parsed_args, 'drain')
            targets = workflow.resolve(
                parsed_args.projects, parsed_args.domain
            )
            records = soft_delete.drain(workflow, targets)
        for note in workflow.notes:
            LOG.warning('note: %s', note)
        return DRAIN_COLUMNS, [
            (
                t.id,
                t.name,
                r.get('stage', ''),
                r.get(drain_record.DRAINED_AT, ''),
                _user(r.get(drain_record.DRAINED_BY)),
            )
            for t, r in zip(targets, records, strict=True)
        ]


class RestoreProject(ExitStatusHelp, command.Lister):
    """Restore drained projects as their drain records say

    Puts back what the drain changed: the quotas, the role assignments,
    the project enabled if it was. What fails is kept in the record: run
    it again to retry.
    """

    exit_statuses = READ_EXIT_STATUSES

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_projects(parser, 'restore')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.workflows import soft_delete

        with engine_errors():
            workflow = _workflow(self.app, parsed_args, 'restore')
            projects = [
                workflow.projects.resolve(p, parsed_args.domain)
                for p in parsed_args.projects
            ]
            targets = soft_delete.restore_targets(
                workflow, projects, recursive=parsed_args.recursive
            )
            missed = soft_delete.restore(workflow, targets)
            rows = []
            for t in targets:
                body = workflow.projects.shown(t.id)
                rows.append(
                    (
                        t.id,
                        t.name,
                        body.get('enabled'),
                        body.get('cascade_state') or '',
                    )
                )
        for note in workflow.notes:
            LOG.warning('note: %s', note)
        if missed:
            self.produce_output(parsed_args, RESTORE_COLUMNS, rows)
            for line in missed:
                LOG.error('%s', line)
            raise exceptions.CommandError(
                f'{len(missed)} of what the drain took did not come back '
                '(each stays in the drain record: restore again to retry '
                f'it); first: {missed[0]}'
            )
        return RESTORE_COLUMNS, rows


class SweepProject(ExitStatusHelp, command.Lister):
    """Delete the projects drained longer ago than --older-than

    With everything they own, all of them in one plan, at most
    --parallel calls at once; a project refused stays and the others go
    on (for cron).
    Without --execute, only list them.
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--older-than',
            metavar='<duration>',
            type=duration,
            required=True,
            help='Sweep projects drained longer ago than this (e.g. 30d)',
        )
        parser.add_argument(
            '--execute',
            action='store_true',
            help='Delete them (without it, only list them)',
        )
        parser.add_argument(
            '--yes',
            action='store_true',
            help='Do not prompt for confirmation (with --execute)',
        )
        parser.add_argument(
            '--settle',
            metavar='<duration>',
            type=duration,
            help='Wait this after each delete, then delete what appeared',
        )
        tuning = add_tuning_group(parser)
        tuning.add_argument(
            '--parallel',
            metavar='<n>',
            type=positive_int,
            default=10,
            help='Make at most <n> API calls at once (default: 10)',
        )
        add_rate_limit_option(tuning)
        tuning.add_argument(
            '--timeout',
            metavar='<duration>',
            type=positive_duration,
            default=600,
            help='Give up on one resource after this (default: 10m)',
        )
        tuning.add_argument(
            '--no-report',
            action='store_true',
            help='Write no record of each project deleted',
        )
        add_coordination_option(tuning)
        add_api_timeout_option(tuning)
        return parser

    def get_epilog(self) -> str:
        return (
            'A protected project, or one another run holds, is skipped. '
            'A project changed since it was listed (enabled, restored, '
            'protected) is left as it is, and the sweep exits 1; so does '
            'it when a delete fails (that project stays drained).'
        )

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.workflows import projects, sweep

        with engine_errors():
            lister = _workflow(self.app, parsed_args, 'sweep')
            due, notes = sweep.due(lister, parsed_args.older_than)
        for note in notes:
            LOG.warning('note: %s', note)
        if parsed_args.yes and not parsed_args.execute:
            LOG.warning(
                'note: --yes only skips the prompt: without --execute, the '
                'sweep deletes nothing (see the release notes)'
            )
        if parsed_args.execute and due:
            confirm(
                f'The sweep will delete {len(due)} project(s), with '
                'everything they own:\n'
                + '\n'.join(f'  {d.label}' for d in due)
                + '\nContinue?',
                parsed_args.yes,
            )
        rows, outcomes = [], []
        done = self._complete(parsed_args, due) if parsed_args.execute else {}
        for drained in due:
            if not parsed_args.execute:
                result = DUE
                if projects.is_protected(drained.project):
                    result = 'would be skipped: ' + projects.protected_message(
                        drained.label, drained.id
                    )
            else:
                outcome, result = done[drained.id]
                result = result or DELETED
                outcomes.append(outcome)
                self.app.stderr.write(f'project {drained.label}: {result}\n')
            rows.append(_row(drained, result))
        failed, changed = outcomes.count(FAILED), outcomes.count(CHANGED)
        if failed or changed:
            self.produce_output(parsed_args, SWEEP_COLUMNS, rows)
            said = []
            if failed:
                said.append(
                    f'{failed} of {len(due)} drained project(s) could not '
                    'be deleted (they stay drained)'
                )
            if changed:
                said.append(
                    f'{changed} of {len(due)} drained project(s) changed '
                    'since the sweep listed them (left as they are)'
                )
            raise exceptions.CommandError('; '.join(said))
        return SWEEP_COLUMNS, rows

    def _complete(
        self, parsed_args: argparse.Namespace, due: list
    ) -> dict[str, tuple[str, str]]:
        """The cascade of all the due projects, in one plan and one run
        (``workflows.sweep_many``): each one's outcome (DONE, SKIPPED:
        protected when listed or held by another actor, CHANGED: no longer
        as listed, FAILED) and its line, by ID."""
        from osc_cascade.engine.errors import CascadeError
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import sweep_many

        record = RunRecord(parsed_args, 'project sweep')
        workflow = _workflow(
            self.app,
            parsed_args,
            'sweep',
            many=True,
            parallel=parsed_args.parallel,
            timeout=parsed_args.timeout,
            settle=parsed_args.settle or 0.0,
            report_file=record.path or None,
        )
        if record.path:
            workflow.options.report_context = record.context(
                workflow.conn, workflow.regions.names
            )
        try:
            with stoppable(workflow.interrupt):
                results = sweep_many.complete_many(workflow, due)
        except Interrupted as exc:
            rows = [_row(d, f'interrupted: {exc}') for d in due]
            self.produce_output(parsed_args, SWEEP_COLUMNS, rows)
            exit_interrupted(exc)
        except CascadeError as exc:
            return {d.id: (FAILED, f'failed: {one_line(exc)}') for d in due}
        finally:
            record.announce(
                workflow.unwritten,
                lambda line: self.app.stderr.write(f'{line}\n'),
            )
        for note in workflow.notes:
            LOG.warning('note: %s', note)
        return results


def _row(drained: Any, result: str) -> tuple[str, ...]:
    when = drained.drained_at
    return (
        drained.id,
        drained.project.get('name') or '',
        when.strftime('%Y-%m-%dT%H:%M:%SZ') if when else '',
        drained.drained_by,
        drained.stage,
        result,
    )
