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

"""Worker processes for the HTTP exchanges of the plan's own calls
(``api.direct``): every core, not one.

Only the exchange moves: this process keeps the executor, its slots, the
rate limits and adaptive limits, the events, progress and the record, and
it authenticates. A call of ``direct`` takes its turn under the proxy's
rate limit here, is sent to the least busy worker with the endpoint the
proxy resolved, the proxy's retries and headers and the microversion, and
waits; the worker's answer (status, headers, body) is made a
``requests.Response`` again, which ``direct`` checks with the SDK's
``raise_from_response`` as it checks its own: the same errors, the same
reading of the answer. A token this process gets when it re-authenticates
goes to each worker before its next call (``_Worker.send``); a worker
never authenticates.

A worker that ends (killed, crashed) stops the run as a SIGTERM does
(``on_lost``: the workflow's polite stop, exit 143): its calls under way
fail with ``WorkerLost`` and what the run still calls is made here, in
this process, so that what is in flight finishes and the record is
written. The workers end with their pipe: when this process ends, however
it ends.

``running()`` is off (``count`` 0) for a small plan: starting a worker
costs about a second of CPU (a fresh interpreter importing keystoneauth and
requests), and it saves about half of the client's CPU per call (the HTTP
exchange's share), 0.4 to 0.5 ms: a plan of about 2,000 steps (about 4,000
calls) repays two of them (``AUTO_STEPS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import contextlib
import datetime
import inspect
import itertools
import logging
import multiprocessing
import os
import sys
import threading
import types
from typing import Any
import weakref

import requests
from requests import structures
from requests import utils as requests_utils

from osc_cascade.api import worker_process

LOG = logging.getLogger(__name__)

#: a plan of more steps than this runs with workers unless told otherwise
AUTO_STEPS = 2000
#: at most this many workers when the count is chosen here
AUTO_MAX = 8

_LOCK = threading.Lock()
#: the pool of the run under way, if it has one
_POOL: Pool | None = None


class WorkerLost(RuntimeError):
    """A worker process ended with the call under way in it: whether the
    call was made is not known (the run stops; a re-run looks again)."""


def how_many(asked: int | None, steps: int) -> int:
    """The workers of a run of ``steps``: ``asked`` if said (0: none);
    else, for a plan of more than ``AUTO_STEPS``, one per core (at most
    ``AUTO_MAX``), and none on one core or while keystoneauth's requests
    are logged (a worker's log would not reach this process's)."""
    if asked is not None:
        return asked
    cores = os.cpu_count() or 1
    if steps <= AUTO_STEPS or cores < 2:
        return 0
    if logging.getLogger('keystoneauth').isEnabledFor(logging.DEBUG):
        return 0
    return min(cores, AUTO_MAX)


def send(
    proxy: Any, url: str, method: str, microversion: str | None
) -> requests.Response:
    """``proxy.request(url, method, microversion=...)``, made by a worker
    of the run's pool if it has one (and the proxy may be), else here."""
    pool = _POOL
    if pool is not None and pool.takes(proxy):
        return pool.request(proxy, url, method, microversion)
    return proxy.request(url, method, microversion=microversion)


@contextlib.contextmanager
def running(
    conn: Any,
    count: int,
    threads: int,
    on_lost: Callable[[str], None],
) -> Iterator[Pool | None]:
    """``count`` workers (none: nothing) for the calls of ``direct`` made
    while the block runs; the block of a run within a run uses the outer
    one's."""
    global _POOL
    with _LOCK:
        pool = None
        if count > 0 and _POOL is None:
            try:
                pool = _POOL = Pool(conn, count, threads, on_lost)
            except Exception as exc:  # the run goes on, in this process
                LOG.warning('no worker processes (%s): one process', exc)
    if pool is None:
        yield None
        return
    try:
        yield pool
    finally:
        with _LOCK:
            _POOL = None
        pool.close()


