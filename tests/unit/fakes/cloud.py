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

"""The fake cloud's core, behind requests-mock: it routes each request to
its service's handler, keeps the resources in memory, and logs what
changed.

A fake service is a mixin, in a module of its own, with a method
``_<service_type>(method, path, query, body)`` that returns ``(status,
payload)`` or raises Conflict or Redirect, and the state helpers a test
builds with; clouds.py puts the mixins and this core together. What only
a real service can decide is proved on the minicloud (tests/functional).
Every mutating request is logged in ``changes`` as ``(METHOD, path)``."""

from __future__ import annotations

import datetime
import email.utils
import json
import re
import threading
from urllib import parse

import requests
import requests_mock

from tests.unit.fakes.common import Conflict, Redirect, new_id


class Cloud:
    #: service type -> URL, of every service the cloud can have
    endpoints: dict[str, str]

    def __init__(self, services=None, *, delete_polls: int = 1):
        self.services = tuple(services or self.endpoints)
        #: GETs a resource with an asynchronous delete answers before 404
        self.delete_polls = delete_polls
        self.db: dict[str, dict[str, dict]] = {}
        self.changes: list[tuple[str, str]] = []
        self.requests: list[tuple[str, str]] = []
        self._deleting: dict[tuple[str, str], int] = {}
        #: (method, regex on path) -> list of status codes to answer first
        self.faults: list[tuple[str, str, int]] = []
        self.forbidden: set[str] = set()
        #: (method, regex on path): the first such request is carried out,
        #: then its answer is lost (a read timeout), once each
        self.lost_answers: list[tuple[str, str]] = []
        self.mocker = requests_mock.Mocker()
        self._request = threading.local()
        #: the cloud's clock: one second on at every request, so that what
        #: a request creates is younger than any answer before it
        self.now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
        self._clock_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self):
        self.mocker.__enter__()
        self.mocker.register_uri(
            requests_mock.ANY,
            requests_mock.ANY,
            status_code=599,
            text='unexpected request',
        )
        for service in self.services:
            self._route(service, self.endpoints[service])
        return self

    def _route(self, service, base, rest=r'(/.*)?$'):
        """Answer the requests to ``base`` and then ``rest`` (a regex) with
        the handler of ``service``."""
        self.mocker.register_uri(
            requests_mock.ANY,
            re.compile(re.escape(base) + rest),
            content=self._dispatch(service, base),
        )

    def __exit__(self, *exc):
        return self.mocker.__exit__(*exc)

    # -- state -------------------------------------------------------------

    def add(self, collection: str, **obj) -> dict:
        obj.setdefault('id', new_id())
        obj.setdefault('created_at', self.now.strftime('%Y-%m-%dT%H:%M:%S'))
        self.db.setdefault(collection, {})[obj['id']] = obj
        return obj

    def all(self, collection: str) -> list[dict]:
        return list(self.db.get(collection, {}).values())

    def get(self, collection: str, id_: str) -> dict | None:
        return self.db.get(collection, {}).get(id_)

    def exists(self, collection: str, id_: str) -> bool:
        return id_ in self.db.get(collection, {})

    def owned_by(self, project_id: str) -> list[tuple[str, str]]:
        out = []
        for coll, items in self.db.items():
            for obj in items.values():
                if _owner(obj) == project_id and coll != 'projects':
                    out.append((coll, obj['id']))
        return sorted(out)

    def deleted_order(self) -> list[str]:
        """Paths of DELETE requests, in order."""
        return [p.split('?')[0] for m, p in self.changes if m == 'DELETE']

    def index_of_delete(self, collection_path: str, id_: str) -> int:
        for i, path in enumerate(self.deleted_order()):
            if path.endswith(f'{collection_path}/{id_}'):
                return i
        raise AssertionError(f'{collection_path}/{id_} was not deleted')

    def _remove(self, collection: str, id_: str) -> None:
        self.db.get(collection, {}).pop(id_, None)

    # -- dispatch ----------------------------------------------------------

    def _dispatch(self, service, base, encode=None):
        """The requests_mock callback of ``service`` at ``base``;
        ``encode``: what makes a handler's payload the answer's content
        (JSON bytes; the simulated cloud merges its shards' payloads
        before it encodes them once)."""
        handler = getattr(self, '_' + service.replace('-', '_'))
        encode = encode or _json_bytes

        def respond(request, context):
            with self._clock_lock:
                self.now += datetime.timedelta(seconds=1)
                context.headers['Date'] = email.utils.format_datetime(
                    self.now, usegmt=True
                )
            self._request.headers = request.headers
            self._request.body = request.body
            self._request.query = parse.parse_qs(
                parse.urlparse(request.url).query, keep_blank_values=True
            )
            self._request.reply_headers = {}
            path = request.path_url.split('?')[0]
            base_path = parse.urlparse(base).path
            path = (
                path[len(base_path) :] if path.startswith(base_path) else path
            )
            query = {
                k: v[-1]
                for k, v in parse.parse_qs(
                    parse.urlparse(request.url).query
                ).items()
            }
            self.requests.append((request.method, request.path_url))
            if request.method in ('POST', 'PUT', 'PATCH', 'DELETE'):
                self.changes.append((request.method, request.path_url))
            lost = next(
                (
                    i
                    for i, (method, pattern) in enumerate(self.lost_answers)
                    if method == request.method
                    and re.search(pattern, request.path_url)
                ),
                None,
            )
            if lost is not None:  # carried out, whatever the faults say
                del self.lost_answers[lost]
            for i, (method, pattern, status) in enumerate(
                [] if lost is not None else self.faults
            ):
                if method == request.method and re.search(
                    pattern, request.path_url
                ):
                    del self.faults[i]
                    context.status_code = status
                    return json.dumps(
                        {
                            'error': {
                                'message': 'injected fault',
                                'code': status,
                            }
                        }
                    ).encode()
            # a list asked for objects by id reads them: a policy that
            # forbids reading one refuses it too
            read = [request.path_url] + [
                f'{request.path_url.split("?")[0].rstrip("/")}/{id_}'
                for id_ in parse.parse_qs(
                    parse.urlparse(request.url).query
                ).get('id', [])
                if request.method == 'GET'
            ]
            for pattern in self.forbidden:
                if any(re.search(pattern, path) for path in read):
                    context.status_code = 403
                    return json.dumps(
                        {
                            'error': {
                                'message': 'Policy does not allow this',
                                'code': 403,
                            }
                        }
                    ).encode()
            # Swift's bulk delete sends a list of paths, not JSON
            text = request.headers.get('Content-Type') == 'text/plain'
            body = request.json() if request.body and not text else None
            try:
                status, payload = handler(request.method, path, query, body)
            except Conflict as exc:
                status, payload = exc.status, exc.body
            except Redirect as redirect:
                context.status_code = 302
                context.headers['Location'] = redirect.location
                return b''
            if lost is not None:
                raise requests.exceptions.ReadTimeout('answer lost')
            context.status_code = status
            context.headers.update(self._request.reply_headers)
            if payload is None:
                return b''
            context.headers['Content-Type'] = 'application/json'
            return encode(payload)

        return respond

    def header(self, name):
        """A header of the request being answered."""
        return self._request.headers.get(name)

    def flag(self, name):
        """Whether the request's query has ``name``, even with no value
        (``?bulk-delete``), which the handlers' ``query`` drops."""
        return name in self._request.query

    def _microversion(self, service) -> tuple[int, int] | None:
        """The microversion of ``service`` the request asks for."""
        value = self.header('OpenStack-API-Version') or ''
        m = re.fullmatch(rf'{service} (\d+)\.(\d+)', value.strip())
        return (int(m.group(1)), int(m.group(2))) if m else None

    def _async_get(self, collection, id_, status_while_deleting):
        """GET of a resource whose delete is asynchronous."""
        obj = self.get(collection, id_)
        if obj is None:
            return None
        key = (collection, id_)
        if key in self._deleting:
            if self._deleting[key] <= 0:
                self._finish_delete(collection, id_)
                return None
            self._deleting[key] -= 1
            obj['status'] = status_while_deleting
        return obj

    def _async_list(self, collection, status_while_deleting):
        """A list counts as one poll of each resource being deleted."""
        listed = (
            self._async_get(collection, obj['id'], status_while_deleting)
            for obj in list(self.all(collection))
        )
        return [obj for obj in listed if obj is not None]

    def _start_delete(self, collection, id_):
        self._deleting[(collection, id_)] = self.delete_polls

    def _finish_delete(self, collection, id_):
        self._deleting.pop((collection, id_), None)
        self._remove(collection, id_)


def _owner(obj: dict) -> str | None:
    for key in (
        'project_id',
        'tenant_id',
        'owner',
        'os-vol-tenant-attr:tenant_id',
        'os-extended-snapshot-attributes:project_id',
        'os-backup-project-attr:project_id',
    ):
        if obj.get(key):
            return obj[key]
    return None


def _json_bytes(payload) -> bytes:
    return json.dumps(payload).encode()
