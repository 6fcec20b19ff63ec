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

"""The engine's errors, and the one way an API error becomes one line.

The engine and the workflows raise these; the commands turn them into
osc-lib's ``CommandError`` (``v1.common.engine_errors``).
"""

from __future__ import annotations

import contextlib
import http
import json
import re
from typing import Any


class CascadeError(Exception):
    """A workflow refused or failed; the message says why and what is
    left."""


class Interrupted(CascadeError):
    """A run stopped by a signal; ``signum`` says which."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum


class Kept(Exception):
    """A delete that the kind declined when it came to it: what it would
    delete is no longer what the plan said (another project owns it now,
    or it is on offer to one). The resource is kept, the message says why
    in one line, and its project is not deleted
    (``ResourceKind.recheck``)."""


class Stuck(Exception):
    """A delete that the service refused from a state that waiting does
    not change (a volume ``error_deleting``, ``attaching``): not retried,
    and what waits for it is skipped. The message is the kind's one line
    (``ResourceKind.stuck_reason``): its state, since when, what the
    service needs and what would force it."""


class PlanError(CascadeError):
    """The resources found cannot be put in a safe deletion order."""


def status_code(exc: Exception) -> int | None:
    """The HTTP status of an SDK or keystoneauth error, if it has one."""
    return getattr(exc, 'status_code', None) or getattr(
        exc, 'http_status', None
    )


def one_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return ' '.join(text.split())


#: what the SDK and keystoneauth put around the service's words: the
#: status and URL in front (``ForbiddenException: 403: Client Error for
#: url: <url>, ``), the status and request ID behind (``(HTTP 403)
#: (Request-ID: req-...)``), HTML tags
_WRAPPING = (
    re.compile(r'^\w+: \d{3}: (Client|Server) Error for url: \S+?(, |$)'),
    re.compile(r'\s*\(HTTP \d{3}\)'),
    re.compile(r'\s*\(Request-ID: [^)]*\)'),
)
#: an HTML tag: a line break between the parts of a page
_TAG = re.compile(r'<[^>]+>')


#: the reason phrases of HTTP statuses: a part that says only one of them
#: (``403 Forbidden``) repeats the status
_REASONS = {s.phrase.lower() for s in http.HTTPStatus} | {
    f'{s.value} {s.phrase}'.lower() for s in http.HTTPStatus
}


def _messages(body: Any) -> list[str]:
    """The ``message`` and ``detail`` strings of a JSON error body."""
    if isinstance(body, dict):
        found = [
            v
            for k, v in body.items()
            if k in ('message', 'detail', 'details', 'faultstring')
            and isinstance(v, str)
        ]
        for v in body.values():
            if isinstance(v, dict | list):
                found.extend(_messages(v))
        return found
    if isinstance(body, list):
        return [m for item in body for m in _messages(item)]
    return []


def service_words(exc: Exception) -> str:
    """What the service said, once, on one line: without the status, URL
    and request ID around it (a JSON body's messages, not the JSON), and
    without a part that repeats another (the same message in two fields
    of the body, a page's title and heading) or only names the status
    (``403 Forbidden``)."""
    text = str(getattr(exc, 'details', None) or exc)
    for pattern in _WRAPPING:
        text = pattern.sub(' ', text)
    text = _TAG.sub('\n', text)
    with contextlib.suppress(ValueError):
        text = '\n'.join(_messages(json.loads(text))) or text
    seen: set[str] = set()
    sentences = []
    for sentence in re.split(r'\n|(?<=[.!])\s+', text):
        kept = []
        # the SDK joins the lines of an HTML page with ': '
        for part in sentence.split(': '):
            part = ' '.join(part.split()).strip(' :,')
            key = part.rstrip('.').lower()
            if not part or key in _REASONS or key in seen:
                continue
            seen.add(key)
            kept.append(part)
        if kept:
            sentences.append(': '.join(kept))
    return ' '.join(sentences)


def describe(
    what: str,
    exc: Exception,
    *,
    needs: str = 'it needs the admin role',
    outcome: str = '',
) -> str:
    """One line for a failed call: ``what`` was being done, the HTTP status
    and the service's own words, once; ``needs`` says what a 403 means the
    caller lacks, ``outcome`` what the failure left unchanged."""
    code = status_code(exc)
    detail = service_words(exc) or type(exc).__name__
    then = f' {outcome}.' if outcome else ''
    if code == 403:
        return f'{what} was refused (HTTP 403): {needs}.{then} {detail}'
    if code == 401:
        return f'{what} was not authorised (HTTP 401): {detail}'
    so = f', so {outcome[0].lower()}{outcome[1:]}' if outcome else ''
    status = f' (HTTP {code})' if code else ''
    return f'{what} failed{so}{status}: {detail}'
