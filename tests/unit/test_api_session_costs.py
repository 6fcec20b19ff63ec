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

"""api.session_costs: what is worked out once answers as requests and
keystoneauth answer on every call."""

import datetime
import itertools
from unittest import mock

from keystoneauth1 import access
from keystoneauth1 import fixture as ks_fixture
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pytest
import requests
import requests_mock

from osc_cascade.api import session_costs

URLS = (
    'https://compute.example.org:8774/v2.1/servers/1',
    'https://compute.example.org:8774/v2.1/servers/2?all_tenants=1',
    'http://network.example.org:9696/v2.0/ports/3',
    'https://internal.example.org/volume/v3/p/volumes/4',
    'https://10.0.0.5:9292/v2/images/5',
    'http://localhost:28000/identity/v3/auth/tokens',
)
#: clouds.yaml's verify (True, False, a CA file) and cert as keystoneauth
#: passes them on each call, with a call's own proxies or none
CALL_SETTINGS = list(
    itertools.product(
        (None, {'https': 'http://call-proxy:3128'}),
        (False, None),
        (True, False, '/etc/ssl/cloud-ca.pem', None),
        (None, '/etc/ssl/client.pem', ('/etc/ssl/c.pem', '/etc/ssl/c.key')),
    )
)
ENVIRONMENTS = (
    {},
    {
        'HTTPS_PROXY': 'http://proxy.example.org:3128',
        'http_proxy': 'http://plain-proxy:8080',
        'NO_PROXY': 'internal.example.org,10.0.0.0/8,localhost',
        'REQUESTS_CA_BUNDLE': '/etc/ssl/env-bundle.pem',
    },
    {
        'all_proxy': 'socks5://socks:1080',
        'no_proxy': '*',
        'CURL_CA_BUNDLE': '/etc/ssl/curl.pem',
    },
)


@pytest.mark.parametrize('environment', ENVIRONMENTS)
def test_environment_settings_are_the_same(monkeypatch, environment):
    for name in (
        'HTTPS_PROXY',
        'HTTP_PROXY',
        'ALL_PROXY',
        'NO_PROXY',
        'https_proxy',
        'http_proxy',
        'all_proxy',
        'no_proxy',
        'REQUESTS_CA_BUNDLE',
        'CURL_CA_BUNDLE',
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    plain = requests.Session()
    once = requests.Session()
    for session in (plain, once):
        session.proxies = {'http': 'http://session-proxy:1'}
    session_costs.resolve_environment_once(once)
    # twice: the second answer comes from what was kept
    for _ in range(2):
        for url, (proxies, stream, verify, cert) in itertools.product(
            URLS, CALL_SETTINGS
        ):
            expected = plain.merge_environment_settings(
                url, dict(proxies or {}), stream, verify, cert
            )
            assert (
                once.merge_environment_settings(
                    url, dict(proxies or {}), stream, verify, cert
                )
                == expected
            ), (url, proxies, stream, verify, cert)


def test_environment_settings_follow_the_session(monkeypatch):
    """The session's own settings are part of what is kept per: changed,
    they are honoured (requests merges them in)."""
    monkeypatch.setenv('HTTPS_PROXY', 'http://proxy.example.org:3128')
    session = requests.Session()
    session_costs.resolve_environment_once(session)
    url = URLS[0]
    first = session.merge_environment_settings(url, {}, None, True, None)
    assert first['proxies'] == {'https': 'http://proxy.example.org:3128'}
    first['proxies']['https'] = 'changed by the caller'
    session.trust_env = False
    session.verify = '/etc/ssl/other.pem'
    second = session.merge_environment_settings(url, {}, None, None, None)
    assert second == {
        'proxies': {},
        'stream': False,
        'verify': '/etc/ssl/other.pem',
        'cert': None,
    }
    session.trust_env = True
    again = session.merge_environment_settings(url, {}, None, True, None)
    assert again['proxies'] == {'https': 'http://proxy.example.org:3128'}


def test_unhashable_settings_are_asked_every_time():
    session = requests.Session()
    asked = mock.Mock(return_value={'proxies': {}})
    session.merge_environment_settings = asked
    session_costs.resolve_environment_once(session)
    session_costs.resolve_environment_once(session)  # made so once only
    for _ in range(2):
        # a list inside a proxies value: not hashable
        session.merge_environment_settings(
            URLS[0], {'https': ['x']}, None, True, None
        )
    assert asked.call_count == 2
    for _ in range(2):
        session.merge_environment_settings(URLS[0], {}, None, True, None)
    assert asked.call_count == 3


def test_a_call_through_keystoneauth_goes_through_the_same_proxy(
    monkeypatch,
):
    monkeypatch.setenv('HTTPS_PROXY', 'http://proxy.example.org:3128')
    monkeypatch.setenv('NO_PROXY', 'internal.example.org')
    sent = []
    for once in (False, True):
        session = ks_session.Session(verify='/etc/ssl/cloud-ca.pem')
        if once:
            session_costs.resolve_environment_once(session.session)
        with requests_mock.Mocker() as mocker:
            mocker.get(requests_mock.ANY, json={})
            for url in (URLS[0], URLS[3], URLS[0]):
                session.get(url, authenticated=False)
        sent.append([(r.proxies, r.verify) for r in mocker.request_history])
    assert sent[0] == sent[1]
    assert [p.get('https') for p, _ in sent[1]] == [
        'http://proxy.example.org:3128',
        None,
        'http://proxy.example.org:3128',
    ]


def _plugin(expires: datetime.datetime) -> v3.Token:
    token = ks_fixture.V3Token(expires=expires)
    plugin = v3.Token('http://keystone.example.org/v3', 'token')
    plugin.auth_ref = access.create(body=token, auth_token='tok')
    return plugin


@pytest.mark.parametrize('minutes', (-5, 1, 2.1, 3, 60))
def test_expiry_answers_as_keystoneauth(minutes):
    now = datetime.datetime.now(datetime.UTC)
    expires = now + datetime.timedelta(minutes=minutes)
    plain = _plugin(expires)
    once = _plugin(expires)
    session_costs.parse_expiry_once(once)
    for _ in range(2):
        assert once._needs_reauthenticate() == plain._needs_reauthenticate()
    plain.reauthenticate = once.reauthenticate = False
    assert once._needs_reauthenticate() is plain._needs_reauthenticate()


def test_a_new_token_is_parsed_again():
    now = datetime.datetime.now(datetime.UTC)
    plugin = _plugin(now + datetime.timedelta(hours=1))
    session_costs.parse_expiry_once(plugin)
    assert plugin._needs_reauthenticate() is False
    # re-authenticated: a token that expires within the minimum life
    plugin.auth_ref = _plugin(now + datetime.timedelta(seconds=30)).auth_ref
    assert plugin._needs_reauthenticate() is True
    plugin.auth_ref = None
    assert plugin._needs_reauthenticate() is True


def test_expiry_left_alone_for_a_plugin_of_its_own_kind():
    class Own(v3.Token):
        def _needs_reauthenticate(self):
            return 'its own'

    plugin = Own('http://keystone.example.org/v3', 'token')
    session_costs.parse_expiry_once(plugin)
    assert plugin._needs_reauthenticate() == 'its own'
