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

"""The pure parts of tools/cloudproxy, and one forward through it on
loopback (no cloud, no sleeps)."""

import http.client
import http.server
import importlib.machinery
import importlib.util
import json
import os
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROXY_PATH = os.path.join(HERE, '..', '..', 'tools', 'cloudproxy')


def _load():
    loader = importlib.machinery.SourceFileLoader('cloudproxy', PROXY_PATH)
    spec = importlib.util.spec_from_loader('cloudproxy', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


cp = _load()


def test_fault_decision_is_reproducible():
    args = (7, 0.3, cp.FAULT_KINDS, 'DELETE', '/v2.0/ports/abc')
    first = [cp.decide_fault(*args, n) for n in range(200)]
    assert first == [cp.decide_fault(*args, n) for n in range(200)]
    other_seed = [cp.decide_fault(8, *args[1:], n) for n in range(200)]
    assert first != other_seed


def test_fault_rate_and_kinds():
    draws = [
        cp.decide_fault(1, 0.1, cp.FAULT_KINDS, 'GET', f'/x/{i}', 0)
        for i in range(20000)
    ]
    faults = [d for d in draws if d]
    assert 0.08 < len(faults) / len(draws) < 0.12
    assert set(faults) == set(cp.FAULT_KINDS)
    # each kind gets about a third
    for kind in cp.FAULT_KINDS:
        assert faults.count(kind) > len(faults) / 5


def test_no_fault_at_rate_zero_or_without_kinds():
    assert all(
        cp.decide_fault(1, 0.0, cp.FAULT_KINDS, 'GET', '/', n) is None
        for n in range(100)
    )
    assert cp.decide_fault(1, 1.0, (), 'GET', '/', 0) is None
    assert all(
        cp.decide_fault(1, 1.0, ('503',), 'GET', '/', n) == '503'
        for n in range(100)
    )


def test_route_of_replaces_ids():
    assert (
        cp.route_of(
            '/v2.0/ports/3f2b8c1e-1111-2222-3333-444455556666?fields=id'
        )
        == '/v2.0/ports/{id}'
    )
    assert (
        cp.route_of('/v1/AUTH_' + 'a' * 32 + '/cont/obj')
        == '/v1/{id}/cont/obj'
    )
    assert (
        cp.route_of('/v3/' + 'b' * 32 + '/volumes/detail')
        == '/v3/{id}/volumes/detail'
    )
    assert cp.route_of('/v2.1/servers/detail') == '/v2.1/servers/detail'
    assert cp.route_of('/v2.1/os-keypairs/12') == '/v2.1/os-keypairs/{id}'


def test_service_name():
    assert cp.service_name(['volumev3', 'block-storage']) == 'block-storage'
    assert cp.service_name(['volumev3']) == 'block-storage'
    assert cp.service_name(['compute']) == 'compute'
    assert cp.service_name(['zzz', 'aaa']) == 'aaa'
    assert cp.service_name([]) == 'unknown'


def test_rewrite_longest_origin_first():
    mapping = {
        'http://127.0.0.1:2850': 'http://127.0.0.1:1',
        'http://127.0.0.1:28500': 'http://127.0.0.1:2',
    }
    body = b'{"a": "http://127.0.0.1:28500/v3", "b": "http://127.0.0.1:2850"}'
    assert cp.rewrite(body, mapping) == (
        b'{"a": "http://127.0.0.1:2/v3", "b": "http://127.0.0.1:1"}'
    )


def test_rewritable():
    assert cp.rewritable('application/json; charset=UTF-8')
    assert cp.rewritable('text/plain')
    assert not cp.rewritable('application/octet-stream')
    assert not cp.rewritable('')


def test_proxied_clouds():
    clouds = {
        'mc-admin': {
            'auth': {
                'auth_url': 'http://127.0.0.1:28500/v3',
                'username': 'admin',
            },
            'region_name': 'RegionOne',
        },
        'elsewhere': {'auth': {'auth_url': 'http://127.0.0.1:9/v3'}},
        'old-proxied': {'auth': {'auth_url': 'http://127.0.0.1:28500/v3'}},
    }
    out = cp.proxied_clouds(
        clouds, 'http://127.0.0.1:28500', 'http://127.0.0.1:40000', 10
    )
    assert list(out) == ['mc-admin-proxied']
    entry = out['mc-admin-proxied']
    assert entry['auth']['auth_url'] == 'http://127.0.0.1:40000/v3'
    assert entry['auth']['username'] == 'admin'
    assert entry['api_timeout'] == 10
    assert clouds['mc-admin']['auth']['auth_url'].endswith(':28500/v3')


def test_config_fault_scope():
    config = cp.Config(fault_rate=0.5)
    assert not config.may_fault('identity', 'POST')
    assert config.may_fault('network', 'DELETE')
    config.update({'fault_services': ['compute'], 'fault_methods': ['GET']})
    assert config.may_fault('compute', 'GET')
    assert not config.may_fault('compute', 'DELETE')
    assert not config.may_fault('network', 'GET')
    config.update({'fault_rate': 0})
    assert not config.may_fault('compute', 'GET')
    with pytest.raises(ValueError):
        config.update({'fault_kinds': ['explode']})


def test_stats_counts_and_nth():
    stats = cp.Stats()
    assert stats.count('network', 'GET', '/v2.0/ports?x=1') == 0
    assert stats.count('network', 'GET', '/v2.0/ports?x=2') == 1
    assert stats.count('network', 'DELETE', '/v2.0/ports/' + 'c' * 32) == 0
    stats.count('network', 'GET', '/v2.0/ports', 'http://127.0.0.1:9697')
    stats.fault('network', '503')
    stats.status(204)
    snap = stats.snapshot()
    assert snap['requests'] == {'network': {'DELETE': 1, 'GET': 3}}
    assert snap['routes']['network GET /v2.0/ports'] == 3
    assert snap['routes']['network DELETE /v2.0/ports/{id}'] == 1
    assert snap['upstreams'] == {'http://127.0.0.1:9697': 1}
    assert snap['faults_total'] == 1
    assert snap['total'] == 4
    old = stats.reset()
    assert old['total'] == 4
    assert stats.snapshot()['total'] == 0


def test_endpoint_services_and_mini_yaml():
    catalog = [
        {
            'type': 'volumev3',
            'endpoints': [{'url': 'http://127.0.0.1:28776/v3/abc'}],
        },
        {
            'type': 'block-storage',
            'endpoints': [{'url': 'http://127.0.0.1:28776/v3'}],
        },
        {'type': 'network', 'endpoints': [{'url': 'http://127.0.0.1:28696'}]},
    ]
    assert cp.endpoint_services(catalog) == {
        'http://127.0.0.1:28776': 'block-storage',
        'http://127.0.0.1:28696': 'network',
    }
    text = (
        '# comment\nclouds:\n  mc:\n    auth:\n'
        '      auth_url: http://127.0.0.1:28500/v3\n'
        '      password: secret\n    identity_api_version: 3\n'
    )
    assert cp._mini_yaml(text) == {
        'clouds': {
            'mc': {
                'auth': {
                    'auth_url': 'http://127.0.0.1:28500/v3',
                    'password': 'secret',
                },
                'identity_api_version': 3,
            }
        }
    }


class _Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    origin = ''
    seen: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.seen.append(('GET', self.path))
        body = json.dumps({'self': self.origin + self.path}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Location', self.origin + '/next')
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self):
        self.seen.append(('DELETE', self.path))
        self.send_response(204)
        self.send_header('Content-Length', '0')
        self.end_headers()


@pytest.fixture
def upstream():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Upstream)
    _Upstream.origin = f'http://127.0.0.1:{server.server_address[1]}'
    _Upstream.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield _Upstream
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(upstream):
    p = cp.Proxy(cp.Config(latency_ms=0))
    origin = p.listen(upstream.origin, 'network')
    p.serve()
    yield p, origin
    p.shutdown()


