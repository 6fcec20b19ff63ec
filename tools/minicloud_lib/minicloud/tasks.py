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

"""The bring-up's step runner: named steps in threads, each started once
its dependencies are done, CPU-heavy ones throttled."""

import os
import threading
import time

from .state import initialised, mark_initialised
from .units import start_unit
from .util import phase, run, say


class Slots:
    """At most N CPU-heavy steps (migrations, identity) at once, highest
    priority first: on 2 cores, running nine migrations together starves
    the critical path (keystone, identity, nova)."""

    def __init__(self, n):
        self.free = n
        self.waiting = []
        self.cond = threading.Condition()

    def acquire(self, prio):
        with self.cond:
            self.waiting.append(prio)
            while self.free == 0 or min(self.waiting) != prio:
                self.cond.wait()
            self.waiting.remove(prio)
            self.free -= 1
            self.cond.notify_all()

    def release(self):
        with self.cond:
            self.free += 1
            self.cond.notify_all()


SLOTS = Slots(int(os.environ.get('MINICLOUD_HEAVY_SLOTS', '3')))

# order in which CPU-heavy steps get a slot (see Slots)
PRIORITY = {
    'keystone-db': 0,
    'keystone-bootstrap': 0,
    'identity': 1,
    'nova-db': 2,
    'neutron-db': 3,
    'placement-db': 4,
    'glance-db': 5,
    'cinder-db': 6,
    'heat-db': 7,
    'octavia-db': 8,
    'swift-rings': 9,
    'barbican-db': 9,
    'designate-db': 9,
    'magnum-db': 9,
    'manila-db': 9,
    'ironic-db': 9,
    # RegionTwo last: nothing of RegionOne waits for it
    'neutron-r2-db': 10,
    'glance-r2-db': 11,
}


def heavy(prio, fn):
    def wrapped():
        SLOTS.acquire(prio)
        try:
            return fn()
        finally:
            SLOTS.release()

    return wrapped


def once(step, fn, done_as=None):
    """A heavy step that runs only if state.json does not say it ran (as
    ``done_as``, by default the step's name)."""
    done_as = done_as or step

    def wrapped():
        if initialised(done_as):
            return 'initialised before'
        heavy(PRIORITY.get(step, 10), fn)()
        mark_initialised(done_as)
        return None

    return wrapped


def manage(log, *cmds):
    """A step that runs commands one after the other."""

    def fn():
        for cmd in cmds:
            run(cmd, log)

    return fn


def parallel(*fns):
    errors = []

    def call(fn):
        try:
            fn()
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(fn,)) for fn in fns]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


class Tasks:
    """Run named steps in threads, each once all its dependencies are
    done; print each with its duration."""

    def __init__(self):
        self.steps = []
        self.done = {}
        self.failed = []

    def add(self, name, fn, deps=()):
        self.steps.append((name, fn, tuple(deps)))
        self.done[name] = threading.Event()

    def _run(self, name, fn, deps):
        try:
            for dep in deps:
                self.done[dep].wait()
                if dep in self.failed:
                    self.failed.append(name)
                    return
            if self.failed:
                self.failed.append(name)
                return
            t = time.monotonic()
            note = fn()
            phase(name, time.monotonic() - t, note or '')
        except Exception as exc:
            self.failed.append(name)
            say(f'FAILED {name}: {exc}')
        finally:
            self.done[name].set()

    def run(self):
        threads = [
            threading.Thread(target=self._run, args=step, daemon=True)
            for step in self.steps
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return not self.failed


class Plan(Tasks):
    """The steps of one bring-up, which each service module adds to."""

    def __init__(self, services, units):
        super().__init__()
        self.services = services
        self.units = {u.name: u for u in units}
        self.started = ['identity']  # what the readiness step waits for
        # setup_cloud phase -> what it waits for: units checked apart from
        # the resources+readiness step, in parallel with it
        self.readiness = {}

    def start(self, unit_names, deps, readiness=None):
        """One step per unit.  Services authenticate at start-up
        (nova-conductor dies if its user is missing): start them once
        identity data exists.  readiness: the setup_cloud phase that
        checks them, if not resources."""
        deps = [*deps, 'identity']
        for un in unit_names:
            self.add(un, lambda u=self.units[un]: start_unit(u), deps)
            if readiness:
                self.readiness.setdefault(readiness, ['identity']).append(un)
            else:
                self.started.append(un)
