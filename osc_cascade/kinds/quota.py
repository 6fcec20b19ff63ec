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

"""Quotas: a project's own quota values, frozen by the drain and reset
after the project is gone.

Two things live here:

* the quota *kinds*, which list the projects whose quotas differ from the
  defaults and reset them (the quota APIs' DELETE). They are not steps of
  a cascade's plan (``without_quotas``): a reset before the project is
  gone would lift the drain's freeze (and an operator's). The orphan
  search (``orphan list``) still lists and purges, with them, the quota
  rows of projects that no longer exist;
* the quota *APIs* (``QUOTA_APIS``, one per service with per-project
  quotas), plain classes that ``workflows.drain`` uses to read a project's
  own values, freeze them, read them back, restore them and, once the
  project is gone, reset them. Each freezes the way its service accepts:

  - Nova: 0 with ``force`` (below usage);
  - Neutron: 0 with ``force`` (taken since Yoga, 2022.1; since 2025.1 a
    limit below usage is refused without it); a Neutron older than Yoga
    refuses the key and checks no usage, so the value is sent again
    without it;
  - Cinder refuses a limit below usage and has no ``force``: frozen at
    usage (``in_use`` + ``reserved``), ``per_volume_gigabytes`` untouched,
    and lowered to the usage as the cascade deletes (``lowered_by``);
  - Manila: 0 with ``force``, ``per_share_gigabytes`` untouched;
  - Octavia, Barbican: 0 (neither checks usage when a limit is set);
  - Magnum: a ``Cluster`` limit of 0 (its only quota resource);
  - Keystone's unified limits (which Nova and Glance may enforce instead
    of a quota set): a project limit of 0 for every registered limit.

Designate is left out: its API shows a project's quotas merged with the
defaults and has no call for the defaults alone, so a reset could never be
told from a quota nobody set. Trove's quotas are not frozen either.
Keystone's unified limits go with the project.
"""

from __future__ import annotations

from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade.api import keystone
from osc_cascade.api.http import request
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds import shared_file_system
from osc_cascade.kinds.base import (
    ResourceKind,
    delete_of,
    unless_absent,
)
from osc_cascade.kinds.paging import pages
from osc_cascade.kinds.registry import register


class _Quota(ResourceKind):
    synchronous_delete = True
    #: the name prefix of the kinds whose deletes come first: ``compute``
    deletes_of: ClassVar[str]

    def list(self, conn, project_id):
        return [
            ResourceRef(
                kind=self.name,
                id=pid,
                name='quotas',
                project_id=pid,
                attrs=attrs,
            )
            for pid, attrs in self.customised(conn, project_id)
        ]

    def customised(
        self, conn: Any, project_id: str | None
    ) -> list[tuple[str, dict[str, Any]]]:
        """The projects (the one given, or all the API can tell) whose
        quotas differ from the defaults, with what their reset needs."""
        raise NotImplementedError

    def relations(self, ref, inventory):
        me = delete_of(self.name, ref.id)
        for other in inventory:
            if other.project_id == ref.project_id and other.kind.startswith(
                self.deletes_of + '.'
            ):
                yield Edge(delete_of(other.kind, other.id), me)


class _QuotaSets(_Quota):
    """Nova, Cinder and Manila: a project's quota set and its defaults,
    one project at a time (no list call, so nothing to page)."""

    #: the quota sets' path in the service's API
    path: ClassVar[str]

    def api(self, conn: Any) -> Any:
        """The service's SDK adapter."""
        raise NotImplementedError

    def customised(self, conn, project_id):
        if project_id is None:
            return []  # these APIs cannot list projects
        api = self.api(conn)

        def values(suffix=''):
            found = request(
                api, 'GET', f'{self.path}/{project_id}{suffix}'
            ).json()['quota_set']
            found.pop('id', None)
            return found

        try:
            own, defaults = values(), values('/defaults')
        except sdk_exc.NotFoundException:
            return []  # a cloud without the quota-set API has none
        return [(project_id, {})] if own != defaults else []

    def delete(self, conn, ref):
        request(self.api(conn), 'DELETE', f'{self.path}/{ref.id}')