def session_settings(ks_session: Any, threads: int) -> dict[str, Any]:
    """What a worker's keystoneauth session is made with: the main
    session's TLS, timeout, user agent and headers, as far as this
    keystoneauth1 knows them (5.10, the lowest, has no ``tls_ciphers``)."""
    accepted = inspect.signature(type(ks_session).__init__).parameters
    settings = {
        'verify': ks_session.verify,
        'cert': ks_session.cert,
        'timeout': ks_session.timeout,
        'user_agent': getattr(ks_session, 'user_agent', None),
        'original_ip': ks_session.original_ip,
        'redirect': ks_session.redirect,
        'additional_headers': dict(ks_session.additional_headers),
        'app_name': ks_session.app_name,
        'app_version': ks_session.app_version,
        'additional_user_agent': list(ks_session.additional_user_agent),
        'tls_ciphers': getattr(ks_session, 'tls_ciphers', None),
        'tls_min_version': getattr(ks_session, 'tls_min_version', None),
    }
    return {
        **{k: v for k, v in settings.items() if k in accepted},
        'pool_maxsize': max(10, threads),
    }


def adapter_spec(proxy: Any) -> dict[str, Any]:
    """What a worker's adapter for ``proxy``'s service is made with: the
    endpoint the proxy's calls go to (its own override as it is, so that
    a ``%(project_id)s`` in it is filled in as keystoneauth fills it in),
    its retries, headers and client names."""
    endpoint = proxy.endpoint_override or proxy.get_endpoint()
    spec = {
        'service_type': proxy.service_type,
        'interface': proxy.interface,
        'region_name': proxy.region_name,
        'endpoint_override': endpoint,
        'additional_headers': dict(proxy.additional_headers or {}),
        'raise_exc': False,
    }
    for name in (
        'connect_retries',
        'status_code_retries',
        'connect_retry_delay',
        'status_code_retry_delay',
        'retriable_status_codes',
        'client_name',
        'client_version',
        'user_agent',
        'allow',
        'global_request_id',
    ):
        value = getattr(proxy, name, None)
        if value is not None:
            spec[name] = value
    return spec


class _Worker:
    def __init__(self, process: Any, pipe: Any):
        self.process = process
        self.pipe = pipe
        self.sending = threading.Lock()
        self.token_version = 0
        self.adapters: set[int] = set()
        #: job -> [event, answer]
        self.pending: dict[int, list[Any]] = {}
        self.alive = True

    def send(self, pool: Pool, key: int, spec: Any, call: tuple[Any, ...]):
        version, ref = pool.token()
        with self.sending:
            if version > self.token_version:
                self.pipe.send(('token', version, ref._data, ref.auth_token))
                self.token_version = version
            if key not in self.adapters:
                self.pipe.send(('adapter', key, spec))
                self.adapters.add(key)
            self.pipe.send(call)


