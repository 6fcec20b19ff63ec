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

"""One scenario played: the world built, the other actors and faults set,
the commands run through the real ``openstack`` shell in-process (a kill
followed by a re-run where the scenario says so), then the invariants
checked (``invariants``)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import io
import json
import os
import sys
import tempfile
from unittest import mock

from tests.sim import holes, invariants, model
from tests.sim.serial import serially
from tests.sim.world import ScopedSimCloud, SimCloud
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud

#: the commands a scenario can run, as a person would type them
COMMANDS = (
    'cascade',
    'cascade-plan-file',
    'orphan-purge',
    'drain-restore',
    'cascade-then-purge',
    'cascade-without-admin',
    'sweep',
    'drain-restore-again',
    'force-delete',
    'cascade-without-admin-restore',
)
#: the commands run without admin, as the manager of T's domain
SCOPED = ('cascade-without-admin', 'cascade-without-admin-restore')


@dataclasses.dataclass(frozen=True)
class Scenario:
    """What a seed chose: replayable from its JSON."""

    command: str
    features: tuple[str, ...] = ()
    actors: tuple[str, ...] = ()
    #: (method, regex on the path, status): each answered once
    faults: tuple[tuple[str, str, int], ...] = ()
    #: the tool dies from its k-th change on, then runs again (0: never)
    kill_at: int = 0
    recursive: bool = False

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Scenario:
        data = json.loads(text)
        data['faults'] = tuple(tuple(f) for f in data.get('faults', ()))
        for key in ('features', 'actors'):
            data[key] = tuple(data.get(key, ()))
        return cls(**data)


@dataclasses.dataclass
class Run:
    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def isolated():
    """What the unit tests' conftest gives every test: no OS_* of the
    developer, locks and records in a directory of the run's own, and a
    clock that never sleeps."""
    clock = FakeClock()
    with tempfile.TemporaryDirectory(prefix='osc-cascade-sim-') as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
        env.pop('OSC_CASCADE_COORDINATION_URL', None)
        env.update(
            OS_CLIENT_CONFIG_FILE=os.path.join(home, 'none.yaml'),
            XDG_CACHE_HOME=os.path.join(home, 'cache'),
            XDG_STATE_HOME=os.path.join(home, 'state'),
        )
        from osc_cascade.engine.retry import Clock

        with (
            # where a force delete writes its manifest
            contextlib.chdir(home),
            mock.patch.dict(os.environ, env, clear=True),
            mock.patch.object(Clock, 'now', lambda self: clock.now()),
            mock.patch.object(Clock, 'sleep', lambda self, s: clock.sleep(s)),
            mock.patch.object(
                Clock, 'pause', lambda self, s, stop: clock.pause(s, stop)
            ),
        ):
            yield home


def shell(*argv: str) -> Run:
    """The real ``openstack`` shell, in-process, as a user runs it."""
    from openstackclient import shell as osc_shell

    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.object(sys, 'stdin', io.StringIO('')),
        mock.patch.object(sys, 'stdout', out),
        mock.patch.object(sys, 'stderr', err),
    ):
        app = osc_shell.OpenStackShell()
        app.stdout, app.stderr = out, err
        code = app.run([*FakeCloud.cli_auth_args(), *argv])
    return Run(tuple(argv), code, out.getvalue(), err.getvalue())


def _cascade_argv(scenario, world, *extra):
    argv = ['project', 'delete', '--cascade', *extra]
    if scenario.recursive:
        argv.append('--recursive')
    return [*argv, world.t]


def _commands(scenario, world, home):
    """The command lines of the scenario, the re-run after a kill
    included: a list of argv; the first run is the one the kill hits."""
    more = _more_commands(scenario, world)
    if more:
        return more
    if scenario.command == 'cascade':
        return [_cascade_argv(scenario, world, '--yes')]
    if scenario.command == 'cascade-plan-file':
        plan = os.path.join(home, 'plan.json')
        return [
            _cascade_argv(
                scenario,
                world,
                '--dry-run',
                '--plan-file',
                plan,
                '-f',
                'json',
            ),
            _cascade_argv(scenario, world, '--yes', '--plan-file', plan),
        ]
    if scenario.command == 'orphan-purge':
        return [
            [
                'orphan',
                'purge',
                '--project',
                world.t,
                '--project',
                world.child,
                '--yes',
            ]
        ]
    if scenario.command == 'drain-restore':
        # T has a child: without --recursive the drain refuses, and
        # invariant 4 (checked on exit 0) would never be
        return [
            ['project', 'drain', '--recursive', world.t],
            ['project', 'restore', '--recursive', world.t],
        ]
    raise ValueError(f'no command {scenario.command!r}')


LEFTOVERS = ('--delete-leftovers', '--yes')
#: OSC's options of a login as the manager of T's domain (the later
#: options win over the admin's; an empty project scope is none)
MANAGER = (
    *('--os-username', 'managed-manager', '--os-user-domain-id', 'default'),
    *('--os-project-name', '', '--os-project-domain-id', ''),
    *('--os-domain-id', 'default'),
)


def _more_commands(scenario, world):
    """The commands of #29's other paths: a cascade then the operator's
    purge after the freeze's window, a cascade without admin, a drain
    then the sweep, a drain then a restore run twice, a force delete, a
    cascade without admin that fails after its drain then a restore run
    twice (by the manager; by the admin, with --recursive, where the
    scenario recurses: a cascade without admin takes no --recursive)."""
    t, child = world.t, world.child
    purge = ['orphan', 'purge', '--project', t, '--project', child, '--yes']
    drain = ['project', 'drain', '--recursive', t]
    restore = ['project', 'restore', '--recursive', t]
    scoped_restore = (
        restore if scenario.recursive else [*MANAGER, 'project', 'restore', t]
    )
    return {
        'cascade-then-purge': [
            ['project', 'delete', '--cascade', '--yes', '--recursive', t],
            purge,
        ],
        'cascade-without-admin': [
            [
                *MANAGER,
                *_cascade_argv(scenario, world, '--yes', '--without-admin'),
            ]
        ],
        'sweep': [
            drain,
            ['project', 'sweep', '--older-than', '1s', '--execute', '--yes'],
        ],
        'drain-restore-again': [drain, restore, restore],
        'force-delete': [
            [*('cluster', 'force-delete', '--stack', 't-app'), *LEFTOVERS]
        ],
        'cascade-without-admin-restore': [
            [
                *MANAGER,
                *('project', 'delete', '--cascade', '--yes'),
                *('--without-admin', t),
            ],
            scoped_restore,
            scoped_restore,
        ],
    }.get(scenario.command)


#: the verbs ``world.running`` names (the command's last word before
#: its options)
VERBS = ('delete', 'purge', 'drain', 'restore', 'sweep', 'force-delete')


def play(scenario: Scenario) -> list[str]:
    """Play ``scenario``; the invariants it broke (none: it held)."""
    return played(scenario)[0]


def played(scenario: Scenario) -> tuple[list[str], model.World, list[Run]]:
    """Play ``scenario``: the invariants it broke, the world after it and
    the runs (for a test that asserts what a scenario went through)."""
    cloud_class = ScopedSimCloud if scenario.command in SCOPED else SimCloud
    with isolated() as home, serially(), cloud_class() as cloud:
        region_two = cloud.add_region(
            'RegionTwo', ['network'], shared=['image']
        )
        world = model.build(cloud, region_two)
        for name in scenario.features:
            model.FEATURES[name](world)
        if scenario.command in SCOPED:
            # a domain's manager, on T alone (the path without admin takes
            # one project at a time): C is T's sibling here
            manager = cloud.add_user('managed-manager', 'default')
            cloud.assign(manager, 'manager', domain='default')
            cloud.get('projects', world.child)['parent_id'] = 'default'
        if scenario.command == 'cascade-without-admin-restore':
            # T's members, and a server of T an admin locked: the run
            # drains (takes the members' roles) then fails on it
            holes.fails_after_scoped_drain(world)
        if scenario.command == 'force-delete':
            # T's stack is stuck: its delete hangs, as the command is for
            holes.t_stack(world)['on_delete'] = 'hang'
        before = invariants.Before.take(world)
        if scenario.command == 'orphan-purge':
            # Keystone alone deletes the projects (the child first, as it
            # must): what they owned is orphaned
            for pid in (world.child, world.t):
                cloud.act(
                    'operator', lambda c, p=pid: c._remove('projects', p)
                )
        for name in scenario.actors:
            cloud.hooks.extend(model.ACTORS[name](world))
        cloud.faults.extend(scenario.faults)
        commands = _commands(scenario, world, home)
        runs = []
        for n, argv in enumerate(commands):
            last = n == len(commands) - 1
            if last and scenario.kill_at:
                cloud.kill_at = cloud.tool_changes + scenario.kill_at
            if last and scenario.command == 'cascade-then-purge':
                # the operator's purge comes a day later: the cached
                # tokens have expired, the freeze's window is over
                world.window_open = False
                for region in cloud.regions():
                    region.now += datetime.timedelta(days=1)
            world.running = next(v for v in argv if v in VERBS)
            runs.append(shell(*argv))
            if last and cloud.killed:
                cloud.revive()
                runs.append(shell(*argv))
        return invariants.check(scenario, world, before, runs), world, runs
