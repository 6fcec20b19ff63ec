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

"""What requests and keystoneauth work out at every request, once per
endpoint (osc_cascade.api.remembered): each request gets what the library
itself would have given it, the environment walked once per scheme, host
and port, the catalog once per token and endpoint filter."""

import types

import pytest
import requests
from requests import sessions

from osc_cascade.api import remembered
from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import ADMIN_PROJECT

URLS = (
    'https://nova.example:8774/v2.1/servers?all_tenants=1',
    'https://nova.example:8774/v2.1/servers/abc',
    'http://neutron.example:9696/v2.0/ports',
    'https://internal.example/v3/projects',
    'http://internal.example:8080/v1/AUTH_x',
)


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv('https_proxy', 'http://proxy.example:3128')
    monkeypatch.setenv('http_proxy', 'http://proxy.example:3128')
    monkeypatch.setenv('no_proxy', 'internal.example')
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', '/etc/ca.pem')


def conn_of(session):
    return types.SimpleNamespace(
        session=types.SimpleNamespace(session=session)
    )


def test_each_request_gets_what_requests_gives_it(env):
    plain = requests.Session()
    once = requests.Session()
    remembered.remember(conn_of(once))

    for _ in range(3):
        for url in URLS:
            for proxies in (None, {}, {'no_proxy': 'nova.example'}):
                args = (url, proxies, None, None, None)
                assert once.merge_environment_settings(
                    *args
                ) == plain.merge_environment_settings(*args), (url, proxies)
    # the proxy and CA bundle of the environment were honoured
    settings = once.merge_environment_settings(URLS[0], {}, None, None, None)
    assert settings['proxies']['https'] == 'http://proxy.example:3128'
    assert settings['verify'] == '/etc/ca.pem'
    no_proxy = once.merge_environment_settings(URLS[3], {}, None, None, None)
    assert 'https' not in no_proxy['proxies']


def test_the_environment_is_walked_once_per_endpoint(env, monkeypatch):
    walks = []
    real = sessions.get_environ_proxies

    def counted(url, no_proxy=None):
        walks.append(url)
        return real(url, no_proxy=no_proxy)

    monkeypatch.setattr(sessions, 'get_environ_proxies', counted)
    session = requests.Session()
    remembered.remember(conn_of(session))
    remembered.remember(conn_of(session))  # a second region: no rewrap

    for _ in range(50):
        for url in URLS:
            session.merge_environment_settings(url, {}, None, None, None)

    # nova.example:8774 twice in URLS, one walk: four endpoints
    assert len(walks) == 4
    # each answer its own proxies: a caller's change stays its own
    one = session.merge_environment_settings(URLS[0], {}, None, None, None)
    one['proxies']['https'] = 'http://elsewhere'
    two = session.merge_environment_settings(URLS[0], {}, None, None, None)
    assert two['proxies']['https'] == 'http://proxy.example:3128'


def test_a_setting_that_is_not_a_plain_value_is_read_as_before(env):
    session = requests.Session()
    remembered.remember(conn_of(session))
    cert = ['a.pem', 'b.key']  # a list: not a key

    settings = session.merge_environment_settings(
        URLS[0], {}, None, None, cert
    )

    assert settings['cert'] == cert
    assert settings['proxies']['https'] == 'http://proxy.example:3128'


def test_a_connection_without_an_http_session_is_left_alone():
    remembered.remember(types.SimpleNamespace())
    remembered.remember(conn_of(None))


def test_requests_through_the_sdk_session_still_go_out(conn):
    remembered.remember(conn)

    # the fake cloud answers through requests-mock, behind the wrapper
    assert conn.identity.get_project(ADMIN_PROJECT).name == 'admin'
    assert getattr(conn.session.session, remembered.MARK)


def test_the_endpoint_is_found_once_per_token_and_filter(conn, monkeypatch):
    from keystoneauth1.access import service_catalog

    walks = []
    real = service_catalog.ServiceCatalogV3.normalize_catalog

    def counted(self, *args):
        walks.append(1)
        return real(self, *args)

    monkeypatch.setattr(
        service_catalog.ServiceCatalogV3, 'normalize_catalog', counted
    )
    session = conn.session
    plain = [
        session.get_endpoint(service_type=s, interface='public')
        for s in ('compute', 'network', 'identity')
    ]
    remembered.remember(conn)
    walks.clear()

    for _ in range(20):
        assert [
            session.get_endpoint(service_type=s, interface='public')
            for s in ('compute', 'network', 'identity')
        ] == plain
    assert len(walks) == 3
    # an override is its own answer; a filter that is no key is asked
    assert (
        session.get_endpoint(endpoint_override='http://x.example/v1')
        == 'http://x.example/v1'
    )
    assert (
        session.get_endpoint(service_type='compute', interface=['public'])
        == plain[0]
    )
    # a new token (a new catalog) is asked anew
    session.auth.invalidate()
    session.get_endpoint(service_type='compute', interface='public')
    assert len(walks) == 5


def test_each_region_keeps_its_own_endpoint():
    with FakeCloud() as one:
        two = one.add_region('RegionTwo', ['compute'])
        conn = one.connection()
        remembered.remember(conn)

        def compute(region):
            return conn.session.get_endpoint(
                service_type='compute', interface='public', region_name=region
            )

        for _ in range(3):
            assert compute('RegionOne').startswith(one.endpoints['compute'])
            assert compute('RegionTwo').startswith(two.endpoints['compute'])
