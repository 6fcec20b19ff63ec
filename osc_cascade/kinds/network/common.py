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

"""What every Neutron kind shares: its base classes and raw listing.

A kind of a Neutron extension exists only where its extension is loaded
(``_ExtensionKind``). The SDK's generators follow Neutron's next links.
"""

from __future__ import annotations

from typing import Any, ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade.api import batched, direct
from osc_cascade.engine import resource
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind, owned, unless_absent
from osc_cascade.kinds.paging import pages


class _NeutronKind(ResourceKind):
    service_type = 'network'
    synchronous_delete = True
    #: the SDK proxy's delete method, e.g. ``delete_port``
    sdk_delete: str

    def fetched(self, conn, ref):
        # what the listing of the moment does not hold (gone, hidden, or
        # a listing cut short) or a failed listing is read alone, as
        # before: "gone" only ever from the service's own 404
        if self.sdk_resource is not None:
            found = neutron_listed(
                conn,
                self.sdk_resource.base_path,
                self.sdk_resource.resources_key,
                ref.id,
            )
            if found is not None:
                return direct.Found(self.sdk_resource, found)
        return super().fetched(conn, ref)

    def delete(self, conn, ref):
        if self.sdk_resource is not None:
            direct.delete(
                conn.network, self.sdk_resource, ref.id, ignore_missing=False
            )
        else:
            getattr(conn.network, self.sdk_delete)(
                ref.id, ignore_missing=False
            )


def others(uses: list[list[str]]) -> str:
    """`` (and N more)`` when a keep names one user of several."""
    return f' (and {len(uses) - 1} more)' if len(uses) > 1 else ''


def keep_if_used(
    ref: ResourceRef, uses: list[list[str]] | None, says: str
) -> resource.Step | None:
    """The keep of a resource that other projects use (``uses``: what uses
    it and its project, pairs or longer lists that begin so), ``says``
    formatted with the first's ``user`` and ``project`` and ``more``
    (`` (and N more)``), or None."""
    if not uses:
        return None
    user, project = uses[0][:2]
    return resource.keep(
        ref, says.format(user=user, project=project, more=others(uses))
    )


def neutron_items(conn, path, key, project_id=None, **filters):
    """The raw JSON items of a Neutron list (``/ports``), the project's
    (every project's for None), page by page as the SDK reads them: an SDK
    resource per item cost more than the rest of a discovery (2.5 ms a
    resource at N=10,000)."""
    return pages(
        conn.network, path, key, {'project_id': project_id, **filters}
    )


def neutron_items_by(conn, path, key, field, value) -> list[dict[str, Any]]:
    """The raw items of a Neutron list whose ``field`` is ``value``,
    listed with the values other threads ask of the same list at the same
    moment (``api.batched``: Neutron takes a filter several times as any
    of its values); ``batched.Failed`` if that listing failed."""
    return batched.batches(conn.network, path, field).items(
        value, lambda values: neutron_items(conn, path, key, **{field: values})
    )


def neutron_items_where(conn, path, key, field, value) -> list[Any]:
    """``neutron_items_by``, or where that listing failed, the list by
    this one value alone (its error raised as before)."""
    try:
        return neutron_items_by(conn, path, key, field, value)
    except batched.Failed:
        return list(neutron_items(conn, path, key, **{field: value}))


def neutron_listed(conn, path, key, id_) -> dict[str, Any] | None:
    """The raw item ``id_`` of a Neutron list, read with the other
    threads' reads of the moment (``neutron_items_by``), or None where
    that listing does not hold it or failed: read it alone."""
    try:
        found = neutron_items_by(conn, path, key, 'id', id_)
    except batched.Failed:
        return None
    return found[0] if found else None


def neutron_project(item) -> str:
    """An item's project, as the SDK reads it (``tenant_id`` on a Neutron
    that names no ``project_id``)."""
    return item.get('project_id') or item.get('tenant_id') or ''


def may_have_security_groups(conn, project_id) -> bool:
    """Through a token scoped to the project: whether it may have security
    groups here. Neutron answers a list of groups or rules by first making
    the ``default`` group of the token's project where it has none
    (``_ensure_default_security_group``, which a reader of the project may
    do), so listing them in a region where the project had nothing would
    leave a group there that only an admin may delete, an orphan once the
    project is gone. The project's quota details count its groups in the
    database and make none: one call per region (at any N); where they
    cannot be read (no ``quota_details``, a policy), the groups are listed
    as before, and a group made so is the one ``DEFAULT_GROUP_STAYS``
    names."""
    try:
        details = conn.network.get_quota(project_id, details=True)
        return bool(details.security_groups['used'])
    except (sdk_exc.HttpException, KeyError, TypeError, ValueError):
        return True


class _ExtensionKind(_NeutronKind):
    #: the alias of the Neutron extension that adds the resource
    extension: ClassVar[str]
    #: the SDK proxy's list method, e.g. ``qos_policies``
    sdk_list: ClassVar[str]
    # ``lists_every_project`` where Neutron's list takes no project filter
    # (filter validation refuses one the plugin does not mark a filter)

    def list(self, conn, project_id):
        if self.extension not in self.neutron_extensions(conn):
            return []
        query = (
            {'project_id': project_id}
            if project_id and not self.lists_every_project
            else {}
        )
        return owned(
            self.refs(
                conn, getattr(conn.network, self.sdk_list)(**query), project_id
            ),
            project_id,
        )

    def refs(self, conn, items, project_id):
        return [self.ref(item) for item in items]

    def neutron_extensions(self, conn: Any) -> frozenset[str]:
        """The aliases of Neutron's loaded extensions, asked once per
        connection and workflow: every extension kind needs them in every
        discovery round, and the benchmark showed those identical GETs
        were a fifth of a small cascade's requests (Neutron answers them
        one at a time)."""
        return self.facts.get(
            'neutron-extensions',
            conn,
            lambda: frozenset(
                e.alias for e in unless_absent(conn.network.extensions)
            ),
        )


def users_elsewhere(users, project_id):
    """The ``[what, project]`` of ``users`` that are not the project's."""
    return sorted(u for u in users if u[1] != project_id)


def by_item(uses) -> dict[str, list[list[str]]]:
    """``(item, user, project)`` triples as each item's ``[user,
    project]`` pairs."""
    found: dict[str, list[list[str]]] = {}
    for item, user, project in uses:
        if item:
            found.setdefault(item, []).append([user, project])
    return found


class _UsedElsewhere(_ExtensionKind):
    """A kind whose resource is kept while another project's uses it
    (its ``elsewhere`` attr: ``[user, project]`` pairs, or longer lists
    that begin so)."""

    #: the keep's reason, of the first user: ``{user}``, ``{project}``
    elsewhere_says: ClassVar[str]

    def users(self, conn, items) -> dict[str, list[list[str]]]:
        """Every project's users of each item: ``[user, project]``."""
        raise NotImplementedError

    def attrs_of(self, item, users) -> dict:
        """What else the item's reference needs."""
        return {}

    def refs(self, conn, items, project_id):
        items = list(items)
        users = self.users(conn, items) if items else {}
        return [
            self.ref(
                i,
                elsewhere=users_elsewhere(users.get(i.id, []), i.project_id),
                **self.attrs_of(i, users.get(i.id, [])),
            )
            for i in items
        ]

    def primary_step(self, ref):
        kept = keep_if_used(
            ref, ref.attrs.get('elsewhere'), self.elsewhere_says + '{more}'
        )
        return kept or super().primary_step(ref)
