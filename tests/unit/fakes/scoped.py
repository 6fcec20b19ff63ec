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

"""Tokens of users who are no cloud admin, for the cascade without admin
(``workflows.scoped``).

Keystone issues each password login a token of its own scope: a domain
(with the user's roles on it: a domain manager's ``manager``) or a project
(with the user's roles on the project, from ``role_assignments``); the
grants of users and groups on a project, inherited by its subtree or not
(PUT, HEAD, DELETE of ``[/OS-INHERIT]/projects/{p}/{users|groups}/{id}/
roles/{r}[/inherited_to_projects]``), and ``/users/{u}/projects`` are
answered. As Keystone's policy has it, a domain-scoped token reads the
projects of its domain alone (403 otherwise, also for a project that does
not exist) and grants or revokes manager, member and reader alone.

Nova and Cinder see a non-admin project token as they do: Nova refuses
``all_tenants`` (403), lists the token's project's servers alone and
answers 404 for another project's;
Cinder refuses the ``project_id`` filter (400), lists the token's
project's alone, and hides each one's owner.
"""

from __future__ import annotations

import json
import re

from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import AUTH_URL, catalog, new_id
from tests.unit.fakes.dns import Dns
from tests.unit.fakes.key_manager import KeyManager
from tests.unit.fakes.network_extensions import NetworkExtensions
from tests.unit.fakes.network_services import NetworkServices
from tests.unit.fakes.workflow import Workflow

#: Cinder's owner attribute of each collection, shown to admins alone
CINDER_OWNERS = {
    'volumes': 'os-vol-tenant-attr:tenant_id',
    'snapshots': 'os-extended-snapshot-attributes:project_id',
    'backups': 'os-backup-project-attr:project_id',
}


def _forbidden(what):
    return 403, {'error': {'code': 403, 'message': f'not allowed: {what}'}}


