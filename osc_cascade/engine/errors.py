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


class CascadeError(Exception):
    """A workflow refused or failed; the message says why and what is
    left."""


class Interrupted(CascadeError):
    """A run stopped by a signal; ``signum`` says which."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum


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


def describe(
    what: str,
    exc: Exception,
    *,
    needs: str = 'it needs the admin role',
    outcome: str = '',
) -> str:
    """One line for a failed call: ``what`` was being done, the HTTP status
    and the service's own words; ``needs`` says what a 403 means the caller
    lacks, ``outcome`` what the failure left unchanged."""
    code = status_code(exc)
    detail = ' '.join(str(getattr(exc, 'details', None) or exc).split())
    detail = detail or type(exc).__name__
    then = f' {outcome}.' if outcome else ''
    if code == 403:
        return f'{what} was refused (HTTP 403): {needs}.{then} {detail}'
    if code == 401:
        return f'{what} was not authorised (HTTP 401): {detail}'
    so = f', so {outcome[0].lower()}{outcome[1:]}' if outcome else ''
    status = f' (HTTP {code})' if code else ''
    return f'{what} failed{so}{status}: {detail}'
