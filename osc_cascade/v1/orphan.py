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
from typing import Any

from osc_lib import exceptions
from osc_lib.command import command

from osc_cascade.engine.errors import Interrupted
from osc_cascade.engine.executor import KEPT, STUCK
from osc_cascade.v1.common import (
    EXIT_ORPHANS_FOUND,
    EXIT_OWNERS_UNCONFIRMED,
    ExitStatusHelp,
    add_api_timeout_option,
    add_execution_options,
    add_force_stuck_option,
    add_tuning_group,
    confirm,
    connection,
    engine_errors,
    exit_interrupted,
    stoppable,
)
from osc_cascade.v1.constants import ORPHAN_COLUMNS, SUMMARY_COLUMNS
from osc_cascade.v1.selection import add_selection_options, resolved


def _add_search_options(parser: argparse.ArgumentParser, tuning: Any) -> None:
    parser.add_argument(
        '--service',
        metavar='<service-type>',
        action='append',
        default=[],
        help='Search only this service (network, ...); repeatable',
    )
    parser.add_argument(
        '--kind',
        metavar='<kind>',
        action='append',
        default=[],
        help='Search only this kind (network.port, ...); repeatable',
    )
    parser.add_argument(
        '--project',
        metavar='<project-id>',
        action='append',
        default=[],
        help='Only what this deleted project left (ID); repeatable',
    )
    parser.add_argument(
        '--region',
        metavar='<region>',
        action='append',
        default=[],
        help='Search only this region (default: all); repeatable',
    )
    add_api_timeout_option(tuning)
    tuning.add_argument(
        '--parallel-discovery',
        metavar='<n>',
        type=int,
        default=8,
        help='List at most <n> kinds at once (default: 8)',
    )


def _search(
    app: Any, parsed_args: argparse.Namespace, progress: Any
) -> tuple[Any, Any]:
    """The search workflow and what it found; its notes go to
    ``progress``, which prints them after the result."""
    from osc_cascade import kinds as kinds_mod
    from osc_cascade.engine.regions import Regions
    from osc_cascade.workflows import orphans

    conn = connection(app, parsed_args)
    search = orphans.OrphanSearch(
        conn,
        orphans.select_kinds(
            kinds_mod.build(
                force_stuck=getattr(parsed_args, 'force_stuck', False)
            ),
            parsed_args.service,
            parsed_args.kind,
        ),
        regions=Regions(conn, parsed_args.region),
        parallel=parsed_args.parallel_discovery,
    )
    findings = search.find(parsed_args.project)
    progress.add_notes(findings.notes)
    return search, findings


def _selection(search: Any, parsed_args: argparse.Namespace) -> Any:
    """``orphan purge``'s selection options, as a ``Selection`` (None:
    none given), an age made a time by the cloud's clock."""
    from osc_cascade.workflows import late_release

    def now() -> Any:
        return late_release.cloud_now(search.conn, search.retry, search.clock)

    return resolved(parsed_args, now)


class ListOrphan(ExitStatusHelp, command.Lister):
    """List resources whose owner project no longer exists"""

    exit_statuses = (0, 1, 2, EXIT_ORPHANS_FOUND, EXIT_OWNERS_UNCONFIRMED)

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_search_options(parser, add_tuning_group(parser))
        parser.add_argument(
            '--exit-code',
            action='store_true',
            help='Exit 3 if orphans are found, 4 if unsure (monitoring)',
        )
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.v1.progress import Progress

        self.progress = Progress()
        with engine_errors():
            _workflow, findings = _search(self.app, parsed_args, self.progress)
        self.found = len(findings.orphans)
        # a deleted project's Swift account not listed: incomplete too
        self.unconfirmed = len(findings.unconfirmed) + len(findings.unlisted)
        return ORPHAN_COLUMNS, [o.row() for o in findings.orphans]

    def run(self, parsed_args: argparse.Namespace) -> int:
        # not a failure: the report worked and found something
        code = super().run(parsed_args)
        self.progress.flush_notes()  # after the rows
        if parsed_args.exit_code and code == 0:
            if self.found:
                return EXIT_ORPHANS_FOUND
            if self.unconfirmed:
                return EXIT_OWNERS_UNCONFIRMED
        return code