@register
class ComputeQuota(_QuotaSets):
    name = 'quota.compute'
    service_type = 'compute'
    deletes_of = 'compute'
    path = '/os-quota-sets'

    def api(self, conn):
        return conn.compute


@register
class BlockStorageQuota(_QuotaSets):
    name = 'quota.block_storage'
    service_type = 'block-storage'
    deletes_of = 'block_storage'
    path = '/os-quota-sets'

    def api(self, conn):
        return conn.block_storage


@register
class SharedFileSystemQuota(_QuotaSets):
    name = 'quota.shared_file_system'
    service_type = 'shared-file-system'
    deletes_of = 'shared_file_system'
    path = '/quota-sets'

    def api(self, conn):
        return shared_file_system.manila(conn)


@register
class NetworkQuota(_Quota):
    """Neutron lists exactly the projects with quotas of their own."""

    name = 'quota.network'
    service_type = 'network'
    deletes_of = 'network'

    def customised(self, conn, project_id):
        return [
            (q.project_id, {})
            for q in unless_absent(conn.network.quotas)
            if project_id in (None, q.project_id)
        ]

    def delete(self, conn, ref):
        conn.network.delete_quota(ref.id, ignore_missing=False)


def octavia_defaults(conn: Any) -> dict[str, Any]:
    """Octavia's default quotas. Its list of quota rows shows a limit
    the row does not set as the default (the minicloud's Octavia: a row
    reset by DELETE, which Octavia keeps for its usage counts, lists as
    ``-1`` everywhere), so a limit of the project's own is one that is
    neither null nor the default's."""
    try:
        return request(
            conn.load_balancer, 'GET', '/lbaas/quotas/defaults'
        ).json()['quota']
    except sdk_exc.NotFoundException:
        return {}


@register
class LoadBalancerQuota(_Quota):
    """Octavia keeps a row for every project that used it; a limit of its
    own is one that is not null. Its list pages (``quotas_links``, at
    ``pagination_max_limit``; the link drops the project filter)."""

    name = 'quota.load_balancer'
    service_type = 'load-balancer'
    deletes_of = 'load_balancer'

    def customised(self, conn, project_id):
        params = {'project_id': project_id} if project_id else {}
        rows = pages(conn.load_balancer, '/lbaas/quotas', 'quotas', params)
        defaults = octavia_defaults(conn)
        return [
            (q['project_id'], {})
            for q in rows
            if project_id in (None, q['project_id'])
            and any(
                v is not None and v != defaults.get(k)
                for k, v in q.items()
                if k not in ('project_id', 'tenant_id')
            )
        ]

    def delete(self, conn, ref):
        conn.load_balancer.delete_quota(ref.id, ignore_missing=False)


@register
class KeyManagerQuota(_Quota):
    """Barbican lists the projects with quotas of their own (its secrets
    are beyond the cascade's reach, its quotas are not), ten a page unless
    asked for more (``offset``/``limit``, a ``next`` link)."""

    name = 'quota.key_manager'
    service_type = 'key-manager'
    deletes_of = 'key_manager'

    def customised(self, conn, project_id):
        rows = pages(
            conn.key_manager,
            '/project-quotas',
            'project_quotas',
            {'limit': 100},
        )
        return [
            (q['project_id'], {})
            for q in rows
            if project_id in (None, q['project_id'])
        ]

    def delete(self, conn, ref):
        conn.key_manager.delete_project_quota(ref.id, ignore_missing=False)


@register
class ContainerInfraQuota(_Quota):
    """Magnum keeps one row per project and resource that was set, listed
    a page at a time (``marker``/``limit``, a ``next`` link that drops
    ``all_tenants``)."""

    name = 'quota.container_infra'
    service_type = 'container-infrastructure-management'
    deletes_of = 'container_infra'

    def customised(self, conn, project_id):
        resources: dict[str, list[str]] = {}
        for q in pages(
            conn.container_infrastructure_management,
            '/quotas',
            'quotas',
            {'all_tenants': True},
        ):
            if project_id in (None, q['project_id']):
                resources.setdefault(q['project_id'], []).append(q['resource'])
        return [
            (pid, {'resources': sorted(names)})
            for pid, names in sorted(resources.items())
        ]

    def delete(self, conn, ref):
        for name in ref.attrs['resources']:
            request(
                conn.container_infrastructure_management,
                'DELETE',
                f'/quotas/{ref.id}/{name}',
            )


