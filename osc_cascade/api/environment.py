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

"""The environment's HTTP settings read once per endpoint, not per request.

requests reads the proxy settings (``*_proxy``, ``no_proxy``) and the CA
bundle (``REQUESTS_CA_BUNDLE``) from ``os.environ`` at every request:
twice a walk of the whole environment, decoding each variable. In a
domain's cascade (benchmarks.profile_run ``--domain 50``) that was a
quarter of the client's profiled CPU. What it reads depends only on the
environment, which a run does not change, and on the URL's scheme, host
and port: ``remember`` keeps requests' own answer for each of those (and
for the request's own settings), so every request gets what requests
would have given it.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib import parse

#: the attribute that marks a session whose answers are remembered
MARK = '_osc_cascade_environment'


def remember(conn: Any) -> None:
    """Remember requests' environment settings per endpoint on the HTTP
    session under ``conn`` (once per session: the regions' connections
    share it)."""
    session = getattr(getattr(conn, 'session', None), 'session', None)
    merge = getattr(session, 'merge_environment_settings', None)
    if merge is None or getattr(session, MARK, False):
        return
    setattr(session, MARK, True)
    session.merge_environment_settings = _Remembered(merge)


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
