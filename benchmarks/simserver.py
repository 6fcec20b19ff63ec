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

"""The simulated cloud (benchmarks.simcloud) over HTTP on loopback: a
port for each service of each region (a client pools its connections per
service, as against a real cloud), and the control port (``GET /stats``,
``POST /seed``, ``GET /owned``, ``POST /stop``)."""

from __future__ import annotations

import http.server
import json
import os
import socketserver
import threading
import time
from typing import TYPE_CHECKING
from urllib import parse

from requests.structures import CaseInsensitiveDict

from benchmarks.simshard import SERVICES

if TYPE_CHECKING:
    from benchmarks.simcloud import SimCloud


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


def _handler(sim: SimCloud, service: str, region: str):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        disable_nagle_algorithm = True

        def log_message(self, *args):  # quiet: every request is counted
            pass

        def _any(self):
            started = time.monotonic()
            try:
                self._answer()
            finally:
                sim.counters.added(time.monotonic() - started - sim.latency)

        def _answer(self):
            length = int(self.headers.get('Content-Length') or 0)
            body = self.rfile.read(length) if length else b''
            headers = CaseInsensitiveDict(self.headers.items())
            url = f'{sim.region_urls[region][service]}{self.path}'
            status, reply_headers, content = sim.answer(
                service, self.command, url, headers, body, region
            )
            content = sim._rewrite(content or b'', region)
            self.send_response(status)
            for name, value in reply_headers.items():
                if name.lower() in ('content-length', 'date'):
                    continue
                if name.lower() == 'location':
                    value = sim.rewrite_location(value, region)
                self.send_header(name, value)
            # send_response wrote the one Date header (a second one made
            # the client's cloud_time a naive datetime)
            self.send_header(
                'Content-Length',
                '0' if self.command == 'HEAD' else str(len(content)),
            )
            self.end_headers()
            if self.command != 'HEAD':
                self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

    return Handler


def _control(sim: SimCloud, stop: threading.Event):
    class Control(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _reply(self, payload):
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            split = parse.urlsplit(self.path)
            query = dict(parse.parse_qsl(split.query))
            if split.path == '/stats':
                self._reply(
                    sim.reset_stats() if query.get('reset') else sim.stats()
                )
            elif split.path == '/owned':
                self._reply(sim.owned(query['project']))
            elif split.path == '/domain-left':
                from benchmarks import simdomain

                self._reply(simdomain.left(sim, sim.domains[query['id']]))
            else:
                self.send_error(404)

        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            body = json.loads(self.rfile.read(length) or b'{}')
            if self.path == '/seed':
                self._reply(
                    sim.seed(
                        body['n'],
                        body.get('twins', 2),
                        body.get('prefix', 'sim'),
                    )
                )
            elif self.path == '/seed-domain':
                from benchmarks import simdomain

                self._reply(simdomain.seed(sim, **body))
            elif self.path == '/stop':
                self._reply({'stopping': True})
                stop.set()
            else:
                self.send_error(404)

    return Control


def serve(sim: SimCloud, *, port: int = 0) -> tuple[list, dict]:
    """Start the services' servers (and the control server) in threads;
    returns the servers and the state (URLs, ports) to write."""
    servers = []
    stop = threading.Event()
    endpoints = [
        (region, service)
        for region in sim.regions
        for service in SERVICES
        if service != 'identity' or region == sim.regions[0]
    ]
    for i, (region, service) in enumerate(endpoints):
        server = _Server(
            (sim.host, port + 1 + i if port else 0),
            _handler(sim, service, region),
        )
        sim.region_urls[region][service] = (
            f'http://{sim.host}:{server.server_address[1]}'
        )
        servers.append(server)
    control = http.server.ThreadingHTTPServer(
        (sim.host, port if port else 0), _control(sim, stop)
    )
    servers.append(control)
    for server in servers:
        threading.Thread(
            target=server.serve_forever, args=(0.05,), daemon=True
        ).start()
    state = {
        'pid': os.getpid(),
        'control': f'http://{sim.host}:{control.server_address[1]}',
        'auth_url': sim.urls['identity'] + '/v3',
        'urls': dict(sim.urls),
        'region_urls': sim.region_urls,
        'stop': stop,
    }
    return servers, state


def clouds_yaml(auth_url: str) -> dict:
    """The clouds.yaml of the simulated cloud's admin."""
    return {
        'clouds': {
            'sim-admin': {
                'auth': {
                    'auth_url': auth_url,
                    'username': 'admin',
                    'password': 'secret',
                    'project_name': 'admin',
                    'user_domain_id': 'default',
                    'project_domain_id': 'default',
                },
                'region_name': 'RegionOne',
                'identity_api_version': '3',
                'interface': 'public',
            }
        }
    }
