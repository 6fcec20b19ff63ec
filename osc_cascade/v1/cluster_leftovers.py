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

"""``openstack cluster leftovers delete``: delete what a Kubernetes
cluster's controllers left in its project.

A sibling of ``cluster force-delete`` (which works on a cluster's record
in Magnum, Sahara or Heat) for the clusters that have no such record, or
whose record is gone: a self-managed cluster with the OpenStack cloud
controller manager and the CSI drivers, a Cluster API cluster, a Magnum
cluster on a Cluster API driver. The work is in
``osc_cascade.workflows.k8s``; this parses, confirms and renders.
"""

from __future__ import annotations

import argparse
from typing import Any

from osc_lib import exceptions
from osc_lib.command import command

from osc_cascade.engine.errors import Interrupted
from osc_cascade.engine.executor import DONE, KEPT
from osc_cascade.v1.common import (
    ExitStatusHelp,
    add_api_timeout_option,
    add_execution_options,
    add_tuning_group,
    confirm,
    connection,
    engine_errors,
    exit_interrupted,
    stoppable,
)
from osc_cascade.v1.constants import SUMMARY_COLUMNS


class DeleteClusterLeftovers(ExitStatusHelp, command.Lister):
    """Delete what a Kubernetes cluster's controllers left in its project"""

    def get_epilog(self) -> str:
        return (
            "Finds the cluster's load balancers (with their listeners, "
            'pools and members), floating IPs, security groups, volumes, '
            'snapshots, backups and shares by the names, descriptions, '
            'tags and metadata the cloud controller manager and the CSI '
            "drivers give them, and with --capi-namespace Cluster API's "
            'networks, subnets, routers, ports, servers and security '
            'groups; only in --project, only where the convention matches '
            'whole. What something outside the cluster uses is kept, with '
            'the reason. A cluster whose servers are ACTIVE is refused '
            'without --force.'
        )

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        from osc_cascade.v1 import output

        parser = super().get_parser(prog_name)
        parser.add_argument(
            'cluster',
            metavar='<cluster>',
            help='The cluster, as its controllers name it',
        )
        parser.add_argument(
            '--project',
            metavar='<project>',
            required=True,
            help="The cluster's project (name or ID); nothing else is "
            'looked at',
        )
        parser.add_argument(
            '--cloud-provider-name',
            metavar='<name>',
            help='The cloud controller manager\'s --cluster-name and the CSI '
            "drivers' --cluster (default: <cluster>)",
        )
        parser.add_argument(
            '--capi-namespace',
            metavar='<namespace>',
            help='Also what Cluster API made for the cluster <cluster> in '
            'this namespace',
        )
        parser.add_argument(
            '--no-cloud-provider',
            action='store_true',
            help='Only what Cluster API made (with --capi-namespace)',
        )
        parser.add_argument(
            '--force',
            action='store_true',
            help='Even if servers of the cluster are ACTIVE',
        )
        tuning = add_tuning_group(parser)
        add_execution_options(parser, tuning)
        add_api_timeout_option(tuning)
        output.add_dot_format(parser)
        return parser

    def run(self, parsed_args: argparse.Namespace) -> int:
        from osc_cascade.v1 import output
        from osc_cascade.v1.progress import Progress

        self.progress = Progress(fmt=parsed_args.progress)
        code = output.run_or_dot(
            parsed_args,
            self.app.stdout,
            lambda: super(DeleteClusterLeftovers, self).run(parsed_args),
            lambda: self._plan(parsed_args)[2],
        )
        self.progress.flush_notes()
        return code

    def _plan(self, parsed_args: argparse.Namespace) -> tuple[Any, Any, Any]:
        from osc_cascade import kinds as kinds_mod
        from osc_cascade.engine.retry import Clock, RetryPolicy
        from osc_cascade.workflows.k8s import conventions, footprint
        from osc_cascade.workflows.projects import Projects

        if parsed_args.no_cloud_provider and not parsed_args.capi_namespace:
            raise exceptions.CommandError(
                '--no-cloud-provider leaves nothing to look for without '
                '--capi-namespace'
            )
        ident = conventions.Identity.of(
            occm=''
            if parsed_args.no_cloud_provider
            else (parsed_args.cloud_provider_name or parsed_args.cluster),
            capi_namespace=parsed_args.capi_namespace or '',
            capi_name=parsed_args.cluster,
        )
        conn = connection(self.app, parsed_args)
        retry, clock = RetryPolicy(), Clock()
        with engine_errors():
            project = Projects(conn, retry=retry, clock=clock).resolve(
                parsed_args.project
            )
            fp = footprint.find(
                conn, ident, project.id, retry=retry, clock=clock
            )
            self.kinds = kinds_mod.build()
            plan = footprint.plan(fp, self.kinds)
        self.progress.add_notes(fp.notes)
        if fp.active and not parsed_args.force:
            names = ', '.join(r.name or r.id for r in fp.active[:3])
            raise exceptions.CommandError(
                f'{ident.label()} may still be running: '
                f'{len(fp.active)} of its servers are ACTIVE ({names}); '
                f'pass --force if you know it is dead'
            )
        return conn, fp, plan

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        from osc_cascade.engine.retry import Clock, RetryPolicy
        from osc_cascade.v1 import output
        from osc_cascade.v1.record import RunRecord
        from osc_cascade.workflows.stopping import Stop, run_plan

        record = RunRecord(parsed_args, 'cluster leftovers delete')
        conn, fp, plan = self._plan(parsed_args)
        deletes = [s for s in plan.steps.values() if s.is_delete]
        if parsed_args.dry_run or not deletes:
            if not deletes:
                self.progress.note(
                    f'Nothing of {fp.label()} to delete in '
                    f'project {fp.project_id}.'
                )
            return output.plan_table(
                plan, full=parsed_args.formatter in output.MACHINE_FORMATS
            )
        confirm(
            f'Delete {len(deletes)} resource(s) that '
            f'{fp.label()} left in project {fp.project_id}, in '
            f'dependency order ({len(fp.kept)} kept)?',
            parsed_args.yes,
        )
        stop = Stop()
        self.progress.add_total(len(plan.steps))
        runs: list[Any] = []

        def what_was_done(error: str) -> dict[str, Any]:
            return record.of_plan(
                conn,
                list(filter(None, [conn.config.region_name])),
                plan,
                runs,
                parallel=parsed_args.parallel,
                error=error,
            )

        try:
            with (
                record.recording(what_was_done, self.progress.note),
                stoppable(stop),
            ):
                with engine_errors():
                    result = run_plan(
                        conn,
                        plan,
                        self.kinds,
                        parallel=parsed_args.parallel,
                        timeout=parsed_args.timeout,
                        on_event=self.progress,
                        stop=stop,
                        retry=RetryPolicy(),
                        clock=Clock(),
                    )
                runs.append(result)
                stop.check(
                    f'{len(result.by_outcome(DONE))} step(s) of '
                    f'{len(plan.steps)} done; run the same command again'
                )
        except Interrupted as exc:
            self.progress.close()
            exit_interrupted(exc)
        finally:
            self.progress.close()
        if not result.ok:
            self.produce_output(parsed_args, SUMMARY_COLUMNS, result.summary())
            failed = sum(
                1
                for r in result.results.values()
                if r.outcome not in (DONE, KEPT)
            )
            raise exceptions.CommandError(
                f'{failed} of {len(deletes)} resource(s) could not be deleted'
            )
        return SUMMARY_COLUMNS, result.summary()


# -- a Magnum cluster on a Cluster API driver in `cluster force-delete` ----


def footprint_rows(preview: Any) -> list[tuple[str, ...]]:
    """The rows of FORCE_DELETE_PLAN_COLUMNS of what the controllers of a
    Cluster API cluster made: one per step of its plan, in order."""
    c = preview.cluster
    rows = []
    for step_id in preview.plan.order():
        step = preview.plan.steps[step_id]
        ref = step.target
        if step.is_delete:
            action = 'delete'
        elif step.action == 'keep':
            action = f'keep: {step.params.get("reason", "")}'
        else:
            action = step.describe()
        rows.append(
            (
                c.name,
                c.service,
                c.status,
                '',
                ref.kind,
                ref.id,
                ref.project_id or c.project_id,
                action,
            )
        )
    return rows or [
        (c.name, c.service, c.status, '', '', '', c.project_id, 'nothing')
    ]


def footprint_summary(preview: Any) -> str:
    deletes = sum(1 for s in preview.plan.steps.values() if s.is_delete)
    return (
        f'no stack (Cluster API driver, {preview.cluster.stack_id}): '
        f'{deletes} resource(s) its controllers made to delete, '
        f'{len(preview.footprint.kept)} kept'
    )
