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

"""Keystone's users, their credentials and trusts, groups and domains as
``user delete --cascade`` and ``domain delete --cascade`` use them, and
Nova's keypair delete by user.

What Keystone does that the cascade relies on (keystone 26+, read in its
source): a user's delete removes its credentials, application
credentials and trusts (``_on_user_delete`` callbacks) but nothing in
Nova; a domain is deleted only once disabled (403 otherwise), with its
projects, users and groups; a user's PATCH ``enabled: false`` is kept."""

from __future__ import annotations

import re

from tests.unit.fakes.common import ADMIN_USER, matches


def _error(code, message):
    return code, {'error': {'code': code, 'message': message}}


class Users:
    def user(self, name, domain_id='default', **extra):
        return self.add(
            'users', name=name, domain_id=domain_id, enabled=True, **extra
        )

    def credential(self, user_id, type_='ec2', project_id=None):
        return self.add(
            'credentials',
            user_id=user_id,
            type=type_,
            project_id=project_id,
            blob='{}',
        )

    def trust(self, trustor, trustee, project_id):
        return self.add(
            'trusts',
            trustor_user_id=trustor,
            trustee_user_id=trustee,
            project_id=project_id,
        )

    def domain(self, name, **extra):
        return self.add(
            'domains',
            **{'name': name, 'enabled': True, 'options': {}, **extra},
        )

    def group(self, name, domain_id):
        return self.add('groups', name=name, domain_id=domain_id)

    def domain_grant(self, domain_id, role_id, *, user=None, group=None):
        actor = {'user': {'id': user}} if user else {'group': {'id': group}}
        return self.add(
            'role_assignments',
            role={'id': role_id},
            scope={'domain': {'id': domain_id}},
            **actor,
        )

    def _domains(self, method, path, query, body):
        """A domain's PATCH and DELETE (only once disabled, as Keystone),
        its groups, its grants; None for what it does not answer."""
        m = re.fullmatch(r'/domains/([^/]+)', path)
        if m and method in ('PATCH', 'DELETE'):
            domain = self.get('domains', m.group(1))
            if domain is None:
                return _error(404, 'Could not find domain.')
            if method == 'PATCH':
                domain.update(body['domain'])
                return 200, {'domain': domain}
            if domain.get('enabled', True):
                return _error(
                    403,
                    'Cannot delete a domain that is enabled, please '
                    'disable it first.',
                )
            for collection in ('projects', 'users', 'groups'):
                if any(
                    x.get('domain_id') == domain['id']
                    for x in self.all(collection)
                ):
                    # the cascade deletes them first; Keystone would too
                    self.changes.append(('ORPHANED', collection))
            self._remove('domains', domain['id'])
            return 204, None
        if path == '/groups':
            items = [
                g
                for g in self.all('groups')
                if matches(g, query, {'domain_id'})
            ]
            return self._listing('groups', items)
        m = re.fullmatch(r'/groups/([^/]+)', path)
        if m and method == 'DELETE':
            if not self.exists('groups', m.group(1)):
                return _error(404, 'Could not find group.')
            self._remove('groups', m.group(1))
            return 204, None
        if path == '/role_assignments' and 'scope.domain.id' in query:
            items = [
                a
                for a in self.all('role_assignments')
                if (a['scope'].get('domain') or {}).get('id')
                == query['scope.domain.id']
            ]
            return self._listing('role_assignments', items)
        m = re.fullmatch(
            r'/domains/([^/]+)/(users|groups)/([^/]+)/roles/([^/]+)', path
        )
        if m and method == 'DELETE':
            domain, kind, actor, role = m.groups()
            for a in self.all('role_assignments'):
                if (
                    (a['scope'].get('domain') or {}).get('id') == domain
                    and (a.get(kind[:-1]) or {}).get('id') == actor
                    and a['role']['id'] == role
                ):
                    self._remove('role_assignments', a['id'])
                    return 204, None
            return _error(404, 'Could not find role assignment.')
        m = re.fullmatch(r'/domains/([^/]+)/config', path)
        if m and method == 'DELETE':
            domain = self.get('domains', m.group(1)) or {}
            if not domain.get('config'):
                return _error(404, 'Could not find domain config.')
            domain['config'] = None
            return 204, None
        return None

    def _identity(self, method, path, query, body):
        answer = self._domains(method, path, query, body)
        if answer is not None:
            return answer
        m = re.fullmatch(r'/users/([^/]+)', path)
        if m:
            user = self.get('users', m.group(1))
            if user is None:
                return _error(404, 'Could not find user.')
            if method == 'PATCH':
                user.update(body['user'])
            if method == 'DELETE':
                self._remove('users', user['id'])
                for collection, key in (
                    ('credentials', 'user_id'),
                    ('application_credentials', 'user_id'),
                    ('trusts', 'trustor_user_id'),
                    ('trusts', 'trustee_user_id'),
                ):
                    for item in self.all(collection):
                        if item[key] == user['id']:
                            self._remove(collection, item['id'])
                for a in self.all('role_assignments'):
                    if (a.get('user') or {}).get('id') == user['id']:
                        self._remove('role_assignments', a['id'])
                return 204, None
            return 200, {'user': user}
        if path == '/users':
            items = [
                u
                for u in self.all('users')
                if matches(u, query, {'domain_id', 'name'})
            ]
            return self._listing('users', items)
        if path == '/credentials':
            items = [
                c
                for c in self.all('credentials')
                if matches(c, query, {'user_id'})
            ]
            return self._listing('credentials', items)
        m = re.fullmatch(r'/credentials/([^/]+)', path)
        if m and method == 'DELETE':
            if not self.exists('credentials', m.group(1)):
                return _error(404, 'Could not find credential.')
            self._remove('credentials', m.group(1))
            return 204, None
        if path == '/OS-TRUST/trusts':
            items = [
                t
                for t in self.all('trusts')
                if matches(t, query, {'trustor_user_id'})
            ]
            return self._listing('trusts', items)
        m = re.fullmatch(r'/OS-TRUST/trusts/([^/]+)', path)
        if m and method == 'DELETE':
            if not self.exists('trusts', m.group(1)):
                return _error(404, 'Could not find trust.')
            self._remove('trusts', m.group(1))
            return 204, None
        m = re.fullmatch(r'/domains/([^/]+)/config', path)
        if m:
            config = (self.get('domains', m.group(1)) or {}).get('config')
            if not config:
                return _error(404, 'Could not find domain config.')
            return 200, {'config': config}
        return super()._identity(method, path, query, body)


class UserKeypairs:
    """Nova's keypair delete of another user's keypair (``user_id``,
    microversion 2.10): the keypairs' ids are ``<user>/<name>``
    (``compute.Keypairs``)."""

    def _compute(self, method, path, query, body):
        m = re.fullmatch(r'/os-keypairs/([^/]+)', path)
        if m and method == 'DELETE':
            key = f'{query.get("user_id", ADMIN_USER)}/{m.group(1)}'
            if not self.exists('keypairs', key):
                return 404, {
                    'itemNotFound': {'code': 404, 'message': 'not found'}
                }
            self._remove('keypairs', key)
            return 202, None
        return super()._compute(method, path, query, body)
