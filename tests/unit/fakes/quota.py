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

"""Quota sets: the store of a project's own quota values that every fake
service's quota API reads (``set_quota``, ``has_quota``), and the quota
APIs of Nova, Cinder and Neutron, which FakeCloud does without, with the
writes of every service's quota API that the drain freezes with, as each
service takes them: Nova, Neutron and Manila a limit below usage only with
``force`` (an old Neutron, ``neutron_force = False``, refuses the key),
Cinder never (and no ``force`` key), Octavia and Barbican any value,
Magnum a row created (POST) or patched (``PATCH /quotas/<project>/<resource>``
with a Quota object as body, as magnum 23 reads it: a JSON patch list is a
500). A key in ``ignored_quotas``
(``(service, key)``) is answered 200 and not kept: a value that does not
take.

Nova's and Manila's quota sets also keep per-user rows (``?user_id=``, and
Manila's per-share-type rows, ``?share_type=``), read merged over the
project's values (``set_user_quota``, ``user_quota_of``). Their reset
(``DELETE`` of the project's quota set) takes what each service's takes:
Nova's ``Quotas.destroy_all_by_project`` the project's rows and every
per-user row; Manila's ``quota_destroy_all_by_project`` the project's rows
and its per-user rows (and its usages, which the fake does not keep), not
its per-share-type rows; a ``DELETE`` with ``?user_id=`` (or Manila's
``?share_type=``) that user's (or share type's) rows alone."""

from __future__ import annotations

import json
import re

from tests.unit.fakes.key_manager import NO_QUOTAS, QUOTA_RESOURCES

NOVA_DEFAULT_QUOTAS = {
    'instances': 10,
    'cores': 20,
    'ram': 51200,
    'key_pairs': 100,
    'server_groups': 10,
}
CINDER_DEFAULT_QUOTAS = {
    'volumes': 10,
    'snapshots': 10,
    'gigabytes': 1000,
    'backups': 10,
}


NEUTRON_DEFAULT_QUOTAS = {
    'network': 100,
    'subnet': 100,
    'port': 500,
    'router': 10,
    'floatingip': 50,
    'security_group': 10,
    'security_group_rule': 100,
}


def _sub_key(service, project_id, user_id):
    return f'{service}/{project_id}/user/{user_id}'


def bad_request(message):
    return 400, {'error': {'code': 400, 'message': message}}