def without_quotas(kinds: dict[str, ResourceKind]) -> dict[str, ResourceKind]:
    """The kinds of a cascade's plan: every kind but the quotas, which the
    drain records and resets after the project is gone."""
    return {n: k for n, k in kinds.items() if not isinstance(k, _Quota)}


# -- the quota APIs of the drain ------------------------------------------


class QuotaApi:
    """One service's per-project quota API. ``own`` is what the project
    has of its own (what a reset would lose); ``current`` the values in
    force, for the read-back; ``frozen`` the values of the freeze."""

    service_type: ClassVar[str]
    #: for a freeze at usage (Cinder's), the kinds (a name prefix:
    #: ``block_storage``) whose deletes lower it (``workflows.drain``'s
    #: ``Lowering``); '': a freeze at 0, nothing to lower
    lowered_by: ClassVar[str] = ''

    def own(self, conn: Any, project_id: str) -> dict[str, Any]:
        raise NotImplementedError

    def current(self, conn: Any, project_id: str) -> dict[str, Any]:
        return self.own(conn, project_id)

    def frozen(self, conn: Any, project_id: str) -> dict[str, Any]:
        raise NotImplementedError

    def set(self, conn: Any, project_id: str, values: dict[str, Any]) -> None:
        raise NotImplementedError

    def reset(self, conn: Any, project_id: str) -> None:
        raise NotImplementedError

    def restore(self, conn: Any, project_id: str, own: dict[str, Any]) -> None:
        """Back to exactly ``own``: the defaults, then the project's own
        values on top."""
        self.reset(conn, project_id)
        if own:
            self.set(conn, project_id, own)


class _QuotaSetApi(QuotaApi):
    """Nova, Cinder and Manila: ``{path}/{project}`` and its defaults."""

    path: ClassVar[str]
    #: the service takes ``force`` to set a limit below usage
    force: ClassVar[bool] = True
    #: keys that are no count of anything (a size per resource)
    untouched: ClassVar[frozenset[str]] = frozenset()

    def api(self, conn: Any) -> Any:
        raise NotImplementedError

    def _values(self, conn, project_id, suffix='', **params):
        found = request(
            self.api(conn),
            'GET',
            f'{self.path}/{project_id}{suffix}',
            params=params or None,
        ).json()['quota_set']
        found.pop('id', None)
        return found

    def current(self, conn, project_id):
        return {
            k: v
            for k, v in self._values(conn, project_id).items()
            if isinstance(v, int)
        }

    def own(self, conn, project_id):
        defaults = self._values(conn, project_id, '/defaults')
        return {
            k: v
            for k, v in self.current(conn, project_id).items()
            if defaults.get(k) != v
        }

    def frozen(self, conn, project_id):
        return {
            k: 0
            for k in self.current(conn, project_id)
            if k not in self.untouched
        }

    def set(self, conn, project_id, values):
        body = {**values, 'force': True} if self.force else dict(values)
        request(
            self.api(conn),
            'PUT',
            f'{self.path}/{project_id}',
            json={'quota_set': body},
        )

    def reset(self, conn, project_id):
        request(self.api(conn), 'DELETE', f'{self.path}/{project_id}')


class ComputeQuotaApi(_QuotaSetApi):
    service_type = 'compute'
    path = '/os-quota-sets'

    def api(self, conn):
        return conn.compute