class Pool:
    """The worker processes of one run."""

    def __init__(
        self,
        conn: Any,
        count: int,
        threads: int,
        on_lost: Callable[[str], None],
    ):
        self.conn = conn
        self.on_lost = on_lost
        self.closing = False
        self._lock = threading.Lock()
        self._jobs = itertools.count(1)
        self._numbers = itertools.count(1)
        self._keys: weakref.WeakKeyDictionary[Any, tuple[int, Any]]
        self._keys = weakref.WeakKeyDictionary()
        self._ref: Any = None
        self._version = 0
        context = multiprocessing.get_context('spawn')
        settings = session_settings(conn.session, threads)
        self.workers: list[_Worker] = []
        for number in range(count):
            here, there = context.Pipe()
            process = context.Process(
                target=worker_process.main,
                args=(there, threads),
                name=f'osc-cascade-worker-{number}',
                daemon=True,
            )
            with _bare_main():
                process.start()
            there.close()
            worker = _Worker(process, here)
            here.send(('session', settings))
            threading.Thread(
                target=self._read,
                args=(worker,),
                name=f'osc-cascade-worker-{number}-answers',
                daemon=True,
            ).start()
            self.workers.append(worker)
        LOG.debug('%d worker processes', count)

    def takes(self, proxy: Any) -> bool:
        """Whether ``proxy``'s calls may go to a worker: not with the
        SDK's response cache on (it answers GETs here)."""
        return not getattr(self.conn, 'cache_enabled', False)

    def token(self) -> tuple[int, Any]:
        """The token the calls use now, and its version: a new one (this
        process re-authenticated) is the next version."""
        ks_session = self.conn.session
        ref = ks_session.auth.get_access(ks_session)
        with self._lock:
            if ref is not self._ref:
                self._ref = ref
                self._version += 1
            return self._version, ref

    def _key(self, proxy: Any) -> tuple[int, Any]:
        """The number of ``proxy``'s adapter in the workers (never one
        of another proxy's, even one gone since) and what it is made of."""
        with self._lock:
            known = self._keys.get(proxy)
        if known is None:
            spec = adapter_spec(proxy)
            with self._lock:
                known = self._keys.get(proxy)
                if known is None:
                    known = self._keys[proxy] = (next(self._numbers), spec)
        return known

    def request(
        self, proxy: Any, url: str, method: str, microversion: str | None
    ) -> requests.Response:
        live = [w for w in self.workers if w.alive]
        if not live:
            return proxy.request(url, method, microversion=microversion)
        worker = min(live, key=lambda w: len(w.pending))
        key, spec = self._key(proxy)
        job = next(self._jobs)
        waiting: list[Any] = [threading.Event(), None]
        conn = (
            proxy._get_connection()
            if hasattr(proxy, '_get_connection')
            else None
        )
        request_id = getattr(conn, '_global_request_id', None)
        semaphore = getattr(proxy, '_rate_semaphore', None)
        with semaphore or contextlib.nullcontext():
            worker.pending[job] = waiting
            try:
                worker.send(
                    self,
                    key,
                    spec,
                    ('call', job, key, url, method, microversion, request_id),
                )
            except (OSError, EOFError, ValueError):
                worker.pending.pop(job, None)
                self._lost(worker)
                return proxy.request(url, method, microversion=microversion)
            if not worker.alive and worker.pending.pop(job, None):
                # lost after its calls under way were failed: this one too
                raise _lost_call(worker)
            waiting[0].wait()
        answer = waiting[1]
        if answer[0] == 'error':
            raise answer[2]
        response = _response(method, answer)
        report = getattr(proxy, '_report_stats', None)
        if report is not None:
            report(response)
        return response

    def _read(self, worker: _Worker) -> None:
        while True:
            try:
                answer = worker.pipe.recv()
            except (EOFError, OSError):
                break
            waiting = worker.pending.pop(answer[1], None)
            if waiting is not None:
                waiting[1] = answer
                waiting[0].set()
        self._lost(worker)

    def _lost(self, worker: _Worker) -> None:
        with self._lock:
            if not worker.alive:
                return
            worker.alive = False
        for job in list(worker.pending):
            waiting = worker.pending.pop(job, None)
            if waiting is not None:
                waiting[1] = ('error', job, _lost_call(worker))
                waiting[0].set()
        if not self.closing:
            worker.process.join(1)
            why = (
                f'worker process {worker.process.name} ended '
                f'(exit code {worker.process.exitcode})'
            )
            LOG.warning('%s: the run stops', why)
            self.on_lost(why)

    def close(self) -> None:
        """End the workers (their pipes closed: each finishes and exits)."""
        self.closing = True
        for worker in self.workers:
            with contextlib.suppress(OSError):
                worker.pipe.close()
        for worker in self.workers:
            worker.process.join(5)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(1)


@contextlib.contextmanager
def _bare_main() -> Iterator[None]:
    """While a worker starts: a ``__main__`` with neither file nor name.
    A spawned process imports its parent's main module again first (here
    ``openstackclient.shell``, the ``openstack`` script's: about a second
    of CPU and 35 MiB for a worker that needs none of it)."""
    main = sys.modules.get('__main__')
    sys.modules['__main__'] = types.ModuleType('__main__')
    try:
        yield
    finally:
        if main is not None:
            sys.modules['__main__'] = main


def _lost_call(worker: _Worker) -> WorkerLost:
    return WorkerLost(
        f'worker process {worker.process.name} ended with this call under '
        'way: whether it was made is not known'
    )


def _response(method: str, answer: tuple[Any, ...]) -> requests.Response:
    """The worker's answer as the ``requests.Response`` keystoneauth would
    have returned here."""
    _, _, status, headers, content, url, reason, elapsed = answer
    response = requests.Response()
    response.status_code = status
    response.headers = structures.CaseInsensitiveDict(headers)
    response._content = content
    response.url = url
    response.reason = reason
    response.elapsed = datetime.timedelta(seconds=elapsed)
    response.encoding = requests_utils.get_encoding_from_headers(
        response.headers
    )
    sent = requests.PreparedRequest()
    sent.method = method
    sent.url = url
    response.request = sent
    return response
