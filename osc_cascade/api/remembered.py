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

"""What keystoneauth and requests work out again at every request, though
a run does not change it, worked out once per session and endpoint.

- **The environment's HTTP settings.** requests reads the proxy settings
  (``*_proxy``, ``no_proxy``) and the CA bundle (``REQUESTS_CA_BUNDLE``)
  from ``os.environ`` at every request: twice a walk of the whole
  environment, decoding each variable. What it reads depends only on the
  environment and on the URL's scheme, host and port.
- **The service's endpoint.** keystoneauth finds a request's endpoint in
  the token's catalog at every request the SDK makes without an endpoint
  override, deep-copying the whole catalog each time (``normalize_catalog``;
  with two regions, twice the catalog). What it finds depends only on the
  token (its catalog) and on the request's endpoint filter.

In a domain's cascade (benchmarks.profile_run ``--domain 50``, two regions)
these were 27 % and 11 % of the client's profiled CPU. ``remember`` keeps
the library's own answer for each of those keys, so every request gets
what it would have been given; a new token (a new catalog) is asked anew.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib import parse

#: the attribute that marks a session whose answers are remembered
MARK = '_osc_cascade_environment'


def remember(conn: Any) -> None:
    """Remember requests' environment settings and keystoneauth's
    endpoints on the sessions under ``conn`` (once per session: the
    regions' connections share them)."""
    ks_session = getattr(conn, 'session', None)
    session = getattr(ks_session, 'session', None)
    merge = getattr(session, 'merge_environment_settings', None)
    if merge is not None and not getattr(session, MARK, False):
        setattr(session, MARK, True)
        session.merge_environment_settings = _Remembered(merge)
    get_endpoint = getattr(ks_session, 'get_endpoint', None)
    if get_endpoint is not None and not getattr(ks_session, MARK, False):
        setattr(ks_session, MARK, True)
        ks_session.get_endpoint = _Endpoints(ks_session, get_endpoint)


def _frozen(value: Any) -> Any:
    """``value`` as a key (lists as tuples, dicts as sorted items)."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    hash(value)  # TypeError: not a key
    return value


class _Endpoints:
    """keystoneauth's ``Session.get_endpoint``, its answer kept per auth
    plugin, token and endpoint filter."""

    def __init__(self, session: Any, get_endpoint: Any):
        self.session = session
        self.get_endpoint = get_endpoint
        self.lock = threading.Lock()
        #: key -> (the token's access it was found in, the endpoint)
        self.answers: dict[tuple, tuple[Any, Any]] = {}

    def __call__(self, auth: Any = None, **kwargs: Any) -> Any:
        plugin = auth or self.session.auth
        access = getattr(plugin, 'auth_ref', None)
        try:
            key = (id(plugin), _frozen(kwargs))
        except TypeError:
            return self.get_endpoint(auth, **kwargs)
        if access is not None and not kwargs.get('endpoint_override'):
            with self.lock:
                kept = self.answers.get(key)
            if kept is not None and kept[0] is access:
                return kept[1]
        endpoint = self.get_endpoint(auth, **kwargs)
        # the token it was found in (the first call may have made it)
        access = getattr(plugin, 'auth_ref', None)
        if access is not None and endpoint:
            with self.lock:
                self.answers[key] = (access, endpoint)
        return endpoint


class _Remembered:
    def __init__(self, merge: Any):
        self.merge = merge
        self.lock = threading.Lock()
        self.answers: dict[tuple, dict[str, Any]] = {}

    def __call__(
        self, url: str, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> dict[str, Any]:
        split = parse.urlsplit(url)
        try:
            key = (
                split.scheme,
                split.netloc,
                None if proxies is None else tuple(sorted(proxies.items())),
                stream,
                verify,
                cert,
            )
            hash(key)
        except TypeError:  # a setting that is not a plain value
            return self.merge(url, proxies, stream, verify, cert)
        with self.lock:
            answer = self.answers.get(key)
        if answer is None:
            answer = self.merge(
                url,
                None if proxies is None else dict(proxies),
                stream,
                verify,
                cert,
            )
            with self.lock:
                self.answers[key] = answer
        # each request its own proxies (requests may add to them)
        proxies = answer['proxies']
        return {
            **answer,
            'proxies': None if proxies is None else dict(proxies),
        }