class BlockStorageQuotaApi(_QuotaSetApi):
    """Cinder refuses a limit below ``in_use`` + ``reserved`` and knows no
    ``force``: frozen at usage, and lowered to the usage as the project's
    volumes, snapshots and backups are deleted (``frozen`` is the usage
    then)."""

    service_type = 'block-storage'
    path = '/os-quota-sets'
    force = False
    untouched = frozenset({'per_volume_gigabytes'})
    lowered_by = 'block_storage'

    def api(self, conn):
        return conn.block_storage

    def frozen(self, conn, project_id):
        usage = self._values(conn, project_id, usage='true')
        return {
            k: (v.get('in_use') or 0) + (v.get('reserved') or 0)
            for k, v in usage.items()
            if isinstance(v, dict) and k not in self.untouched
        }


class SharedFileSystemQuotaApi(_QuotaSetApi):
    service_type = 'shared-file-system'
    path = '/quota-sets'
    untouched = frozenset({'per_share_gigabytes'})

    def api(self, conn):
        return shared_file_system.manila(conn)


class NetworkQuotaApi(QuotaApi):
    service_type = 'network'

    def _values(self, conn, project_id, suffix=''):
        return request(
            conn.network, 'GET', f'/quotas/{project_id}{suffix}'
        ).json()['quota']

    current = _QuotaSetApi.current

    def own(self, conn, project_id):
        defaults = self._values(conn, project_id, '/default')
        return {
            k: v
            for k, v in self.current(conn, project_id).items()
            if defaults.get(k) != v
        }

    def frozen(self, conn, project_id):
        return dict.fromkeys(self.current(conn, project_id), 0)

    def set(self, conn, project_id, values):
        path = f'/quotas/{project_id}'
        try:
            request(
                conn.network,
                'PUT',
                path,
                json={'quota': {**values, 'force': True}},
            )
        except sdk_exc.BadRequestException as exc:
            if 'force' not in str(exc.details or exc):
                raise
            # before Yoga: no ``force``, and no usage check either
            request(conn.network, 'PUT', path, json={'quota': values})

    def reset(self, conn, project_id):
        conn.network.delete_quota(project_id, ignore_missing=True)


#: Octavia's quota resources (without the deprecated aliases)
OCTAVIA_QUOTAS = (
    'load_balancer',
    'listener',
    'pool',
    'member',
    'health_monitor',
    'l7policy',
    'l7rule',
)


class LoadBalancerQuotaApi(QuotaApi):
    """Octavia's row of a project: a limit of its own is not null."""

    service_type = 'load-balancer'

    def own(self, conn, project_id):
        rows = pages(
            conn.load_balancer,
            '/lbaas/quotas',
            'quotas',
            {'project_id': project_id},
        )
        defaults = octavia_defaults(conn)
        for row in rows:
            if row.get('project_id') == project_id:
                return {
                    k: row[k]
                    for k in OCTAVIA_QUOTAS
                    if row.get(k) is not None and row[k] != defaults.get(k)
                }
        return {}

    def frozen(self, conn, project_id):
        return dict.fromkeys(OCTAVIA_QUOTAS, 0)

    def set(self, conn, project_id, values):
        request(
            conn.load_balancer,
            'PUT',
            f'/lbaas/quotas/{project_id}',
            json={'quota': values},
        )

    def reset(self, conn, project_id):
        conn.load_balancer.delete_quota(project_id, ignore_missing=True)


#: Barbican's quota resources
BARBICAN_QUOTAS = ('secrets', 'orders', 'containers', 'consumers', 'cas')


class KeyManagerQuotaApi(QuotaApi):
    service_type = 'key-manager'

    def own(self, conn, project_id):
        try:
            body = request(
                conn.key_manager, 'GET', f'/project-quotas/{project_id}'
            ).json()
        except sdk_exc.NotFoundException:
            return {}  # none of its own
        return {
            k: v
            for k, v in (body.get('project_quotas') or {}).items()
            if v is not None
        }

    def frozen(self, conn, project_id):
        return dict.fromkeys(BARBICAN_QUOTAS, 0)

    def set(self, conn, project_id, values):
        request(
            conn.key_manager,
            'PUT',
            f'/project-quotas/{project_id}',
            json={'project_quotas': values},
        )

    def reset(self, conn, project_id):
        conn.key_manager.delete_project_quota(project_id, ignore_missing=True)