class PurgeOrphan(ExitStatusHelp, command.Lister):
    """Delete the resources of deleted projects, in dependency order"""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        from osc_cascade.v1 import output

        parser = super().get_parser(prog_name)
        tuning = add_tuning_group(parser)
        _add_search_options(parser, tuning)
        add_execution_options(parser, tuning)
        add_force_stuck_option(parser)
        add_selection_options(parser, 'what goes')
        # the plan as a Graphviz graph, as the cascade's
        output.add_dot_format(parser)
        return parser

    def run(self, parsed_args: argparse.Namespace) -> int:
        from osc_cascade.v1 import output
        from osc_cascade.v1.progress import Progress

        self.progress = Progress(fmt=parsed_args.progress)
        code = output.run_or_dot(
            parsed_args,
            self.app.stdout,
            lambda: super(PurgeOrphan, self).run(parsed_args),
            lambda: self._plan(parsed_args)[2],
        )
        self.progress.flush_notes()  # after the plan or the summary
        return code

    def _plan(self, parsed_args: argparse.Namespace) -> tuple[Any, Any, Any]:
        """The search, what it found, and the plan of the purge."""
        from osc_cascade.workflows import orphans

        with engine_errors():
            search, findings = _search(self.app, parsed_args, self.progress)
            findings = self._hold_back(search, findings)
            self.selection = _selection(search, parsed_args)
            return (
                search,
                findings,
                orphans.purge_plan(findings, search.kinds, self.selection),
            )

    def _hold_back(self, search: Any, findings: Any) -> Any:
        """Without the quota rows of owners whose token cache window
        after their delete has not passed (``late_release.hold_back``)."""
        from osc_cascade.workflows import late_release

        owners = {r.project_id for r in findings.owned_by_gone}
        if not late_release.any_pending(owners):
            return findings
        findings, notes = late_release.hold_back(
            findings,
            search.kinds,
            late_release.cloud_now(search.conn, search.retry, search.clock),
        )
        self.progress.add_notes(notes)
        return findings

    def _release(
        self, search: Any, parsed_args: argparse.Namespace, purged: bool
    ) -> None:
        """With --project: the quotas the drain left frozen released once
        nothing of the project is left (``late_release``)."""
        from osc_cascade.workflows import late_release

        if not parsed_args.project:
            return
        with engine_errors():
            notes, appeared = late_release.release_after_purge(
                search,
                parsed_args.project,
                purged=purged,
                dry_run=parsed_args.dry_run,
            )
        self.progress.add_notes(notes)
        if appeared:
            raise exceptions.CommandError(
                f'{len(appeared)} resource(s) of the deleted project(s) '
                'appeared during the purge (made with a token that was '
                'still valid, or missed by a listing) and are left: '
                + '; '.join(appeared)
                + '. Run the same command again.'
            )

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.v1 import output
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows import orphans

        record = RunRecord(parsed_args, 'orphan purge')
        search, findings, plan = self._plan(parsed_args)
        # each owner ends on its own: one that cannot be proven gone (or
        # whose Swift account could not be listed) is left, not the others
        unlisted = list(orphans.not_purged(findings).values())
        if unlisted and not parsed_args.dry_run and not plan.steps:
            raise exceptions.CommandError(_first(unlisted))
        if parsed_args.dry_run or not plan.steps:
            if not plan.steps and not unlisted:  # nothing left: the
                # frozen quotas go (not while an owner is in doubt)
                self._release(search, parsed_args, purged=False)
            # the cascade's plan table: -f json and yaml have the whole
            # graph (every step id in After) and the owner's ID
            return output.plan_table(
                plan, full=parsed_args.formatter in output.MACHINE_FORMATS
            )
        owners = ', '.join(p['id'] for p in plan.projects)
        confirm(
            f'Delete {len(plan.steps)} orphaned resource(s) of deleted '
            f'project(s) {owners}?',
            parsed_args.yes,
        )
        with engine_errors():
            # time has passed since the search (and the prompt): each owner
            # is proven gone again right before anything is deleted
            findings, notes = search.reconfirm(findings)
            self.progress.add_notes(notes)
            # a selection deletes at most what the plan shown deletes
            shown = {s.target.key for s in plan.steps.values() if s.is_delete}
            plan = orphans.purge_plan(
                findings,
                search.kinds,
                self.selection.bounded(shown) if self.selection else None,
            )
            # of the owners still gone; those no longer proven gone left
            doubt = orphans.not_purged(findings)
            unlisted = list(doubt.values())
        progress = self.progress
        progress.add_total(len(plan.steps))

        def what_was_done(error: str) -> dict[str, Any]:
            return record.of_plan(
                search.conn,
                search.regions.names,
                plan,
                [search.result] if search.result else [],
                parallel=parsed_args.parallel,
                error=error,
            )

        try:
            with (
                record.recording(what_was_done, progress.note),
                stoppable(search.interrupt),
            ):
                result = search.purge(
                    plan,
                    parallel=parsed_args.parallel,
                    timeout=parsed_args.timeout,
                    on_event=progress,
                )
        except Interrupted as exc:
            progress.close()
            self.produce_output(
                parsed_args, SUMMARY_COLUMNS, search.result.summary()
            )
            exit_interrupted(exc)
        finally:
            progress.close()
        self._say_owners(plan, result, doubt)
        if not result.ok:
            self.produce_output(parsed_args, SUMMARY_COLUMNS, result.summary())
            stuck = len(result.by_outcome(STUCK))
            raise exceptions.CommandError(
                f'{len(result.by_outcome("failed")) + stuck} of '
                f'{len(plan.steps)} orphaned resource(s) could not be deleted'
                + (f', {stuck} of them stuck' if stuck else '')
            )
        # the rest is purged; what was kept (a stack whose delete would
        # delete another project's network), or what a project left in a
        # Swift account that could not be listed, is not: not a success
        kept = [
            r
            for r in result.by_outcome(KEPT)
            if r.step.params.get('blocking', True) is not False
            # what a selection keeps, it keeps on purpose
            and not self.selection
        ]
        left = list(unlisted)
        if kept:
            # a keep's description has its reason
            left.insert(
                0,
                f'{len(kept)} orphaned resource(s) kept: '
                f'{kept[0].step.describe()}',
            )
        if left:
            self.produce_output(parsed_args, SUMMARY_COLUMNS, result.summary())
            raise exceptions.CommandError(_first(left))
        try:
            self._release(search, parsed_args, purged=True)
        except exceptions.CommandError:
            self.produce_output(parsed_args, SUMMARY_COLUMNS, result.summary())
            raise
        return SUMMARY_COLUMNS, result.summary()

    def _say_owners(
        self, plan: Any, result: Any, doubt: dict[str, str]
    ) -> None:
        """Each deleted project ends on its own: a note for each the purge
        did not finish (why), and one line of how many it did."""
        from osc_cascade.workflows import orphans

        left = {
            owner: f'project {owner}: not purged: {len(bad)} of {ran} '
            f'step(s) not done; first: {bad[0].step.describe()}: '
            f'{bad[0].outcome}'
            for owner, (ran, bad) in orphans.not_done_by_owner(
                plan, result
            ).items()
            if bad
        }
        for owner, why in doubt.items():
            left.setdefault(owner, why)
        owners = {p['id'] for p in plan.projects} | set(doubt)
        if left:  # now: the command fails after, with the first
            self.progress.note(
                f'note: {len(owners) - len(left)} of {len(owners)} deleted '
                'project(s) purged; the others are left:'
            )
            for owner in sorted(left):
                self.progress.note(f'note: {left[owner]}')


def _first(lines: list[str]) -> str:
    """The first line, and how many more there are."""
    more = len(lines) - 1
    return lines[0] + (f' ({more} more such)' if more else '')