class Quotas:
    #: Neutron takes ``force`` (2023.1 and later)
    neutron_force = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: (service, key) that a quota write answers 200 to and drops
        self.ignored_quotas: set[tuple[str, str]] = set()

    def quota_of(self, service, project_id):
        """The project's own values in ``service``."""
        return dict(
            (self.get('quota_sets', f'{service}/{project_id}') or {}).get(
                'values', {}
            )
        )

    def _write_quota(self, service, project_id, values):
        kept = {
            k: v
            for k, v in values.items()
            if (service, k) not in self.ignored_quotas
        }
        row = self.get('quota_sets', f'{service}/{project_id}')
        if row is None:
            self.set_quota(service, project_id, **kept)
        else:
            row['values'].update(kept)

    def cinder_usage(self, project_id):
        volumes = [
            v
            for v in self.all('volumes')
            if v.get('os-vol-tenant-attr:tenant_id') == project_id
        ]
        return {
            'volumes': len(volumes),
            'gigabytes': sum(v.get('size') or 0 for v in volumes),
            'snapshots': sum(
                s.get('os-extended-snapshot-attributes:project_id')
                == project_id
                for s in self.all('snapshots')
            ),
            'backups': sum(
                b.get('os-backup-project-attr:project_id') == project_id
                for b in self.all('backups')
            ),
        }

    def set_quota(self, service, project_id, **values):
        self.add(
            'quota_sets',
            id=f'{service}/{project_id}',
            service=service,
            project=project_id,
            values=values,
        )

    def set_user_quota(self, service, project_id, user_id, **values):
        """A per-user row (Nova, Manila); ``user_id`` 'share_type:<id>':
        Manila's per-share-type row."""
        key = _sub_key(service, project_id, user_id)
        row = self.get('quota_sets', key)
        if row is not None:
            row['values'].update(values)
            return
        self.add(
            'quota_sets',
            id=key,
            service=service,
            project=project_id,
            user=user_id,
            values=values,
        )

    def user_quota_of(self, service, project_id, user_id):
        """The per-user (or per-share-type) row's own values."""
        row = self.get('quota_sets', _sub_key(service, project_id, user_id))
        return dict((row or {}).get('values', {}))

    def _reset(self, service, project_id, sub):
        """The quota set's DELETE, as each service's takes its rows."""
        if sub:
            self._remove('quota_sets', _sub_key(service, project_id, sub))
            return
        self._remove('quota_sets', f'{service}/{project_id}')
        for row in list(self.all('quota_sets')):
            user = str(row.get('user') or '')
            if (
                row['service'] == service
                and row['project'] == project_id
                and user
                and not user.startswith('share_type:')
            ):
                self._remove('quota_sets', row['id'])

    def has_quota(self, service, project_id):
        return self.exists('quota_sets', f'{service}/{project_id}')

    def _quota_set(self, service, m, method, defaults):
        project_id, default = m.groups()
        query = self._request.query
        sub = (query.get('user_id') or [''])[-1]
        if service == 'manila' and (query.get('share_type') or [''])[-1]:
            sub = 'share_type:' + query['share_type'][-1]
        if method == 'DELETE':
            self._reset(service, project_id, sub)
            return 202 if service == 'manila' else 204, None
        if method == 'PUT' and not default:
            # Manila's handler passes no body on: the request's own
            values = dict(json.loads(self._request.body)['quota_set'])
            force = values.pop('force', None)
            if sub:
                self.set_user_quota(service, project_id, sub, **values)
                values = {}
            if service == 'cinder':
                if force is not None:
                    return bad_request('Bad key(s) in quota set: force')
                usage = self.cinder_usage(project_id)
                for k, v in values.items():
                    if v < usage.get(k, 0):
                        return bad_request(
                            f'Quota limit {v} for {k} must be greater '
                            f'than or equal to already used {usage[k]}'
                        )
            if not sub:
                self._write_quota(service, project_id, values)
        own = {} if default else self.quota_of(service, project_id)
        if sub and not default:
            own.update(self.user_quota_of(service, project_id, sub))
        answer = {**defaults, **own}
        if service == 'cinder' and self.flag('usage'):
            usage = self.cinder_usage(project_id)
            answer = {
                k: {'limit': v, 'in_use': usage.get(k, 0), 'reserved': 0}
                for k, v in answer.items()
            }
        return 200, {'quota_set': {**answer, 'id': project_id}}

    def _compute(self, method, path, query, body):
        m = re.fullmatch(r'/os-quota-sets/([^/]+)(/defaults)?', path)
        if m and method != 'DELETE' and m.group(1) not in self.db['projects']:
            # as nova's identity.verify_project_id (issue 31, seen on the
            # minicloud): a read or a set of a deleted project's quotas is
            # refused, their DELETE is taken
            return bad_request(
                f'Project ID {m.group(1)} is not a valid project.'
            )
        if m:
            return self._quota_set('nova', m, method, NOVA_DEFAULT_QUOTAS)
        return super()._compute(method, path, query, body)

    def _block_storage(self, method, path, query, body):
        m = re.fullmatch(r'/os-quota-sets/([^/]+)(/defaults)?', path)
        if m:
            return self._quota_set('cinder', m, method, CINDER_DEFAULT_QUOTAS)
        return super()._block_storage(method, path, query, body)

    def _network(self, method, path, query, body):
        if path == '/v2.0/quotas':
            return 200, {
                'quotas': [
                    {
                        'project_id': q['project'],
                        'tenant_id': q['project'],
                        **q['values'],
                    }
                    for q in self.all('quota_sets')
                    if q['service'] == 'neutron'
                ]
            }
        m = re.fullmatch(r'/v2\.0/quotas/([^/]+)(/default)?', path)
        if m and method == 'DELETE':
            self._remove('quota_sets', f'neutron/{m.group(1)}')
            return 204, None
        if m and method == 'PUT':
            values = dict(body['quota'])
            if 'force' in values and not self.neutron_force:
                return bad_request("Unrecognized attribute(s) 'force'")
            values.pop('force', None)
            self._write_quota('neutron', m.group(1), values)
        if m:
            own = {} if m.group(2) else self.quota_of('neutron', m.group(1))
            return 200, {'quota': {**NEUTRON_DEFAULT_QUOTAS, **own}}
        return super()._network(method, path, query, body)

    def _load_balancer(self, method, path, query, body):
        m = re.fullmatch(r'(?:/v2(?:\.0)?)?/lbaas/quotas/([^/]+)', path)
        if m and method == 'PUT':
            self._write_quota('octavia', m.group(1), body['quota'])
            return 202, {'quota': self.quota_of('octavia', m.group(1))}
        return super()._load_balancer(method, path, query, body)

    def _key_manager(self, method, path, query, body):
        m = re.fullmatch(r'/v1/project-quotas/([^/]+)', path)
        if m and method == 'PUT':
            self._write_quota('barbican', m.group(1), body['project_quotas'])
            return 204, None
        if m and method == 'GET':
            if not self.has_quota('barbican', m.group(1)):
                return 404, NO_QUOTAS
            values = self.quota_of('barbican', m.group(1))
            return 200, {
                'project_quotas': {k: values.get(k) for k in QUOTA_RESOURCES}
            }
        return super()._key_manager(method, path, query, body)

    def _container_infra(self, method, path, query, body):
        if path == '/quotas' and method == 'POST':
            pid, name = body['project_id'], body['resource']
            if name in self.quota_of('magnum', pid):
                return 409, {'errors': [{'status': 409, 'title': 'exists'}]}
            self._write_quota('magnum', pid, {name: body['hard_limit']})
            return 201, body
        m = re.fullmatch(r'/quotas/([^/]+)/([^/]+)', path)
        if m and method == 'PATCH':
            pid, name = m.groups()
            if name not in self.quota_of('magnum', pid):
                return 404, {'errors': [{'status': 404, 'title': 'none'}]}
            if not isinstance(body, dict):
                # a JSON patch: Magnum reads the body as a Quota object
                # (magnum 23 on the minicloud answers a list so)
                return 500, {
                    'errors': [
                        {
                            'status': 500,
                            'code': 'server',
                            'title': "'list' object has no attribute 'keys'",
                        }
                    ]
                }
            # a Quota object, its hard_limit 1 when the body has none
            self._write_quota('magnum', pid, {name: body.get('hard_limit', 1)})
            return 202, {
                'project_id': pid,
                'resource': name,
                'hard_limit': body.get('hard_limit', 1),
            }
        return super()._container_infra(method, path, query, body)
