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

"""Barbican: secrets, containers and orders, which the cascade cannot reach.

Barbican lists a project's secrets, containers and orders only to a token
scoped to that project: an admin's list shows the admin's own project's,
whatever project filter it names (``project_id``, ``all_projects``: both
ignored), and nothing in its API lists another project's. An admin (the
role ``admin`` in any project, Barbican's defaults) may read and delete a
secret whose ID it knows, but not a container (403) or an order (404,
looked up within the token's project); none of that helps a cascade that
cannot list them. The cascade disables the project before it deletes
anything, and Keystone gives no token for a disabled project, so no scope
would do. Discovery therefore says, in a note, that these stay in
Barbican; the project's Barbican quota, which the admin API does reach, is
reset with the other quotas. All of it is what the minicloud's real
Barbican does (``tests/functional/test_real_barbican.py``).

Through a token scoped to the project (the cascade without cloud admin,
``workflows.scoped``: a domain manager's, a member's ``--keep-project``)
Barbican lists them, the token's project's alone, and they are deleted
as the project. A secret is deleted at microversion 1.2, from which
Barbican refuses the delete of one with consumers (another service's use
of it) instead of dropping them; a container with consumers is kept (its
delete drops them without a word). One private to another user of the
project (its ACL) is refused (403), which keeps the project.
"""

from __future__ import annotations

from typing import ClassVar

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.kinds.paging import pages
from osc_cascade.kinds.registry import register

UNREACHABLE = (
    'Barbican lists them only to a token scoped to their own project (an '
    "admin's list ignores any project filter), which the cascade (an admin "
    'of another project, on a project it disables first) cannot have: any '
    'the project holds stay in Barbican; delete them as a member of the '
    'project before the cascade'
)
#: from this microversion a secret with consumers refuses its delete
#: (409) instead of dropping them
REFUSES_IN_USE = {'OpenStack-API-Version': 'key-manager 1.2'}


class _Barbican(ResourceKind):
    service_type = 'key-manager'
    synchronous_delete = True
    #: the collection (``secrets``): its path, its answer's key, and its
    #: items' ``<name>_ref`` href, whose last part is the ID
    collection: ClassVar[str]
    #: the headers of its delete
    delete_headers: ClassVar[dict[str, str]] = {}

    @property
    def unlisted(self) -> str:
        # a token scoped to the project lists them; an admin's cannot
        return '' if self.scoped else UNREACHABLE

    def list(self, conn, project_id):
        if not self.scoped or project_id is None:
            return []  # beyond reach (unlisted says so)
        ref_key = self.collection[:-1] + '_ref'
        # the token's project's alone: Barbican scopes lists to it
        return [
            ResourceRef(
                kind=self.name,
                id=item[ref_key].rstrip('/').rsplit('/', 1)[-1],
                name=item.get('name') or '',
                project_id=project_id,
                attrs=self.attrs_of(item),
                created_at=item.get('created') or '',
            )
            for item in pages(
                conn.key_manager,
                f'/{self.collection}',
                self.collection,
                {'limit': 100},
            )
        ]

    def attrs_of(self, item) -> dict:
        return {'status': item.get('status') or ''}

    def delete(self, conn, ref):
        # raw: the SDK's secret ID is its whole href
        request(
            conn.key_manager,
            'DELETE',
            f'/{self.collection}/{ref.id}',
            headers=self.delete_headers,
        )


@register
class Secret(_Barbican):
    name = 'key_manager.secret'
    collection = 'secrets'
    # at 1.2: Barbican refuses it while another service uses it
    delete_headers = REFUSES_IN_USE


@register
class SecretContainer(_Barbican):
    name = 'key_manager.container'
    collection = 'containers'

    def attrs_of(self, item) -> dict:
        consumers = sorted(
            c.get('URL') or c.get('name') or ''
            for c in item.get('consumers') or []
        )
        return {**super().attrs_of(item), 'consumers': consumers}

    def primary_step(self, ref):
        consumers = ref.attrs.get('consumers')
        if consumers:
            return resource.keep(
                ref,
                'used by ' + ', '.join(consumers) + ', whose registration '
                'its delete would drop without a word',
            )
        return super().primary_step(ref)


@register
class Order(_Barbican):
    name = 'key_manager.order'
    collection = 'orders'
