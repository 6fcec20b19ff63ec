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
"""

from __future__ import annotations

from osc_cascade.kinds.base import ResourceKind
from osc_cascade.kinds.registry import register

UNREACHABLE = (
    'Barbican lists them only to a token scoped to their own project (an '
    "admin's list ignores any project filter), which the cascade (an admin "
    'of another project, on a project it disables first) cannot have: any '
    'the project holds stay in Barbican; delete them as a member of the '
    'project before the cascade'
)


class _Barbican(ResourceKind):
    service_type = 'key-manager'
    unreachable = UNREACHABLE


@register
class Secret(_Barbican):
    name = 'key_manager.secret'


@register
class SecretContainer(_Barbican):
    name = 'key_manager.container'


@register
class Order(_Barbican):
    name = 'key_manager.order'