class ScopedTokens:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: token -> {'user_id', 'project_id', 'domain_id', 'roles'}
        self.tokens: dict[str, dict] = {}
        for name in ('admin', 'manager', 'member', 'reader'):
            self.add('roles', id=f'role-{name}', name=name)

    def add_region(self, *args, **kwargs):
        """Another region, which knows the tokens Keystone issues here."""
        other = super().add_region(*args, **kwargs)
        other.tokens = self.tokens
        return other

    # -- the cloud's users -------------------------------------------------

    def add_user(self, name, domain_id='default'):
        return self.add(
            'users', id=new_id('u'), name=name, domain_id=domain_id
        )

    def assign(self, who, role, *, project=None, domain=None, inherited=False):
        """A role of a user (or a group: a dict with ``group``) on a
        project, or on a domain (kept apart: the project listings of the
        core fake know project scopes alone)."""
        if project:
            scope = {'project': {'id': project['id']}}
            if inherited:
                scope['OS-INHERIT:inherited_to'] = 'projects'
        else:
            scope = {'domain': {'id': domain}}
        kind = 'group' if who.get('group') else 'user'
        return self.add(
            'role_assignments' if project else 'domain_role_assignments',
            **{kind: {'id': who['id']}},
            role={'id': f'role-{role}', 'name': role},
            scope=scope,
        )

    def roles_of(self, user_id, *, project_id=None, domain_id=None):
        out = []
        for a in self.all('role_assignments') + self.all(
            'domain_role_assignments'
        ):
            scope = a['scope']
            if (a.get('user') or {}).get('id') != user_id:
                continue
            if project_id and scope.get('project', {}).get('id') == project_id:
                out.append(a['role']['name'])
            if domain_id and scope.get('domain', {}).get('id') == domain_id:
                out.append(a['role']['name'])
        if 'manager' in out:
            out.append('member')  # implied, as bootstrap makes it
        return sorted(set(out))

    def connection_as(self, user, *, project_id=None, domain_id=None):
        import openstack.connection

        scope = (
            {'project_id': project_id}
            if project_id
            else {'domain_id': domain_id}
        )
        return openstack.connection.Connection(
            auth_url=AUTH_URL,
            username=user['name'],
            password='secret',
            user_domain_id=user['domain_id'],
            region_name='RegionOne',
            identity_api_version='3',
            **scope,
        )

    # -- tokens ------------------------------------------------------------

    def _answer_tokens(self):
        self.mocker.post(AUTH_URL + '/auth/tokens', json=self._issue)

    def _issue(self, request, context):
        auth = json.loads(request.body)['auth']
        user_ask = auth['identity']['password']['user']
        scope = auth.get('scope') or {}
        if 'system' in scope:
            if user_ask.get('name') == 'admin':
                return self.system_token(context)
            context.status_code = 401  # a user with no role on the system
            return {'error': {'code': 401, 'message': 'no role'}}
        tok = self.token()  # the admin's, with the catalog
        if user_ask.get('name') == 'admin':
            context.headers['X-Subject-Token'] = 'fake-token'
            return tok
        user = next(
            u for u in self.all('users') if u['name'] == user_ask['name']
        )
        body = tok['token']
        body['user'] = {
            'id': user['id'],
            'name': user['name'],
            'domain': {'id': user['domain_id'], 'name': user['domain_id']},
        }
        body.pop('project', None)
        if 'domain' in scope:
            domain_id = scope['domain'].get('id') or scope['domain']['name']
            roles = self.roles_of(user['id'], domain_id=domain_id)
            body['domain'] = {'id': domain_id, 'name': domain_id}
            seen = {'domain_id': domain_id, 'project_id': None}
        else:
            project = self.get('projects', scope['project']['id'])
            roles = self.roles_of(user['id'], project_id=project['id'])
            if not roles or not project.get('enabled', True):
                context.status_code = 401
                return {'error': {'code': 401, 'message': 'no role'}}
            body['project'] = {
                'id': project['id'],
                'name': project['name'],
                'domain': {
                    'id': project['domain_id'],
                    'name': project['domain_id'],
                },
            }
            seen = {'domain_id': None, 'project_id': project['id']}
        body['roles'] = [{'id': f'role-{r}', 'name': r} for r in roles]
        token = new_id('tok')
        self.tokens[token] = {'user_id': user['id'], 'roles': roles, **seen}
        context.headers['X-Subject-Token'] = token
        return tok

    def _caller(self):
        """The token of the request: None for the admin's."""
        return self.tokens.get(self.header('X-Auth-Token') or '')

    # -- Keystone ----------------------------------------------------------

    def _identity(self, method, path, query, body):
        caller = self._caller()
        m = re.fullmatch(
            r'(/OS-INHERIT)?/projects/([^/]+)/(users|groups)/([^/]+)'
            r'/roles/([^/]+)(?:/inherited_to_projects)?',
            path,
        )
        if m:
            inherited, project_id, kind, actor, role_id = m.groups()
            role = self.get('roles', role_id)
            if role is None:  # Keystone's RoleNotFound
                return 404, {'error': {'code': 404, 'message': 'no role'}}
            if (
                caller
                and caller['domain_id']
                and role['name'] not in ('manager', 'member', 'reader')
            ):
                # a domain manager grants and revokes these alone
                return _forbidden('identity:revoke_grant')
            return self._grant(
                method, project_id, kind[:-1], actor, role, bool(inherited)
            )
        m = re.fullmatch(r'/users/([^/]+)/projects', path)
        if m:
            mine = {
                a['scope']['project']['id']
                for a in self.all('role_assignments')
                if (a.get('user') or {}).get('id') == m.group(1)
                and 'project' in a['scope']
            }
            return 200, {
                'projects': [
                    p for p in self.all('projects') if p['id'] in mine
                ]
            }
        if path == '/roles':
            return 200, {
                'roles': [
                    r
                    for r in self.all('roles')
                    if r['name'] == query.get('name', r['name'])
                ]
            }
        m = re.fullmatch(r'/roles/([^/]+)', path)
        if m:
            role = self.get('roles', m.group(1))
            if role is None:
                return 404, {'error': {'code': 404, 'message': 'no role'}}
            return 200, {'role': role}
        m = re.fullmatch(r'/projects/([^/]+)', path)
        if m and caller and caller['domain_id']:
            project = self.get('projects', m.group(1))
            if project is None or project['domain_id'] != caller['domain_id']:
                return _forbidden('identity:get_project')
        return super()._identity(method, path, query, body)

    def _grant(self, method, project_id, kind, actor, role, inherited):
        def same(a):
            scope = a['scope']
            return (
                (a.get(kind) or {}).get('id') == actor
                and scope.get('project', {}).get('id') == project_id
                and a['role']['id'] == role['id']
                and bool(scope.get('OS-INHERIT:inherited_to')) == inherited
            )

        found = [a for a in self.all('role_assignments') if same(a)]
        if method == 'HEAD':
            return (204 if found else 404), None
        if method == 'PUT':
            if not found:
                scope = {'project': {'id': project_id}}
                if inherited:
                    scope['OS-INHERIT:inherited_to'] = 'projects'
                self.add(
                    'role_assignments',
                    **{kind: {'id': actor}},
                    role={'id': role['id'], 'name': role['name']},
                    scope=scope,
                )
            return 204, None
        if not found:
            return 404, {'error': {'code': 404, 'message': 'no grant'}}
        for a in found:
            self._remove('role_assignments', a['id'])
        return 204, None

    # -- Nova and Cinder, as a non-admin sees them -------------------------

    def _compute(self, method, path, query, body):
        caller = self._caller()
        if caller and path == '/servers/detail':
            if 'all_tenants' in query:
                return _forbidden('servers:detail:get_all_tenants')
            query = {**query, 'project_id': caller['project_id']}
        m = re.fullmatch(r'/servers/([^/]+)', path)
        if caller and m and path != '/servers/detail':
            server = self.get('servers', m.group(1))
            if server and server['project_id'] != caller['project_id']:
                # another project's server is not found, as a gone one
                return 404, {'itemNotFound': {'code': 404, 'message': '-'}}
            if server and method == 'DELETE' and server.get('locked'):
                # nova.compute.api.check_instance_lock: a locked server is
                # an admin's alone (InstanceIsLocked, HTTPConflict)
                return 409, {
                    'conflictingRequest': {
                        'code': 409,
                        'message': f'Instance {server["id"]} is locked',
                    }
                }
        return super()._compute(method, path, query, body)

    def _glance_user(self):
        caller = self._caller()
        if caller is None or 'admin' in caller['roles']:
            return super()._glance_user()
        return caller['project_id']

    def _cinder_project(self):
        caller = self._caller()
        return caller['project_id'] if caller else super()._cinder_project()

    def _block_storage(self, method, path, query, body):
        caller = self._caller()
        m = re.fullmatch(r'/(volumes|snapshots|backups)/detail', path)
        if not (caller and m):
            return super()._block_storage(method, path, query, body)
        if 'project_id' in query:
            return 400, {
                'badRequest': {
                    'code': 400,
                    'message': 'Invalid filters project_id are provided.',
                }
            }
        coll = m.group(1)
        owner = CINDER_OWNERS[coll]
        # a non-admin's all_tenants is ignored: its project's alone
        mine = {k: v for k, v in query.items() if k != 'all_tenants'}
        status, answer = super()._block_storage(method, path, mine, body)
        answer[coll] = [
            {k: v for k, v in o.items() if k != owner} for o in answer[coll]
        ]
        return status, answer


class ScopedCloud(ScopedTokens, FakeCloud):
    """FakeCloud whose users may be no admins."""

    endpoints = FakeCloud.endpoints


class ScopedFirewallCloud(
    ScopedTokens, NetworkServices, NetworkExtensions, FakeCloud
):
    """ScopedCloud with Neutron's newer extensions (FWaaS v2)."""

    endpoints = FakeCloud.endpoints


class ScopedDnsBarbicanCloud(ScopedTokens, Dns, KeyManager, FakeCloud):
    """ScopedCloud with Designate and Barbican."""

    endpoints = catalog(*FakeCloud.endpoints, 'dns', 'key-manager')


class ScopedMistralCloud(ScopedTokens, Workflow, FakeCloud):
    """ScopedCloud with Mistral."""

    endpoints = catalog(*FakeCloud.endpoints, 'workflow')
