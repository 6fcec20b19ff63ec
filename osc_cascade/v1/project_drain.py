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
    ExitStatusHelp,
    add_api_timeout_option,
    add_rate_limit_option,
    age,
    connection,
    engine_errors,
    exit_interrupted,
    positive_float,
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
DUE = 'due: deleted with --yes'
DELETED = 'deleted'
#: the outcomes of a project's turn in the sweep: a skip of a project
#: protected when listed, or held by another actor, is no failure; one
#: that is no longer as listed (changed meanwhile) exits 1, as a failure
DONE, SKIPPED, CHANGED, FAILED = 'done', 'skipped', 'changed', 'failed'


def add_coordination_option(parser: Any) -> None:
    parser.add_argument(
        '--coordination-url',
        metavar='<url>',
        help='Where the per-project locks live, so that two runs (and the '
        'reaper, configured alike) never work on one project at once: a '
        'tooz URL (mysql://, etcd3+http://, redis://, file://<dir>; '
        'default: $OSC_CASCADE_COORDINATION_URL, else the cloud\'s '
        'osc_cascade_coordination_url in clouds.yaml, else '
        'file://~/.cache/osc-cascade/locks: this host only)',
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
    add_coordination_option(parser)
    add_api_timeout_option(parser)


def _workflow(app: Any, parsed_args: argparse.Namespace, verb: str, **kw):
    from osc_cascade.workflows import cascade

    return cascade.ProjectCascade(
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

    The cascade's stage 1 alone, recorded on each project so that
    ``project restore`` can reverse it; nothing is deleted.
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_projects(parser, 'drain')
        return parser

    def get_epilog(self) -> str:
        return (
            'The drain is recorded on the project (extra properties '
            "cascade_drain and cascade_state, shown by 'openstack project "
            "show'). 'openstack project restore' reverses it; 'openstack "
            "project sweep --older-than <age> --yes' deletes, with "
            "everything they own, the projects drained longer ago."
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

    Reverse exactly what each drain record says (the quotas back to the
    project's own values, the role assignments a drain without admin
    removed put back, the project enabled if it was). What came back, and
    read back so, leaves the record; what did not stays in it, and a
    second restore tries it again.
    """

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

    With everything they own, one at a time (for cron); without --yes,
    only list them.
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--older-than',
            metavar='<age>',
            type=age,
            required=True,
            help='Sweep the projects drained longer ago than <age> (90s, '
            "30m, 24h, 30d; by Keystone's clock)",
        )
        parser.add_argument(
            '--yes',
            action='store_true',
            help='Run the cascade of each, one at a time (without it, the '
            'projects are only listed)',
        )
        parser.add_argument(
            '--parallel',
            metavar='<n>',
            type=positive_int,
            default=10,
            help='Make at most <n> API calls at once (default: 10)',
        )
        add_rate_limit_option(parser)
        parser.add_argument(
            '--timeout',
            metavar='<seconds>',
            type=positive_float,
            default=600,
            help='Give up on one resource after <seconds> (default: 600)',
        )
        parser.add_argument(
            '--settle',
            metavar='<age>',
            type=age,
            help='After each project is deleted, wait <age>, then delete '
            "what appeared with its ID (as 'project delete --cascade "
            "--settle')",
        )
        parser.add_argument(
            '--no-report',
            action='store_true',
            help="Write no record of each project's cascade (by default "
            'each writes one, as project delete --cascade does, in '
            '$XDG_STATE_HOME/osc-cascade/, else ~/.local/state/osc-cascade/)',
        )
        add_coordination_option(parser)
        add_api_timeout_option(parser)
        return parser

    def get_epilog(self) -> str:
        return (
            'A protected (immutable) project, or one that another run '
            'holds, is skipped with a line. At its turn, under its lock, '
            'each project is read again: one enabled again, protected, '
            'restored or drained anew since it was listed is left as it '
            'is with a line, and the exit code is 1; so is it for one '
            'whose cascade fails (it stays drained).'
        )

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.workflows import projects, sweep

        with engine_errors():
            lister = _workflow(self.app, parsed_args, 'sweep')
            due, notes = sweep.due(lister, parsed_args.older_than)
        for note in notes:
            LOG.warning('note: %s', note)
        rows, outcomes = [], []
        for drained in due:
            if not parsed_args.yes:
                result = DUE
                if projects.is_protected(drained.project):
                    result = 'would be skipped: ' + projects.protected_message(
                        drained.label, drained.id
                    )
            else:
                result, outcome = self._complete(parsed_args, drained, rows)
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
        self, parsed_args: argparse.Namespace, drained: Any, rows: list
    ) -> tuple[str, str]:
        """The cascade of one project: its result, and its outcome: DONE,
        SKIPPED (protected when listed, or another actor holds it),
        CHANGED (no longer as listed) or FAILED."""
        from osc_cascade.engine.errors import CascadeError
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import actor, projects, sweep

        record = RunRecord(parsed_args, 'project sweep')
        workflow = _workflow(
            self.app,
            parsed_args,
            'sweep',
            parallel=parsed_args.parallel,
            timeout=parsed_args.timeout,
            settle=parsed_args.settle or 0.0,
            report_file=record.path or None,
        )
        if projects.is_protected(drained.project):
            return 'skipped: ' + projects.protected_message(
                drained.label, drained.id
            ), SKIPPED
        if record.path:
            workflow.options.report_context = record.context(
                workflow.conn, workflow.regions.names
            )
        try:
            with stoppable(workflow.interrupt):
                notes = sweep.complete(workflow, drained)
        except Interrupted as exc:
            rows.append(_row(drained, f'interrupted: {exc}'))
            self.produce_output(parsed_args, SWEEP_COLUMNS, rows)
            exit_interrupted(exc)
        except actor.Busy as exc:
            return f'skipped: {one_line(exc)}', SKIPPED
        except (sweep.Changed, projects.Protected) as exc:
            # protected since it was listed unprotected
            return f'skipped: {one_line(exc)}', CHANGED
        except CascadeError as exc:
            return f'failed: {one_line(exc)}', FAILED
        finally:
            record.announce(
                workflow.unwritten,
                lambda line: self.app.stderr.write(
                    f'project {drained.label}: {line}\n'
                ),
            )
        for note in notes:
            LOG.warning('note: project %s: %s', drained.label, note)
        return DELETED, DONE


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
