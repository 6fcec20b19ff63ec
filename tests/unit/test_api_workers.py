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

"""api.workers: the plan's calls made by worker processes answer, fail and
stop as the same calls made in this process (against a local HTTP server:
requests-mock does not reach another process)."""

import http.server
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types

from keystoneauth1 import access
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import fixture as ks_fixture
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import access as access_plugin
from openstack import exceptions as sdk_exc
from openstack.network.v2 import port as sdk_port
import pytest

from osc_cascade.api import direct, workers
from osc_cascade.workflows.cascade_options import CascadeOptions
from osc_cascade.workflows.stopping import Stop

PORT = '6b8e2a34-0000-4000-8000-000000000001'


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self):
        server = self.server
        server.seen.append(
            (
                self.command,
                self.path,
                self.headers.get('X-Auth-Token'),
                self.headers.get('User-Agent'),
            )
        )
        if 'slow' in self.path:
            server.release.wait(20)
        status, body = server.answers.get(
            (self.command, self.path.split('?')[0].rsplit('/', 1)[-1]),
            (404, {'NeutronError': {'message': 'Port not found'}}),
        )
        data = json.dumps(body).encode() if body is not None else b''
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('X-Openstack-Request-Id', 'req-1')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_DELETE = _answer


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
    httpd.seen = []
    httpd.release = threading.Event()
    httpd.answers = {
        ('GET', PORT): (
            200,
            {'port': {'id': PORT, 'tenant_id': 'p1', 'status': 'DOWN'}},
        ),
        ('DELETE', PORT): (204, None),
        ('DELETE', 'busy'): (
            409,
            {'NeutronError': {'message': 'Port busy is in use'}},
        ),
        ('GET', 'slow'): (200, {'port': {'id': 'slow'}}),
    }
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.release.set()
    httpd.shutdown()


def _access(token):
    return access.create(body=ks_fixture.V3Token(), auth_token=token)


@pytest.fixture
def conn(server):
    plugin = access_plugin.AccessInfoPlugin(_access('token-1'))
    session = ks_session.Session(auth=plugin, app_name='cascade-test')
    proxy = ks_adapter.Adapter(
        session,
        service_type='network',
        endpoint_override=f'http://127.0.0.1:{server.server_port}/v2.0',
        raise_exc=False,
    )
    # the calls made in this process
    proxy.here = []
    request = proxy.request

    def counted(url, method, **kwargs):
        proxy.here.append((method, url))
        return request(url, method, **kwargs)

    proxy.request = counted
    return types.SimpleNamespace(session=session, network=proxy)


def _outcome(call):
    try:
        found = call()
    except Exception as exc:
        return ('raised', type(exc), str(exc))
    if isinstance(found, direct.Found):
        return ('found', found.id, found.project_id, found.status)
    return ('answered', found)


CALLS = (
    lambda c: direct.get(c.network, sdk_port.Port, PORT),
    lambda c: direct.get(c.network, sdk_port.Port, 'gone'),
    lambda c: direct.delete(c.network, sdk_port.Port, PORT),
    lambda c: direct.delete(c.network, sdk_port.Port, 'gone'),
    lambda c: direct.delete(
        c.network, sdk_port.Port, 'gone', ignore_missing=False
    ),
    lambda c: direct.delete(c.network, sdk_port.Port, 'busy'),
)


def test_calls_answer_and_fail_as_in_process(server, conn):
    here = [_outcome(lambda: call(conn)) for call in CALLS]
    sent_here = list(server.seen)
    del server.seen[:]
    assert len(conn.network.here) == len(CALLS)
    del conn.network.here[:]
    lost = []
    with workers.running(conn, 2, 4, lost.append) as pool:
        assert pool is not None
        there = [_outcome(lambda: call(conn)) for call in CALLS]
    assert there == here
    assert here[0] == ('found', PORT, 'p1', 'DOWN')
    assert here[1][:2] == ('raised', sdk_exc.NotFoundException)
    assert here[5][:2] == ('raised', sdk_exc.ConflictException)
    # the same requests, token and user agent; made by other processes
    assert server.seen == sent_here
    assert conn.network.here == []
    assert lost == []


def test_no_pool_below_the_threshold_or_when_told(monkeypatch, request):
    import logging

    ks_log = logging.getLogger('keystoneauth')
    level = ks_log.level
    request.addfinalizer(lambda: ks_log.setLevel(level))
    ks_log.setLevel(logging.INFO)
    monkeypatch.setattr(os, 'cpu_count', lambda: 4)
    assert workers.how_many(None, workers.AUTO_STEPS) == 0
    assert workers.how_many(None, workers.AUTO_STEPS + 1) == 4
    assert workers.how_many(0, 100_000) == 0
    assert workers.how_many(3, 10) == 3
    monkeypatch.setattr(os, 'cpu_count', lambda: 1)
    assert workers.how_many(None, 100_000) == 0
    monkeypatch.setattr(os, 'cpu_count', lambda: 64)
    assert workers.how_many(None, 100_000) == workers.AUTO_MAX
    # keystoneauth's requests logged (--debug): only this process logs
    ks_log.setLevel(logging.DEBUG)
    assert workers.how_many(None, 100_000) == 0
    assert workers.how_many(2, 100_000) == 2


