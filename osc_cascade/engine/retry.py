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

"""Retrying what may pass, with an injected clock and policy.

Every caller that talks to the cloud (the executor's steps, discovery's
lists, the purge's reads, force delete's lookups) retries through
``retrying`` with the clock and policy it was given, so that tests pass a
fake clock and nothing patches time globally.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import threading
import time
from typing import TypeVar

from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc

from osc_cascade.engine.errors import CascadeError, describe, status_code

T = TypeVar('T')


class Clock:
    """Wall clock; tests pass a fake one so that nothing really sleeps."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def pause(self, seconds: float, stop: threading.Event) -> None:
        """Sleep, but no longer than until ``stop`` is set (an interrupted
        run must not wait out its backoffs and polls)."""
        stop.wait(seconds)


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    #: attempts of one API call before the step fails
    max_attempts: int = 8
    #: first backoff; doubles each time up to ``max_delay``
    base_delay: float = 1.0
    max_delay: float = 30.0
    #: status polling starts fast and backs off to this
    poll_min: float = 0.5
    poll_max: float = 10.0
    #: ... or to this where one list call answers for every waiting
    #: resource of a kind and project (it costs requests per kind, not
    #: per resource): a delete is seen done half a poll late on average,
    #: and a server's then a volume's make the longest chain of a plan
    poll_listed_max: float = 1.0

    def delay(self, attempt: int) -> float:
        return min(self.max_delay, self.base_delay * 2 ** (attempt - 1))


def is_transient(exc: Exception) -> bool:
    """Worth retrying whatever the kind: throttling, server-side errors and
    connections that failed or timed out."""
    if isinstance(
        exc,
        (
            ks_exc.ConnectFailure,
            ks_exc.ConnectTimeout,
            ks_exc.RetriableConnectionFailure,
        ),
    ):
        return True
    code = status_code(exc)
    return code is not None and (code == 429 or code >= 500)


def retrying(
    call: Callable[[], T],
    *,
    retry: RetryPolicy,
    clock: Clock,
    attempts: int | None = None,
) -> T:
    """``call()``, made again with the policy's backoff while it fails in
    a way that may pass (``is_transient``), ``attempts`` times at most
    (default: the policy's); the last failure is raised as it is."""
    limit = attempts or retry.max_attempts
    attempt = 0
    while True:
        attempt += 1
        try:
            return call()
        except Exception as exc:
            if not (is_transient(exc) and attempt < limit):
                raise
            clock.sleep(retry.delay(attempt))


def is_gone(exc: Exception) -> bool:
    return isinstance(exc, (sdk_exc.NotFoundException, ks_exc.NotFound))


def checked(
    what: str,
    call: Callable[[], T],
    *,
    retry: RetryPolicy,
    clock: Clock,
    attempts: int | None = None,
    needs: str = 'it needs the admin role',
    outcome: str = '',
) -> T:
    """``call()`` retried as ``retrying`` does; a failure that stays is a
    CascadeError with one line saying what failed (see ``describe``)."""
    try:
        return retrying(call, retry=retry, clock=clock, attempts=attempts)
    except CascadeError:
        raise  # already one line, and about something else than the call
    except Exception as exc:
        raise CascadeError(
            describe(what, exc, needs=needs, outcome=outcome)
        ) from exc


def wait_until(
    check: Callable[[], bool],
    seconds: float,
    *,
    retry: RetryPolicy,
    clock: Clock,
) -> bool:
    """``check()`` until it is true or ``seconds`` have passed, backing off
    from the policy's ``poll_min`` to its ``poll_max``; whether it became
    true."""
    deadline = clock.now() + seconds
    delay = retry.poll_min
    while True:
        if check():
            return True
        left = deadline - clock.now()
        if left <= 0:
            return False
        clock.sleep(min(delay, left))
        delay = min(retry.poll_max, delay * 2)
