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

"""Quotas: a project's own quota values, reset in each service at the end.

A service keeps a project's quota rows after the project is gone; resetting
them (the quota APIs' DELETE) removes them. Each service's reset comes
after every delete of that service's kinds in the project, so it is the
last thing done there. A quota is listed only while it differs from the
defaults, which is also how a verification round knows the reset is done.

Designate is left out: its API shows a project's quotas merged with the
defaults and has no call for the defaults alone, so a reset could never be
told from a quota nobody set. Keystone's unified limits go with the project.
"""

from __future__ import annotations

from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

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
        return [
            (q['project_id'], {})
            for q in rows
            if project_id in (None, q['project_id'])
            and any(
                v is not None
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
