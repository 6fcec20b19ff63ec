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

"""The base classes of the quota kinds and of the drain's quota APIs."""

from __future__ import annotations

from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind, delete_of


class _Quota(ResourceKind):
    synchronous_delete = True
    #: the name prefix of the kinds whose deletes come first: ``compute``
    deletes_of: ClassVar[str]
    #: a listing refused (403) is a note of the search, not its end:
    #: Barbican 18 (2024.1) lets its service admin alone list project
    #: quotas (``engine.discovery``); the rows it holds stay
    refused_listing_is_note: ClassVar[bool] = True

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


def asked_at(microversion: str | None) -> dict[str, Any]:
    """The request's microversion argument: none where the service's
    quota sets need none."""
    return {'microversion': microversion} if microversion else {}


class _QuotaSets(_Quota):
    """Nova, Cinder and Manila: a project's quota set and its defaults,
    one project at a time (no list call, so nothing to page)."""

    #: the quota sets' path in the service's API
    path: ClassVar[str]
    #: the microversion the path needs (Manila's quota-sets: 2.7)
    microversion: ClassVar[str | None] = None

    def api(self, conn: Any) -> Any:
        """The service's SDK adapter."""
        raise NotImplementedError

    def customised(self, conn, project_id):
        if project_id is None:
            return []  # these APIs cannot list projects
        api = self.api(conn)

        def values(suffix=''):
            # raw: quota sets as each service answers (quota.compute says why)
            found = request(
                api,
                'GET',
                f'{self.path}/{project_id}{suffix}',
                **asked_at(self.microversion),
            ).json()['quota_set']
            found.pop('id', None)
            return found

        try:
            own, defaults = values(), values('/defaults')
        except sdk_exc.NotFoundException:
            return []  # a cloud without the quota-set API has none
        return [(project_id, {})] if own != defaults else []

    def delete(self, conn, ref):
        # raw: quota sets as each service answers (quota.compute says why)
        request(
            self.api(conn),
            'DELETE',
            f'{self.path}/{ref.id}',
            **asked_at(self.microversion),
        )


class QuotaApi:
    """One service's per-project quota API. ``own`` is what the project
    has of its own (what a reset would lose); ``current`` the values in
    force, for the read-back; ``frozen`` the values of the freeze."""

    service_type: ClassVar[str]
    #: for a freeze at usage (Cinder's), the kinds (a name prefix:
    #: ``block_storage``) whose deletes lower it (``workflows.drain``'s
    #: ``Lowering``); '': a freeze at 0, nothing to lower
    lowered_by: ClassVar[str] = ''
    #: the service is one for every region (Keystone: its limits are per
    #: project, service, region and resource): frozen, recorded, restored
    #: and released once, in the first region of the catalog offering it
    one_for_all_regions: ClassVar[bool] = False

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
    #: the microversion the path needs (Manila's quota-sets: 2.7)
    microversion: ClassVar[str | None] = None
    #: the service takes ``force`` to set a limit below usage
    force: ClassVar[bool] = True
    #: keys that are no count of anything (a size per resource)
    untouched: ClassVar[frozenset[str]] = frozenset()
    #: the service's reset (the DELETE) takes more than the project's own
    #: values (Nova's and Manila's: the per-user rows too): the restore
    #: puts the values back by PUT alone (``restore``)
    reset_takes_more: ClassVar[bool] = False

    def api(self, conn: Any) -> Any:
        raise NotImplementedError

    def _values(self, conn, project_id, suffix='', **params):
        # raw: quota sets as each service answers (quota.compute says why)
        found = request(
            self.api(conn),
            'GET',
            f'{self.path}/{project_id}{suffix}',
            params=params or None,
            **asked_at(self.microversion),
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
        # raw: quota sets as each service answers (quota.compute says why)
        request(
            self.api(conn),
            'PUT',
            f'{self.path}/{project_id}',
            json={'quota_set': body},
            **asked_at(self.microversion),
        )

    def reset(self, conn, project_id):
        # raw: quota sets as each service answers (quota.compute says why)
        request(
            self.api(conn),
            'DELETE',
            f'{self.path}/{project_id}',
            **asked_at(self.microversion),
        )

    def restore(self, conn, project_id, own):
        """Back to exactly ``own`` (the defaults elsewhere). Where the
        reset takes more than the drain changed, by PUT alone: every value
        that differs from ``own``, or from the default where ``own`` has
        none, is put back; nothing else is touched. Nova's API has no
        delete of one value, so a value that was the default is put as
        the default (it reads the same, and no longer follows a change of
        the defaults): that, rather than a reset that destroys the
        per-user quotas (which no API lists, so none could be recorded)."""
        if not self.reset_takes_more:
            return super().restore(conn, project_id, own)
        defaults = self._values(conn, project_id, '/defaults')
        now = self.current(conn, project_id)
        back = {
            **{
                k: defaults[k] for k in now if isinstance(defaults.get(k), int)
            },
            **own,
        }
        changed = {k: v for k, v in back.items() if now.get(k) != v}
        if changed:
            self.set(conn, project_id, changed)
