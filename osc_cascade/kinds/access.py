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

"""What the access kinds share: a project's access to a private flavor,
volume type or share type that the cloud's admin owns.

The service cannot list what a project was given access to: every private
flavor or type is asked for its access list (admin calls), and a
resource's "delete" takes the project off that list. The flavor or type
itself is never touched, nor another project's access to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import ResourceKind, owned
from osc_cascade.kinds.calls import fan_out


class AccessKind(ResourceKind):
    synchronous_delete = True
    needs_admin = (
        'the access lists of private flavors and types are admin calls'
    )

    def listing(self, conn: Any) -> Iterable[Any]:
        """The SDK's list of the private flavors or types (a filter the
        service may ignore: each is checked again)."""
        raise NotImplementedError

    def private(self, conn: Any) -> Iterable[tuple[str, str]]:
        """The id and name of every private flavor or type (a public one
        has no access list)."""
        return (
            (t.id, t.name or '') for t in self.listing(conn) if not t.is_public
        )

    def members(self, conn: Any, of: str) -> Iterable[str]:
        """The projects on its access list."""
        raise NotImplementedError

    def remove(self, conn: Any, of: str, project_id: str) -> None:
        """Takes the project off its access list."""
        raise NotImplementedError

    def list(self, conn, project_id):
        private = list(self.private(conn))
        # one access list per private flavor or type, asked at once
        # (kinds.calls)
        members = fan_out(
            lambda p: list(self.members(conn, p[0])),
            private,
            service=self.service_type,
        )
        return owned(
            [
                ResourceRef(
                    kind=self.name,
                    id=f'{of}/{member}',
                    name=name,
                    project_id=member,
                    attrs={'of': of},
                )
                for (of, name), found in zip(private, members, strict=True)
                for member in found
            ],
            project_id,
        )

    def delete(self, conn, ref):
        self.remove(conn, ref.attrs['of'], ref.project_id)
