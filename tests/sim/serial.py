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

"""The tool run on one thread, so that a seed replays: the same requests
in the same order every time, the kill on the same change, each fault and
each actor's hook on the same request.

With the tool's thread pools a kill at the k-th change hit whichever
change the threads' race made k-th, an actor's hook fired before or after
a listing another thread made at the same moment, and a fault struck the
first matching request of whichever thread got there: a failing seed did
not always fail again. Here every pool of the tool (discovery, the
executor, a step's parts, the sub-calls of a kind, the orphan and purge
workflows) runs what it is given at once, in the caller's thread, and the
freeze's lowering (a thread of its own) runs when it is due, in the thread
that made it due.

What this hides: races between the tool's own threads (two of its steps
at the same instant). The simulation is about the tool against the world
(the actors, faults and kills, each tied to a request, which still fall
between any two of the tool's requests); the executor's own ordering
(what runs side by side, what blocks what) keeps its unit tests, and the
interleavings of steps that are independent are the ones the executor may
run in any order: here in its own priority order, the one a pool of one
thread would take."""

from __future__ import annotations

import concurrent.futures
import contextlib
from unittest import mock


class SerialPool:
    """A ``ThreadPoolExecutor`` that runs each task when it is submitted,
    in the caller's thread: a future returned is already done."""

    def __init__(self, max_workers=None, thread_name_prefix='', **_):
        self.max_workers = max_workers

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # as a pool's future keeps it
            future.set_exception(exc)
        return future

    def map(self, fn, *iterables, timeout=None, chunksize=1):
        futures = [self.submit(fn, *args) for args in zip(*iterables)]
        return (f.result() for f in futures)

    def shutdown(self, wait=True, *, cancel_futures=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _lower_now(original):
    """``Lowering.notice`` that lowers what became due at once, instead of
    waking its thread."""

    def notice(self, event):
        self._thread = _NEVER  # no thread is started
        original(self, event)
        with self._cond:
            due, self._due = sorted(self._due), set()
        for key in due:
            self._lower(key)

    return notice


class _Never:
    """A thread that is never started and joins at once."""

    def join(self, timeout=None):
        pass


_NEVER = _Never()


@contextlib.contextmanager
def serially():
    """Run the tool on one thread while inside."""
    from osc_cascade.workflows.lowering import Lowering

    with (
        # every pool the tool makes (discovery, the executor, a step's
        # parts, a kind's sub-calls, the orphan and purge workflows)
        mock.patch.object(
            concurrent.futures, 'ThreadPoolExecutor', SerialPool
        ),
        mock.patch.object(Lowering, 'notice', _lower_now(Lowering.notice)),
    ):
        yield
