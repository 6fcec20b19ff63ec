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

"""Glance: images owned by the project, and its memberships of other
projects' images."""

from __future__ import annotations

import itertools

from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import retried
from osc_cascade.kinds.registry import register


@register
class Image(ResourceKind):
    name = 'image.image'
    sdk_get = 'image.get_image'
    service_type = 'image'
    synchronous_delete = True

    def list(self, conn, project_id):
        refs = []
        # Glance leaves hidden images (os_hidden) out of a listing unless
        # asked for them alone: both listings, or they would stay behind
        listed = {
            image.id: image
            for image in itertools.chain.from_iterable(
                conn.image.images(
                    owner=project_id, visibility='all', is_hidden=hidden
                )
                for hidden in (False, True)
            )
        }
        for image in listed.values():
            shared_with = []
            if image.visibility == 'shared':
                # 'shared' only means "may have members": ask who
                shared_with = sorted(
                    m.member_id for m in conn.image.members(image.id)
                )
            refs.append(
                self.ref(
                    image,
                    project_id=image.owner_id or '',
                    visibility=image.visibility,
                    protected=bool(image.is_protected) or None,
                    shared_with=shared_with,
                )
            )
        return owned(refs, project_id)

    def reason_to_keep(self, ref):
        """Images others may depend on are deleted only when asked."""
        if self.options.get('delete_shared'):
            return None
        visibility = ref.attrs.get('visibility')
        if visibility in ('public', 'community'):
            return f'{visibility} image'
        if ref.attrs.get('shared_with'):
            return 'shared with ' + ', '.join(ref.attrs['shared_with'])
        if ref.attrs.get('protected'):
            return 'protected image'
        return None

    def primary_step(self, ref):
        reason = self.reason_to_keep(ref)
        if reason:
            return resource.keep(ref, reason, shared=True)
        return resource.delete(ref)

    def relations(self, ref, inventory):
        if ref.attrs.get('protected') and not self.reason_to_keep(ref):
            yield Edge(
                Step('unprotect_image', ref), delete_of(self.name, ref.id)
            )

    def delete(self, conn, ref):
        conn.image.delete_image(ref.id, ignore_missing=False)

    def apply(self, conn, step):
        if step.action != 'unprotect_image':
            return super().apply(conn, step)
        conn.image.update_image(step.target.id, is_protected=False)


@register
class ImageMember(ResourceKind):
    """The project's membership of another project's image: removing it
    takes the image out of the project's view and leaves the image."""

    name = 'image.member'
    service_type = 'image'
    synchronous_delete = True

    def list(self, conn, project_id):
        # Glance cannot filter images by member: every shared image is
        # asked who its members are (an admin sees them all).
        refs = []
        for image in conn.image.images(
            visibility='shared', member_status='all'
        ):
            if image.visibility != 'shared':
                continue  # a filter a cloud may ignore
            refs.extend(
                ResourceRef(
                    kind=self.name,
                    id=f'{image.id}/{m.member_id}',
                    name=image.name or '',
                    project_id=m.member_id,
                    attrs={'image_id': image.id},
                )
                # one call per image: retried alone (kinds.calls)
                for m in retried(
                    lambda i=image.id: list(conn.image.members(i))
                )
            )
        return owned(refs, project_id)

    def delete(self, conn, ref):
        conn.image.remove_member(
            ref.project_id, ref.attrs['image_id'], ignore_missing=False
        )
