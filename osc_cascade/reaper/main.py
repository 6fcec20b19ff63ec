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

"""``osc-cascade-reaper``: the console script.

Reads the options (``config``), connects to the cloud of clouds.yaml,
starts the locks, the worker thread and the notification listener, and
stops all of it cleanly on SIGTERM or SIGINT: the purge under way (its
calls in flight finish) and the listener at once, waited for
``shutdown_timeout`` seconds at most, or the listener's 5 s if longer.
Logs are plain lines on stderr, for journald.
"""

from __future__ import annotations

from collections.abc import Sequence
import logging
import os
import signal
import socket
import sys
import threading
import time
from typing import Any

LOG = logging.getLogger('osc_cascade.reaper')


def _advance_from_now(semaphore: Any) -> float:
    """keystoneauth's ``FairSemaphore._advance_timer``, from the later of
    the last call's turn and now."""
    semaphore._rate_last_ts = max(
        semaphore._rate_last_ts + semaphore._rate_delay, time.time()
    )
    return semaphore._rate_last_ts


def pace_from_now() -> None:
    """keystoneauth's rate limit (the ``FairSemaphore`` of every
    openstacksdk proxy given a ``rate_limit``) gives each call the turn
    after the one before, counted from when the proxy was made: a proxy
    idle for an hour has saved up 3600 s worth of calls and lets them all
    through at once (on the minicloud at 2 calls/s, after 10 s idle: 20
    calls to Neutron in 5 s). The reaper's proxies live as long as it does,
    so a call's turn is never earlier than now."""
    from keystoneauth1 import _fair_semaphore

    semaphore = getattr(_fair_semaphore, 'FairSemaphore', None)
    if not hasattr(semaphore, '_advance_timer'):
        LOG.warning(
            'keystoneauth has no FairSemaphore._advance_timer any more: '
            'its rate limit may let the calls it saved up while idle '
            'through at once'
        )
        return
    semaphore._advance_timer = _advance_from_now


def setup_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    # journald stamps each line itself
    handler.setFormatter(
        logging.Formatter('%(levelname)s %(name)s: %(message)s')
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    if not debug:
        for noisy in ('keystoneauth', 'openstack', 'stevedore', 'urllib3'):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def build(conf: Any, *, conn: Any = None, transport: Any = None) -> Any:
    """The service, not started: (reaper, listener, locks)."""
    import openstack
    import oslo_messaging

    from osc_cascade import kinds as kinds_mod
    from osc_cascade.engine import limiter
    from osc_cascade.engine.regions import Regions
    from osc_cascade.reaper import config, listener, lock, service, sweep
    from osc_cascade.workflows import late_release, orphans

    options = conf.reaper
    if conn is None:
        conn = openstack.connect(
            cloud=config.cloud(conf), app_name=config.PROJECT
        )
    # forced only with its own switch (off by default)
    kinds = orphans.select_kinds(
        kinds_mod.build(force_stuck=options.force_stuck)
    )
    pace_from_now()
    limiter.repair_limits(conn)
    limiter.size_pools(conn, options.parallel)
    if options.rate_limit:
        # the commands' --rate-limit takes the same path
        limits = limiter.limit_rate(
            conn, options.rate_limit, {k.service_type for k in kinds.values()}
        )
        LOG.info('rate limits (calls/s): %s', limits)
    locks = lock.Locks(
        options.coordination_url, f'{socket.gethostname()}-{os.getpid()}'
    )
    regions = Regions(conn)
    purger = sweep.Purger(
        conn,
        kinds,
        locks,
        regions=regions,
        dry_run=config.dry_run(conf),
        parallel=options.parallel,
        timeout=options.step_timeout,
    )
    reaper = service.Reaper(
        purger,
        service.Timing(
            grace_period=options.grace_period,
            sweep_interval=options.sweep_interval,
            retry_delay=options.retry_delay,
            retry_max_delay=options.retry_max_delay,
            lock_retry_delay=options.lock_retry_delay,
            batch_size=options.batch_size,
        ),
        # the quotas a cascade left frozen, once nothing is left
        release=late_release.QuotaRelease(conn, regions),
    )
    if transport is None:
        transport = oslo_messaging.get_notification_transport(conf)
    notifications = listener.listener(
        transport,
        listener.DeletionEndpoint(reaper.deleted),
        exchange=options.exchange,
        topics=options.topics,
        pool=options.listener_pool,
    )
    return reaper, notifications, locks


def serve(
    reaper: Any,
    notifications: Any,
    locks: Any,
    stop: threading.Event,
    shutdown_timeout: float,
) -> bool:
    """Run until ``stop`` is set; whether everything stopped in time."""
    locks.start()
    worker = threading.Thread(target=reaper.run, name='reaper', daemon=True)
    worker.start()
    notifications.start()
    LOG.info('listening; dry run: %s', reaper.purger.dry_run)
    stop.wait()
    LOG.info('stopping')
    deadline = time.monotonic() + shutdown_timeout
    # the purge stops while the listener does: oslo.messaging's RabbitMQ
    # listener sees its stop between two polls, up to 5 s
    reaper.stop()
    notifications.stop()
    worker.join(max(0.0, deadline - time.monotonic()))
    clean = not worker.is_alive()
    if not clean:
        LOG.warning(
            'the purge under way did not stop within %gs: abandoned (the '
            'next sweep finishes it)',
            shutdown_timeout,
        )
    notifications.wait()
    locks.stop()
    LOG.info('stopped')
    return clean


def main(argv: Sequence[str] | None = None) -> int:
    from osc_cascade.reaper import config

    conf = config.load(sys.argv[1:] if argv is None else argv)
    setup_logging(conf.reaper.debug)
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        LOG.info('signal %d received', signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        parts = build(conf)
    except Exception as exc:
        LOG.error('cannot start: %s', exc)
        return 1
    return 0 if serve(*parts, stop, conf.reaper.shutdown_timeout) else 1


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
