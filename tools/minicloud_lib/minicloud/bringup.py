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

"""The bring-up: every service module's steps on one Plan, then the
shared resources and the readiness checks."""

import os
import subprocess
import threading
import time

from . import cloud
from .paths import DATA, ETC, HOME, LOGS, VPYTHON
from .services import infra
from .tasks import Plan
from .util import Failure, child_env, say, tail, write


def write_image():
    path = os.path.join(DATA, 'cirros.img')
    if not os.path.exists(path):
        # any small file will do: the fake virt driver never reads it
        write(path, 'minicloud fake image\n' + '\0' * 65536)


def run_watched(what, log, units):
    """Run a setup_cloud phase, relaying its progress lines, and fail at
    once if one of the cloud's processes dies meanwhile."""
    cmd = [
        VPYTHON,
        '-u',
        '-m',
        'minicloud_extras.setup_cloud',
        what,
        ETC + '/minicloud.json',
    ]
    path = os.path.join(LOGS, log)
    with open(path, 'a') as out:
        proc = subprocess.Popen(
            cmd,
            env=child_env(),
            cwd=HOME,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines = []

        def reader():
            for line in proc.stdout:
                out.write(line)
                out.flush()
                lines.append(line.rstrip())
                if line.startswith('      '):
                    say(line.strip())

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        while proc.poll() is None:
            dead = [u for u in units if not u.running()]
            if dead:
                proc.kill()
                proc.wait()
                logs = dead[0].logs()
                raise Failure(
                    f'{dead[0].name} died; {" ".join(logs)}:\n'
                    f'{tail(logs[-1] if logs else "", 15)}'
                )
            time.sleep(1)
        th.join()
    if proc.returncode != 0:
        last = '\n'.join(lines[-15:])
        raise Failure(f'setup_cloud {what} failed; see {path}:\n{last}')


def watched(plan, deps):
    """The units a setup_cloud phase fails on if they die: those it waits
    for, and MariaDB and RabbitMQ if started (not RegionTwo's while
    RegionOne's phase runs, nor the reverse: neither waits for the other)."""
    return [
        u
        for u in plan.units.values()
        if u.name in deps or (u.service == 'infra' and u.running())
    ]


def step_resources(plan, demo):
    def fn():
        write_image()
        units = watched(plan, plan.started)
        run_watched('resources', 'setup-resources.log', units)
        # a cast to a queue that no one consumes yet is lost (e.g. a boot
        # stays in BUILD), and service rows still read "up" for 60 s after
        # a restart: wait until every RPC server consumes its queue
        queues = [
            q for m in cloud.modules_for(plan.services) for q in m.RPC_QUEUES
        ]
        if queues:
            infra.wait_rabbit_consumers(queues)
        if demo:
            run_watched('demo', 'setup-demo.log', units)

    return fn


def step_readiness(plan, what):
    def fn():
        units = watched(plan, plan.readiness[what])
        run_watched(what, f'setup-{what}.log', units)

    return fn


def bring_up(services, demo):
    plan = Plan(services, cloud.units_for(services))
    infra.add_steps(plan, cloud.DATABASES)
    for m in cloud.modules_for(services):
        m.add_steps(plan)
    plan.add('resources+readiness', step_resources(plan, demo), plan.started)
    for what, deps in plan.readiness.items():
        plan.add(f'{what} readiness', step_readiness(plan, what), deps)
    return plan.run()