def test_without_a_pool_calls_are_made_here(server, conn):
    with workers.running(conn, 0, 4, print) as pool:
        assert pool is None
        direct.delete(conn.network, sdk_port.Port, PORT)
    assert conn.network.here == [('DELETE', f'ports/{PORT}')]


def test_a_new_token_reaches_the_workers(server, conn):
    with workers.running(conn, 2, 4, print):
        for _ in range(4):
            direct.get(conn.network, sdk_port.Port, PORT)
        # this process re-authenticated
        conn.session.auth.auth_ref = _access('token-2')
        for _ in range(4):
            direct.get(conn.network, sdk_port.Port, PORT)
    tokens = [s[2] for s in server.seen]
    assert tokens == ['token-1'] * 4 + ['token-2'] * 4


def test_a_lost_worker_stops_the_run(server, conn):
    lost = []
    outcome = []
    with workers.running(conn, 1, 4, lost.append) as pool:
        direct.get(conn.network, sdk_port.Port, PORT)  # the worker is up
        call = threading.Thread(
            target=lambda: outcome.append(
                _outcome(
                    lambda: direct.get(conn.network, sdk_port.Port, 'slow')
                )
            )
        )
        call.start()
        for _ in range(200):
            if any('slow' in s[1] for s in server.seen):
                break
            time.sleep(0.05)
        os.kill(pool.workers[0].process.pid, signal.SIGKILL)
        call.join(20)
        # the run is told from the pipe's reader thread, after the calls
        # under way failed: on a loaded machine that comes later
        for _ in range(400):
            if lost:
                break
            time.sleep(0.05)
        # what the run still calls is made here
        after = _outcome(lambda: direct.get(conn.network, sdk_port.Port, PORT))
    assert outcome[0][:2] == ('raised', workers.WorkerLost)
    assert 'whether it was made is not known' in outcome[0][2]
    assert len(lost) == 1 and 'exit code -9' in lost[0]
    assert after == ('found', PORT, 'p1', 'DOWN')
    assert conn.network.here == [('GET', f'ports/{PORT}')]


def test_a_lost_worker_is_a_sigterm_of_the_workflow(server, conn):
    stop = Stop()
    with stop.workers(conn, CascadeOptions(workers=1, parallel=4), 10) as pool:
        os.kill(pool.workers[0].process.pid, signal.SIGTERM)
        assert stop.event.wait(20)
    assert stop.signum == signal.SIGTERM


def test_workers_end_with_the_main_process(server, tmp_path):
    """Killed at once (SIGKILL: no handler runs), the main process takes
    its workers with it: their pipe ends."""
    script = tmp_path / 'main.py'
    script.write_text(
        textwrap.dedent(
            """
            import sys, time, types
            from keystoneauth1 import access, session
            from keystoneauth1 import fixture
            from keystoneauth1.identity import access as plugin
            from osc_cascade.api import workers

            def main():
                ref = access.create(body=fixture.V3Token(), auth_token='t')
                conn = types.SimpleNamespace(
                    session=session.Session(auth=plugin.AccessInfoPlugin(ref))
                )
                with workers.running(conn, 2, 2, print) as pool:
                    print(*[w.process.pid for w in pool.workers], flush=True)
                    time.sleep(120)

            if __name__ == '__main__':
                main()
            """
        )
    )
    main = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )
    pids = [int(p) for p in main.stdout.readline().split()]
    assert len(pids) == 2
    main.kill()
    main.wait(10)
    deadline = time.monotonic() + 20
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        time.sleep(0.1)
    assert alive == []


def _alive(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().split(')')[-1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


def test_each_proxy_keeps_its_own_endpoint_in_the_workers(server, conn):
    """A proxy gone (garbage) never lends its number to a new one: each
    call goes to its own proxy's endpoint."""
    import gc

    def proxy(path):
        return ks_adapter.Adapter(
            conn.session,
            service_type='network',
            endpoint_override=(
                f'http://127.0.0.1:{server.server_port}/{path}'
            ),
            raise_exc=False,
        )

    with workers.running(conn, 1, 2, print):
        first = proxy('first')
        direct.delete(first, sdk_port.Port, PORT)
        second = proxy('second')
        direct.delete(second, sdk_port.Port, PORT)
        del first
        gc.collect()
        third = proxy('third')
        direct.delete(third, sdk_port.Port, PORT)
        direct.delete(second, sdk_port.Port, PORT)
    assert [s[1] for s in server.seen] == [
        f'/{path}/ports/{PORT}'
        for path in ('first', 'second', 'third', 'second')
    ]


def test_the_workers_option():
    import argparse

    from osc_cascade.v1 import cascade_options

    parser = argparse.ArgumentParser()
    cascade_options.add_workers_option(parser)
    assert parser.parse_args([]).workers == 0  # off unless asked for
    assert parser.parse_args(['--workers', 'auto']).workers is None
    assert parser.parse_args(['--workers', '0']).workers == 0
    assert parser.parse_args(['--workers', '3']).workers == 3
    for bad in ('-1', 'many'):
        with pytest.raises(SystemExit):
            parser.parse_args(['--workers', bad])
