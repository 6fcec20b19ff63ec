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

"""The purge's run: ``ServicePurge`` joins the lookup, the plan and the
services' status, and runs the plan with the executor, the services
disabled and their plan read again first; nothing runs while anything
blocks (``refuse_blocked``): a consumer, or a provider that is not nova's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from osc_cascade.engine import resource
from osc_cascade.engine.errors import CascadeError, Interrupted
from osc_cascade.engine.executor import DONE, Executor, RunResult
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.placement import (
    Allocation,
    ComputeService,
    ResourceProvider,
)
from osc_cascade.workflows.service_purge.discovery import PurgePlanner
from osc_cascade.workflows.service_purge.lookup import ServiceLookup
from osc_cascade.workflows.service_purge.status import ServiceStatus
from osc_cascade.workflows.stopping import steps_done


class ServicePurge(ServiceLookup, PurgePlanner, ServiceStatus):
    """Purge compute services: ``locate``, ``resolve``, ``plan``, then
    ``execute``."""

    def execute(self, plan: Plan) -> RunResult:
        """Run the plan; the services that are enabled are disabled for
        the run, and enabled again if it does not delete them."""
        refuse_blocked(plan)
        ids = [
            s.target.id
            for s in plan.steps.values()
            if s.target.kind == ComputeService.name
        ]
        services = self._services_now(ids)
        enabled = [s for s in services if s.status == 'enabled']
        if not enabled:
            result = self._run(plan)
            self._check_stop(result, [])
            return result
        self._disable(enabled)
        try:
            plan = self._read_again(plan, services)
            self.stop.check(
                'nothing was removed. Run the command again to purge.'
            )
            result = self._run(plan)
        except Interrupted as exc:
            restored = self._restore(enabled)
            raise Interrupted(
                ' '.join([str(exc), *restored]), exc.signum
            ) from exc
        except CascadeError as exc:
            restored = self._restore(enabled)
            raise CascadeError(' '.join([str(exc), *restored])) from exc
        except BaseException:
            self._restore(enabled)
            raise
        deleted = {
            sid
            for sid in ids
            if getattr(
                result.results.get(
                    resource.delete(
                        ResourceRef(
                            ComputeService.name, sid, region=self.region
                        )
                    ).id
                ),
                'outcome',
                None,
            )
            == DONE
        }
        restored = self._restore([s for s in enabled if s.id not in deleted])
        self._check_stop(result, restored)
        return result

    def interrupt(self, signum: int) -> None:
        """Stop the purge (from a signal handler): nothing more starts,
        what is in flight finishes, and a service it disabled and did not
        delete is enabled again, as after a refusal."""
        self.stop(signum)

    def _check_stop(self, result: RunResult, restored: list[str]) -> None:
        self.stop.check(
            ' '.join(
                [
                    f'{steps_done(result.results.values())}.',
                    *restored,
                    'Run the command again to finish: what is done stays '
                    'done.',
                ]
            )
        )

    def _run(self, plan: Plan) -> RunResult:
        executor = Executor(
            self.conn,
            self.kinds,
            parallel=self.parallel,
            timeout=self.timeout,
            retry=self.retry,
            clock=self.clock,
            on_event=self.on_event,
        )
        with self.stop.running(executor):
            self.result = executor.run(plan)
        return self.result

    def _read_again(self, shown: Plan, services: Sequence[Any]) -> Plan:
        """The plan read again with the hosts disabled: what landed on
        them before refuses, and so does anything the plan shown did not
        hold."""
        plan = self.plan(services)
        if plan.kept():
            consumers, providers = _kept(plan)
            parts = list(providers)
            if consumers:
                parts.append(
                    f'{len(consumers)} consumer(s) block the purge: '
                    + ', '.join(
                        f'{s.target.id} ({s.target.attrs["class"]})'
                        for s in consumers
                    )
                )
            raise CascadeError(
                'Nothing was removed: with the service(s) disabled, '
                + '; '.join(parts)
                + '.'
            )
        new = sorted(set(plan.steps) - set(shown.steps))
        if new:
            raise CascadeError(
                f'Nothing was removed: the service(s) changed since the '
                f'plan was shown ({", ".join(new)}); run the command again.'
            )
        return plan


def refuse_blocked(plan: Plan) -> None:
    """Nothing runs while a consumer blocks or a provider of the trees is
    not nova's: the plan keeps them."""
    if not plan.kept():
        return
    consumers, providers = _kept(plan)
    parts = list(providers)
    if providers:
        parts.append(
            "nova's delete of the service deletes its nodes' whole "
            'provider trees, so the purge deletes nothing'
        )
    if consumers:
        parts.append(
            f'{len(consumers)} consumer(s) of the service\'s resource '
            f'providers block the purge (listed above)'
        )
    raise CascadeError('Nothing was changed: ' + '; '.join(parts) + '.')


def _kept(plan: Plan) -> tuple[list[Any], list[str]]:
    """The plan's kept consumers, and the lines of its kept providers
    (not nova's)."""
    kept = sorted(plan.kept(), key=lambda s: s.id)
    return (
        [s for s in kept if s.target.kind == Allocation.name],
        [
            s.params['reason']
            for s in kept
            if s.target.kind == ResourceProvider.name
        ],
    )
