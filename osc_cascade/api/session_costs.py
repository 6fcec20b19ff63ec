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

"""What the HTTP stack works out again on every call, worked out once per
run, with the same answers.

- ``requests`` reads the proxy settings (``HTTPS_PROXY``, ``NO_PROXY``,
  ...) and the CA bundle (``REQUESTS_CA_BUNDLE``) from the environment on
  every request (``Session.merge_environment_settings``): 13 % of the
  client's CPU in a cascade of 10,000 resources. Its answer depends only
  on the URL's scheme and host, on the call's own settings (clouds.yaml's
  verify and cert, as keystoneauth passes them) and on the session's;
  it is kept per those, for the run (the environment does not change
  during one).
- keystoneauth parses the token's expiry date again each time it asks
  whether the token expires soon (twice a call and more): the parsed date
  is kept per token, and the comparison with the clock is the same one,
  made on every call as before.

And its pools sized to the calls a run makes at once (``size_pools``).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib import parse

from keystoneauth1 import _utils as ks_utils
from keystoneauth1.identity import base as ks_identity
import requests

#: marks a session (requests') or auth plugin already made so
_MARK = '_osc_cascade_once'


def _frozen(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    if isinstance(value, list):
        return tuple(value)
    return value


def resolve_environment_once(session: Any) -> None:
    """Keep ``session``'s (a ``requests.Session``) merged environment
    settings per scheme and host and per the call's and the session's own
    settings; anything unhashable is asked of ``requests`` as before."""
    if getattr(session, _MARK, False) or not hasattr(
        session, 'merge_environment_settings'
    ):
        return
    original = session.merge_environment_settings
    cache: dict[Any, dict[str, Any]] = {}
    lock = threading.Lock()

    def merge_environment_settings(
        url: str, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> dict[str, Any]:
        try:
            parts = parse.urlsplit(url)
            key = (
                parts.scheme,
                parts.netloc,
                _frozen(proxies),
                stream,
                _frozen(verify),
                _frozen(cert),
                _frozen(session.proxies),
                session.stream,
                _frozen(session.verify),
                _frozen(session.cert),
                session.trust_env,
            )
            hash(key)
        except (TypeError, ValueError):
            return original(url, proxies, stream, verify, cert)
        settings = cache.get(key)
        if settings is None:
            settings = original(url, proxies, stream, verify, cert)
            with lock:
                cache[key] = settings
        # the caller's own copy: requests may change its proxies
        settings = dict(settings)
        if isinstance(settings.get('proxies'), dict):
            settings['proxies'] = dict(settings['proxies'])
        return settings

    session.merge_environment_settings = merge_environment_settings
    setattr(session, _MARK, True)


def parse_expiry_once(plugin: Any) -> None:
    """Keep the parsed expiry of ``plugin``'s token (per token: a new one
    is parsed once again) for keystoneauth's "re-authenticate?" check.
    Only a plugin that checks as keystoneauth's identity plugins do."""
    if getattr(plugin, _MARK, False) or (
        getattr(type(plugin), '_needs_reauthenticate', None)
        is not ks_identity.BaseIdentityPlugin._needs_reauthenticate
    ):
        return
    parsed: list[Any] = [None, None]  # [token, its normalised expiry]

    def _needs_reauthenticate() -> bool:
        ref = plugin.auth_ref
        if not ref:
            return True
        if not plugin.reauthenticate:
            return False
        if parsed[0] is not ref:
            expires = ref.expires
            parsed[:] = [
                ref,
                None if expires is None else ks_utils.normalize_time(expires),
            ]
        expires = parsed[1]
        if expires is None:
            return False
        # AccessInfo.will_expire_soon's comparison, on every call
        soon = ks_utils.from_utcnow(seconds=plugin.MIN_TOKEN_LIFE_SECONDS)
        return bool(expires < soon)

    plugin._needs_reauthenticate = _needs_reauthenticate
    setattr(plugin, _MARK, True)


def size_pools(session: Any, size: int) -> None:
    """Let ``session`` (a ``requests.Session``) keep ``size`` connections
    open to a host: requests' pools keep 10, and each call beyond them
    opens a connection of its own and drops it after ("Connection pool is
    full, discarding connection"), a new TCP (and TLS) handshake per
    call."""
    adapters = getattr(session, 'adapters', None)
    if not isinstance(adapters, dict):
        return
    for prefix, adapter in list(adapters.items()):
        if (
            isinstance(adapter, requests.adapters.HTTPAdapter)
            and adapter._pool_maxsize < size
        ):
            # the same class: keystoneauth's sets TCP keepalive options
            session.mount(
                prefix,
                type(adapter)(
                    pool_connections=adapter._pool_connections,
                    pool_maxsize=size,
                    max_retries=adapter.max_retries,
                    pool_block=adapter._pool_block,
                ),
            )


def once_per_run(conn: Any) -> None:
    """Both of the above on ``conn``'s keystoneauth session and plugin."""
    ks_session = getattr(conn, 'session', None)
    resolve_environment_once(getattr(ks_session, 'session', None))
    parse_expiry_once(getattr(ks_session, 'auth', None))
