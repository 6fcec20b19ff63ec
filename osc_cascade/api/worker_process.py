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

"""One worker process of ``api.workers``: the HTTP exchanges of the plan's
own calls, made through a keystoneauth session of its own.

The session has the main process's settings (TLS verify, client cert,
ciphers, timeout, user agent, headers; the proxy settings are the
environment's, which a spawned process inherits) and its token and
catalog (``access.create(body=...)`` behind an ``AccessInfoPlugin``, which
never authenticates by itself: the main process does, and sends the new
token before the next call that needs it). Each service is reached through
a keystoneauth adapter on the endpoint the main process's proxy resolved,
with the proxy's retries, headers and the call's microversion.

It reads messages from its pipe, in order:

- ``('session', settings)``: first, once;
- ``('token', version, body, auth_token)``: the token calls use from now;
- ``('adapter', key, spec)``: a service's adapter;
- ``('call', job, key, url, method, microversion, request_id)``: made on a
  thread of its own; the answer goes back as ``('done', job, status,
  headers, content, url, reason, elapsed)`` or ``('error', job,
  exception)``.

The end of the pipe (the main process gone) ends it. Ctrl-C is the main
process's to handle (the terminal sends it to the whole group): a worker
ignores it and finishes what it was given.
"""

from __future__ import annotations

from concurrent import futures
import pickle
import signal
import threading
from typing import Any

from keystoneauth1 import access
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import access as access_plugin

from osc_cascade.api import session_costs


def _session(settings: dict[str, Any]) -> ks_session.Session:
    pool = settings.pop('pool_maxsize')
    session = ks_session.Session(**settings)
    session_costs.size_pools(session.session, pool)
    session_costs.resolve_environment_once(session.session)
    return session


def _call(
    adapter: ks_adapter.Adapter,
    job: int,
    url: str,
    method: str,
    microversion: str | None,
    request_id: str | None,
) -> tuple[Any, ...]:
    try:
        response = adapter.request(
            url,
            method,
            microversion=microversion,
            raise_exc=False,
            global_request_id=request_id,
        )
    except Exception as exc:  # the main process raises it as it came
        try:
            pickle.dumps(exc)
        except Exception:
            exc = ks_exc.UnknownConnectionError(f'{type(exc).__name__}: {exc}')
        return ('error', job, exc)
    return (
        'done',
        job,
        response.status_code,
        list(response.headers.items()),
        response.content,
        response.url,
        response.reason,
        response.elapsed.total_seconds(),
    )


def main(pipe: Any, threads: int) -> None:
    """A worker's life: until its pipe ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    session: ks_session.Session | None = None
    adapters: dict[Any, ks_adapter.Adapter] = {}
    answering = threading.Lock()
    pool = futures.ThreadPoolExecutor(threads)

    def answer(done: futures.Future) -> None:
        with answering:
            try:
                pipe.send(done.result())
            except (OSError, EOFError):
                pass  # the main process is gone: so is this one soon

    while True:
        try:
            message = pipe.recv()
        except (EOFError, OSError):
            break
        what = message[0]
        if what == 'session':
            session = _session(message[1])
        elif what == 'token':
            _, _version, body, auth_token = message
            assert session is not None
            session.auth = access_plugin.AccessInfoPlugin(
                access.create(body=body, auth_token=auth_token)
            )
        elif what == 'adapter':
            _, key, spec = message
            adapters[key] = ks_adapter.Adapter(session, **spec)
        elif what == 'call':
            _, job, key, url, method, microversion, request_id = message
            pool.submit(
                _call,
                adapters[key],
                job,
                url,
                method,
                microversion,
                request_id,
            ).add_done_callback(answer)
    pool.shutdown(wait=False, cancel_futures=True)