class ContainerInfraQuotaApi(QuotaApi):
    """Magnum: one row per project and resource (``Cluster``)."""

    service_type = 'container-infrastructure-management'

    def own(self, conn, project_id):
        return {
            q['resource']: q['hard_limit']
            for q in pages(
                conn.container_infrastructure_management,
                '/quotas',
                'quotas',
                {'all_tenants': True},
            )
            if q['project_id'] == project_id
        }

    def frozen(self, conn, project_id):
        return {'Cluster': 0}

    def set(self, conn, project_id, values):
        api = conn.container_infrastructure_management
        have = self.own(conn, project_id)
        for resource_name, limit in sorted(values.items()):
            if resource_name in have:
                request(
                    api,
                    'PATCH',
                    f'/quotas/{project_id}/{resource_name}',
                    json=[
                        {
                            'op': 'replace',
                            'path': '/hard_limit',
                            'value': limit,
                        }
                    ],
                )
            else:
                request(
                    api,
                    'POST',
                    '/quotas',
                    json={
                        'project_id': project_id,
                        'resource': resource_name,
                        'hard_limit': limit,
                    },
                )

    def reset(self, conn, project_id):
        api = conn.container_infrastructure_management
        for resource_name in sorted(self.own(conn, project_id)):
            request(api, 'DELETE', f'/quotas/{project_id}/{resource_name}')


class UnifiedLimitsApi(QuotaApi):
    """Keystone's unified limits, which Nova and Glance may enforce
    instead of a quota set of their own: a project limit of 0 for every
    registered limit, one per service, region and resource
    (``<service_id>:<region_id>:<resource_name>``). A Keystone without
    the API (404) or without registered limits has nothing to freeze;
    Keystone deletes a project's limits with the project."""

    service_type = 'identity'

    def _list(self, conn, path, key, **params):
        what = f"Keystone's {key.replace('_', ' ')}"
        return keystone.complete(
            what, keystone.paged(conn, path, key, **params)
        )

    def _limits(self, conn, project_id):
        return {
            _limit_key(limit): limit
            for limit in self._list(
                conn, '/limits', 'limits', project_id=project_id
            )
            if limit.get('project_id') == project_id
        }

    def own(self, conn, project_id):
        return {
            key: limit['resource_limit']
            for key, limit in self._limits(conn, project_id).items()
        }

    def frozen(self, conn, project_id):
        try:
            registered = self._list(
                conn, '/registered_limits', 'registered_limits'
            )
        except sdk_exc.NotFoundException:
            return {}  # a Keystone without unified limits
        return {_limit_key(limit): 0 for limit in registered}

    def set(self, conn, project_id, values):
        have = self._limits(conn, project_id)
        new = []
        for key, value in sorted(values.items()):
            if key in have:
                request(
                    conn.identity,
                    'PATCH',
                    f"/limits/{have[key]['id']}",
                    json={'limit': {'resource_limit': value}},
                )
                continue
            service_id, region_id, resource_name = key.split(':', 2)
            new.append(
                {
                    'service_id': service_id,
                    'project_id': project_id,
                    'resource_name': resource_name,
                    'resource_limit': value,
                    **({'region_id': region_id} if region_id else {}),
                }
            )
        if new:
            request(conn.identity, 'POST', '/limits', json={'limits': new})

    def reset(self, conn, project_id):
        for limit in self._limits(conn, project_id).values():
            try:
                request(conn.identity, 'DELETE', f"/limits/{limit['id']}")
            except sdk_exc.NotFoundException:
                pass  # gone meanwhile


def _limit_key(limit: dict[str, Any]) -> str:
    return ':'.join(
        (
            limit.get('service_id') or '',
            limit.get('region_id') or '',
            limit.get('resource_name') or '',
        )
    )


#: the quota APIs the drain freezes, in this order
QUOTA_APIS: tuple[QuotaApi, ...] = (
    ComputeQuotaApi(),
    NetworkQuotaApi(),
    BlockStorageQuotaApi(),
    SharedFileSystemQuotaApi(),
    LoadBalancerQuotaApi(),
    KeyManagerQuotaApi(),
    ContainerInfraQuotaApi(),
    UnifiedLimitsApi(),
)