def _request(origin, method, path):
    host, port = origin.rsplit('/', 1)[1].split(':')
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_forwards_and_rewrites(upstream, proxy):
    p, origin = proxy
    status, headers, body = _request(origin, 'GET', '/v2.0/ports')
    assert status == 200
    assert json.loads(body) == {'self': origin + '/v2.0/ports'}
    assert headers['Location'] == origin + '/next'
    assert _request(origin, 'DELETE', '/v2.0/ports/1')[0] == 204
    assert upstream.seen == [
        ('GET', '/v2.0/ports'),
        ('DELETE', '/v2.0/ports/1'),
    ]
    snap = p.stats.snapshot()
    assert snap['requests'] == {'network': {'DELETE': 1, 'GET': 1}}
    assert set(snap['route_seconds']) == {
        'network GET /v2.0/ports',
        'network DELETE /v2.0/ports/{id}',
    }
    assert snap['service_seconds']['network'] >= 0


def test_injects_503_and_reset_without_forwarding(upstream, proxy):
    p, origin = proxy
    p.config.update({'fault_rate': 1.0, 'fault_kinds': ['503']})
    status, _h, body = _request(origin, 'DELETE', '/v2.0/ports/1')
    assert status == 503 and b'injected' in body
    p.config.update({'fault_kinds': ['reset']})
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        _request(origin, 'DELETE', '/v2.0/ports/1')
    assert upstream.seen == []
    assert p.stats.snapshot()['faults'] == {'network': {'503': 1, 'reset': 1}}


def test_slow_fault_forwards_then_holds(upstream, proxy):
    p, origin = proxy
    p.config.update(
        {'fault_rate': 1.0, 'fault_kinds': ['slow'], 'slow_seconds': 0.05}
    )
    status, _h, _b = _request(origin, 'DELETE', '/v2.0/ports/1')
    assert status == 204
    assert upstream.seen == [('DELETE', '/v2.0/ports/1')]
    assert p.stats.snapshot()['faults'] == {'network': {'slow': 1}}
