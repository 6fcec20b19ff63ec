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

"""Keystone: the admin's token and catalog, projects and their hierarchy,
domains, role assignments and application credentials.

Unified limits: registered limits (``registered_limits``) and a project's
own limits (``limits``). Like Keystone, a list is cut at a ``list_limit`` (per collection, in
``list_limits``: none by default) and then says ``"truncated": true``, also
when it holds exactly the limit (Keystone's SQL driver cannot tell); the
collections in ``pages`` are paged as a newer Keystone pages them. A test
can also keep projects out of every listing (``unlisted``: what a token
scoped to another domain does not see) and run a hook right after a
project listing is answered (``after_project_listing``).

A token asked with ``system_scope: all`` is the admin's on the system
(``SYSTEM_TOKEN``, with the roles of ``system_roles``, admin as Keystone's
bootstrap gives it); with no role there, Keystone refuses it (401)."""

from __future__ import annotations

import json
import re

from keystoneauth1 import fixture as ks_fixture
import openstack.connection

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    ADMIN_USER,
    AUTH_URL,
    matches,
)

#: the admin's token scoped to the system
SYSTEM_TOKEN = 'fake-system-token'


class Identity:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: collection -> Keystone's list_limit for it
        self.list_limits: dict[str, int] = {}
        #: collections listed page by page (``limit`` and ``marker``, as
        #: the minicloud's Keystone 30.0.0 does); none: as older Keystones
        self.pages: set[str] = set()
        #: the largest page Keystone gives (its ``max_db_limit``)
        self.max_db_limit = 1000
        #: projects that no listing shows (a GET by ID still does)
        self.unlisted: set[str] = set()
        #: called once each, right after a project listing is answered
        self.after_project_listing: list = []
        #: the catalog's region of this cloud's endpoints
        self.region = 'RegionOne'
        #: the clouds of the catalog's other regions (``add_region``)
        self.other_regions: list = []
        #: the admin's roles on the system (none: Keystone refuses it a
        #: system-scoped token)
        self.system_roles = ['admin', 'member', 'reader']
        self.add(
            'projects',
            id=ADMIN_PROJECT,
            name='admin',
            domain_id='default',
            enabled=True,
            parent_id='default',
            is_domain=False,
            options={},
        )

    def __enter__(self):
        super().__enter__()
        self._answer_tokens()
        return self

    def _answer_tokens(self):
        self.mocker.post(AUTH_URL + '/auth/tokens', json=self._issue_admins)

    def _issue_admins(self, request, context):
        if 'system' in (json.loads(request.body)['auth'].get('scope') or {}):
            return self.system_token(context)
        context.headers['X-Subject-Token'] = 'fake-token'
        return self.token()

    def system_token(self, context):
        """The admin's token on the system, or Keystone's refusal."""
        if not self.system_roles:
            context.status_code = 401
            return {
                'error': {
                    'code': 401,
                    'title': 'Unauthorized',
                    'message': 'The request you have made requires '
                    'authentication.',
                }
            }
        tok = self.token()
        body = tok['token']
        body.pop('project', None)
        body['system'] = {'all': True}
        body['roles'] = [
            {'id': f'role-{r}', 'name': r} for r in self.system_roles
        ]
        context.headers['X-Subject-Token'] = SYSTEM_TOKEN
        return tok

    def add_region(self, name, services, *, shared=()):
        """Another region in the catalog, where ``services`` have their
        own endpoints (``http://<name>.neutron.test``) and their own
        resources, and the ``shared`` services the same URL as here (one
        Glance for both): a cloud of this class, which answers the
        requests to its endpoints; call it before the first connection."""
        other = type(self)(services)
        other.region = name
        other.mocker = self.mocker
        other.endpoints = {
            service: self.endpoints[service].replace(
                '://', f'://{name.lower()}.', 1
            )
            for service in services
        }
        other.endpoints.update(
            {service: self.endpoints[service] for service in shared}
        )
        other.services = tuple(other.endpoints)
        for service in services:
            other._route(service, other.endpoints[service])
        self.other_regions.append(other)
        self._answer_tokens()
        return other

    def token(self):
        tok = ks_fixture.V3Token(
            project_id=ADMIN_PROJECT,
            project_name='admin',
            user_id=ADMIN_USER,
            user_name='admin',
            project_domain_id='default',
            user_domain_id='default',
        )
        tok.add_role(name='admin')
        entries = {}
        for cloud in (self, *self.other_regions):
            for service in cloud.services:
                if service not in entries:
                    entries[service] = tok.add_service(service)
                entries[service].add_endpoint(
                    interface='public',
                    url=cloud.endpoints[service],
                    region=cloud.region,
                )
        return tok

    def connection(self, **config) -> openstack.connection.Connection:
        """An admin's connection; ``config``: more of clouds.yaml's (a
        service's default microversion)."""
        return openstack.connection.Connection(
            auth_url=AUTH_URL,
            username='admin',
            password='secret',
            project_name='admin',
            user_domain_id='default',
            project_domain_id='default',
            region_name='RegionOne',
            identity_api_version='3',
            **config,
        )

    @staticmethod
    def cli_auth_args():
        return [
            '--os-auth-url',
            AUTH_URL,
            '--os-username',
            'admin',
            '--os-password',
            'secret',
            '--os-project-name',
            'admin',
            '--os-user-domain-id',
            'default',
            '--os-project-domain-id',
            'default',
            '--os-region-name',
            'RegionOne',
            '--os-identity-api-version',
            '3',
        ]

    def _listing(self, collection, items, query=None):
        """A list as Keystone answers it, cut at the collection's limit;
        where it pages (``pages``), ordered by ID, from the ``marker``, cut
        at the ``limit`` asked (else the list_limit), the next page
        linked."""
        answer = {collection: items, 'links': {}}
        limit = self.list_limits.get(collection)
        paging = collection in self.pages and query is not None
        if paging:
            items = sorted(items, key=lambda i: i['id'])
            if query.get('marker'):
                items = [i for i in items if i['id'] > query['marker']]
            limit = min(
                int(query.get('limit') or limit or 0) or self.max_db_limit,
                self.max_db_limit,
            )
            answer[collection] = items
        if limit is not None and len(items) >= limit:
            answer[collection] = items[:limit]
            answer['truncated'] = True
            if paging:
                answer['links']['next'] = (
                    f'{AUTH_URL}/{collection}?limit={limit}'
                    f'&marker={items[limit - 1]["id"]}'
                )
        return 200, answer

    def _subtree_ids(self, project_id):
        children = {
            p['id']: self._subtree_ids(p['id'])
            for p in self.all('projects')
            if p.get('parent_id') == project_id
        }
        return children or None

    def _identity(self, method, path, query, body):
        if path in ('', '/'):
            return 200, {
                'version': {
                    'id': 'v3.14',
                    'status': 'stable',
                    'links': [{'rel': 'self', 'href': AUTH_URL + '/'}],
                }
            }
        m = re.fullmatch(r'/projects/([^/]+)', path)
        if m:
            project = self.get('projects', m.group(1))
            if project is None:
                return 404, {
                    'error': {
                        'code': 404,
                        'message': 'Could not find project.',
                    }
                }
            if method == 'GET':
                if self.flag('subtree_as_ids'):
                    project = dict(
                        project, subtree=self._subtree_ids(project['id'])
                    )
                return 200, {'project': project}
            if method == 'PATCH':
                project.update(body['project'])
                return 200, {'project': project}
            if method == 'DELETE':
                if any(
                    p.get('parent_id') == project['id']
                    for p in self.all('projects')
                ):
                    return 403, {
                        'error': {
                            'code': 403,
                            'message': 'not a leaf in the hierarchy',
                        }
                    }
                self._remove('projects', project['id'])
                return 204, None
        if path == '/projects':
            # a case-insensitive prefix is Keystone's SQL filter (ilike),
            # applied before the cut; a case-sensitive one its
            # controller's, applied to what the cut left: a Keystone that
            # pages (30.0.0) cuts first, at the list_limit, in ID order
            # (its list_projects paginates whatever filter remains), and
            # an older one filters, then cuts
            exact = query.get('name__startswith', '')
            loose = query.get('name__istartswith', '').lower()
            cut_first = 'projects' in self.pages
            items = [
                p
                for p in self.all('projects')
                if matches(p, query, {'name', 'domain_id', 'parent_id'})
                and str(p.get('enabled', True)).lower()
                == query.get('enabled', str(p.get('enabled', True))).lower()
                and p['id'] not in self.unlisted
                and (p.get('name') or '').lower().startswith(loose)
                and (cut_first or (p.get('name') or '').startswith(exact))
            ]
            answer = self._listing('projects', items, query)
            if cut_first and exact:
                answer[1]['projects'] = [
                    p
                    for p in answer[1]['projects']
                    if (p.get('name') or '').startswith(exact)
                ]
            while self.after_project_listing:
                self.after_project_listing.pop(0)()
            return answer
        if path == '/users':
            items = [
                u
                for u in self.all('users')
                if matches(u, query, {'domain_id'})
            ]
            return self._listing('users', items)
        if path == '/domains':
            items = [
                d for d in self.all('domains') if matches(d, query, {'name'})
            ]
            return self._listing('domains', items, query)
        m = re.fullmatch(r'/domains/([^/]+)', path)
        if m:
            domain = self.get('domains', m.group(1))
            if domain is None:
                return 404, {'error': {'code': 404, 'message': 'no domain'}}
            return 200, {'domain': domain}
        if path == '/role_assignments':
            scope = query.get('scope.project.id')
            user = query.get('user.id')
            items = [
                a
                for a in self.all('role_assignments')
                if (
                    not scope
                    or (a['scope'].get('project') or {}).get('id') == scope
                )
                and (not user or (a.get('user') or {}).get('id') == user)
            ]
            return self._listing('role_assignments', items)
        m = re.fullmatch(
            r'/users/([^/]+)/application_credentials(?:/(.+))?', path
        )
        if m:
            user, cred_id = m.groups()
            if method == 'DELETE':
                if not self.exists('application_credentials', cred_id):
                    return 404, {'error': {'code': 404, 'message': 'none'}}
                self._remove('application_credentials', cred_id)
                return 204, None
            items = [
                c
                for c in self.all('application_credentials')
                if c['user_id'] == user
            ]
            return self._listing('application_credentials', items)
        if path == '/registered_limits':
            return self._listing(
                'registered_limits', self.all('registered_limits')
            )
        if path == '/limits' and method == 'POST':
            # Keystone refuses the whole batch if a limit of the project
            # for that registered limit exists (409 Conflict, "Duplicate
            # entry": keystone/limit/backends/sql.py, 30.0.0)
            seen = {_limit_of(x) for x in self.all('limits')}
            for x in body['limits']:
                if _limit_of(x) in seen:
                    return 409, {
                        'error': {'code': 409, 'message': 'Duplicate entry'}
                    }
                seen.add(_limit_of(x))
            made = [self.add('limits', **dict(x)) for x in body['limits']]
            return 201, {'limits': made}
        if path == '/limits':
            items = [
                x
                for x in self.all('limits')
                if matches(x, query, {'project_id'})
            ]
            return self._listing('limits', items, query)
        m = re.fullmatch(r'/limits/([^/]+)', path)
        if m:
            limit = self.get('limits', m.group(1))
            if limit is None:
                return 404, {'error': {'code': 404, 'message': 'no limit'}}
            if method == 'DELETE':
                self._remove('limits', limit['id'])
                return 204, None
            # limit_update_request_body (keystone/limit/schema.py, 30.0.0):
            # resource_limit and description only
            if set(body['limit']) - {'resource_limit', 'description'}:
                return 400, {
                    'error': {
                        'code': 400,
                        'message': 'Additional properties are not allowed',
                    }
                }
            # Keystone's PATCH skips a resource_limit of 0 and answers
            # 200 with the limit unchanged (keystone/limit/backends/
            # sql.py, update_limit: `if limit.get('resource_limit')`)
            limit.update(
                {
                    k: v
                    for k, v in body['limit'].items()
                    if k != 'resource_limit' or v
                }
            )
            return 200, {'limit': limit}
        return 404, {'error': {'code': 404, 'message': 'no route ' + path}}


def _limit_of(limit: dict) -> tuple:
    """What makes a project's limit unique in Keystone: its project and
    its registered limit (service, region or none, resource)."""
    return (
        limit.get('project_id'),
        limit.get('service_id'),
        limit.get('region_id') or None,
        limit.get('resource_name'),
    )
