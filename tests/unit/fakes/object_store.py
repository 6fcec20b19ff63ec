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

"""Swift: accounts, containers and objects, legacy versioning
(``X-Versions-Location``, ``X-History-Location``) and object versioning,
and the bulk middleware's deletes. A container with objects, or with old
versions, is refused with 409.

A container's id here is ``AUTH_<project>/<name>`` (``prefix`` is the
proxy's reseller_prefix, ``AUTH_`` by default): deleting a stack does
not delete the ``OS::Swift::Container`` it made, as the minicloud's Heat
did not when an admin deleted the stack (Heat looked for the container in
the admin's account)."""

from __future__ import annotations

import re
from urllib import parse

from tests.unit.fakes.common import ADMIN_PROJECT, SWIFT, Conflict


def swift_error(status, text):
    return Conflict(status, {'error': text})


class ObjectStore:
    def __init__(
        self,
        services=None,
        *,
        reseller=True,
        bulk_delete=100,
        prefix='AUTH_',
        **kwargs,
    ):
        super().__init__(services, **kwargs)
        #: whether the caller has Swift's reseller admin role
        self.reseller = reseller
        #: the proxy's reseller_prefix: an account is <prefix><project>,
        #: and so is the catalog's endpoint of the caller's own
        self.prefix = prefix
        if prefix != 'AUTH_':
            self.endpoints = {
                **self.endpoints,
                'object-store': f'{SWIFT}/v1/{prefix}{ADMIN_PROJECT}',
            }
        #: Swift's max_deletes_per_request, or None for no bulk middleware
        self.bulk_delete = bulk_delete
        #: the accounts of the bulk deletes, in order
        self.bulk_requests: list[str] = []

    def __enter__(self):
        super().__enter__()
        # every account, not only the caller's (the catalog's)
        self._route('object-store', SWIFT, r'/.*$')
        return self

    def container(
        self,
        project_id,
        name,
        *,
        objects=0,
        versions=None,
        history=None,
        versioned=False,
        created=None,
    ):
        # when the container was created (Swift's X-Timestamp) and last
        # PUT (X-PUT-Timestamp): a new container each call, a new time
        self._created = getattr(self, '_created', 0) + 1
        stamp = created or f'{1795000000 + self._created:.5f}'
        headers = {'X-Timestamp': stamp, 'X-PUT-Timestamp': stamp}
        if versions:
            headers['X-Versions-Location'] = versions
        if history:
            headers['X-History-Location'] = history
        if versioned:
            headers['X-Versions-Enabled'] = 'True'
        return self.add(
            'containers',
            id=f'{self.prefix}{project_id}/{name}',
            project_id=project_id,
            name=name,
            headers=headers,
            objects={f'obj-{i:04d}': 1 for i in range(objects)},
            versions={},
        )

    def put_object(self, container, name, versions=0):
        """An object with ``versions`` old versions: kept in the versions
        container (legacy) or in the container's own version list."""
        legacy = container['headers'].get('X-Versions-Location') or container[
            'headers'
        ].get('X-History-Location')
        for v in range(versions):
            if legacy:
                target = self.get(
                    'containers', f'{container["id"].split("/")[0]}/{legacy}'
                )
                target['objects'][f'{len(name):03x}{name}/{v}'] = 1
            else:
                container['versions'].setdefault(name, []).append(f'v{v}')
        container['objects'][name] = 1

    def _object_store(self, method, path, query, body):
        if path == '/info':
            info = {'swift': {'version': '2.38.3'}}
            if self.bulk_delete:
                info['bulk_delete'] = {
                    'max_deletes_per_request': self.bulk_delete,
                    'max_failed_deletes': 1000,
                }
            return 200, info
        m = re.fullmatch(
            rf'/v1/({re.escape(self.prefix)}[^/]+)/?([^/]*)/?(.*)', path
        )
        if not m:
            return 404, None
        account, container, obj = (parse.unquote(p) for p in m.groups())
        if account != f'{self.prefix}{ADMIN_PROJECT}' and not self.reseller:
            return 403, None
        if not container:
            return self._swift_account(account, method, query)
        found = self.get('containers', f'{account}/{container}')
        if found is None:
            return 404, None
        if obj:
            return self._swift_object(found, obj, method, query)
        return self._swift_container(found, method, query)

    def _swift_account(self, account, method, query):
        if self.flag('bulk-delete') and method in ('DELETE', 'POST'):
            return self._swift_bulk(account)
        names = sorted(
            c['name']
            for c in self.all('containers')
            if c['id'].startswith(account + '/')
        )
        marker = query.get('marker', '')
        return 200, [
            {'name': n, 'count': 0, 'bytes': 0} for n in names if n > marker
        ][: int(query.get('limit', 10000))]

    def _swift_bulk(self, account):
        self.bulk_requests.append(account)
        lines = [
            parse.unquote(x)
            for x in self._request.body.decode().split('\n')
            if x
        ]
        if len(lines) > self.bulk_delete:
            return 413, None
        deleted = not_found = 0
        errors = []
        for line in lines:
            container, _, obj = line.lstrip('/').partition('/')
            found = self.get('containers', f'{account}/{container}')
            if found is None or obj not in found['objects']:
                not_found += 1
                continue
            try:
                self._swift_delete_object(found, obj)
                deleted += 1
            except Conflict as exc:
                errors.append([line, f'{exc.status} Error'])
        return 200, {
            'Number Deleted': deleted,
            'Number Not Found': not_found,
            'Errors': errors,
            'Response Status': '400 Bad Request' if errors else '200 OK',
            'Response Body': '',
        }

    def _swift_container(self, found, method, query):
        headers = found['headers']
        if method == 'HEAD':
            self._request.reply_headers = {
                'X-Container-Object-Count': str(len(found['objects'])),
                **headers,
            }
            return 204, None
        if method == 'POST':
            sent = self._request.headers
            for header, remove in (
                ('X-Versions-Location', 'X-Remove-Versions-Location'),
                ('X-History-Location', 'X-Remove-History-Location'),
            ):
                if sent.get(remove):
                    headers.pop(header, None)
            if sent.get('X-Versions-Enabled', '').lower() == 'false':
                headers.pop('X-Versions-Enabled', None)
            return 204, None
        if method == 'GET' and self.flag('versions'):
            entries = sorted(
                [
                    {'name': o, 'version_id': v, 'is_latest': False}
                    for o, vs in found['versions'].items()
                    for v in vs
                ]
                + [
                    {'name': o, 'version_id': 'latest', 'is_latest': True}
                    for o in found['objects']
                ],
                key=lambda e: (e['name'], e['version_id']),
            )
            after = (query.get('marker', ''), query.get('version_marker', ''))
            return 200, [
                e for e in entries if (e['name'], e['version_id']) > after
            ][:2]
        if method == 'GET':
            marker = query.get('marker', '')
            return 200, [
                {
                    'name': o,
                    'bytes': 1,
                    'hash': 'x',
                    'content_type': 'application/octet-stream',
                    'last_modified': '2026-11-01T00:00:00',
                }
                for o in sorted(found['objects'])
                if o > marker
            ][: int(query.get('limit', 10000))]
        if method == 'DELETE':
            if found['objects']:
                raise swift_error(
                    409,
                    'There was a conflict when trying to '
                    'complete your request.',
                )
            if found['versions'] and any(found['versions'].values()):
                raise swift_error(
                    409, 'Delete all versions before deleting container.'
                )
            self._remove('containers', found['id'])
            return 204, None
        return 405, None

    def _swift_object(self, found, obj, method, query):
        if method == 'HEAD':
            return (200 if obj in found['objects'] else 404), None
        if method != 'DELETE':
            return 405, None
        version = query.get('version-id')
        if version and version != 'latest':
            versions = found['versions'].get(obj, [])
            if version not in versions:
                return 404, None
            versions.remove(version)
            return 204, None
        if obj not in found['objects']:
            return 404, None
        self._swift_delete_object(found, obj)
        return 204, None

    def _swift_delete_object(self, found, obj):
        """versioned_writes: in stack mode the newest old version comes
        back; in history mode the object is copied to the history. An
        object named in the container's ``undeletable`` answers 409."""
        if obj in found.get('undeletable', ()):
            raise swift_error(409, 'Conflict')
        account = found['id'].split('/')[0]
        headers = found['headers']
        stack = headers.get('X-Versions-Location')
        history = headers.get('X-History-Location')
        if history:
            target = self.get('containers', f'{account}/{history}')
            target['objects'][f'{len(obj):03x}{obj}/deleted'] = 1
        del found['objects'][obj]
        if stack:
            target = self.get('containers', f'{account}/{stack}')
            old = sorted(
                o
                for o in target['objects']
                if o.startswith(f'{len(obj):03x}{obj}/')
            )
            if old:
                del target['objects'][old[-1]]
                found['objects'][obj] = 1
