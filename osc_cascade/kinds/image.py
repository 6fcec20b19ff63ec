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
projects' images.

An image is read again before its delete (``reread``): an admin may have
given it to another project (Glance lets only admins replace ``owner``),
and its owner may have made it public, community or shared since the
plan (visibility is the owner's to change): then it is kept.
"""

from __future__ import annotations

import itertools

from openstack.image.v2 import image as sdk_image

from osc_cascade.api import direct
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out, retried
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


@register
class Image(ResourceKind):
    name = 'image.image'
    sdk_get = 'image.get_image'
    sdk_resource = sdk_image.Image
    owner_attr = 'owner'
    reread = True
    service_type = 'image'
    synchronous_delete = True

    def list(self, conn, project_id):
        refs = []
        # Glance leaves hidden images (os_hidden) out of a listing unless
        # asked for them alone: both listings, or they would stay behind
        # (their raw JSON: an SDK resource per image cost more than the
        # call)
        listed = {
            image['id']: image
            for image in itertools.chain.from_iterable(
                pages(
                    conn.image,
                    '/images',
                    'images',
                    {
                        k: v
                        for k, v in (
                            ('owner', project_id),
                            ('visibility', 'all'),
                            ('os_hidden', hidden),
                        )
                        if v is not None
                    },
                )
                for hidden in (False, True)
            )
        }
        # 'shared' only means "may have members": ask who, of each at once
        # (kinds.calls)
        shared = [i for i in listed.values() if i['visibility'] == 'shared']
        members = dict(
            zip(
                (image['id'] for image in shared),
                fan_out(
                    lambda image: sorted(
                        m.member_id for m in conn.image.members(image['id'])
                    ),
                    shared,
                    service=self.service_type,
                ),
                strict=True,
            )
        )
        for image in listed.values():
            refs.append(
                item_ref(
                    self.name,
                    image,
                    project_key='owner',
                    visibility=image.get('visibility'),
                    protected=bool(image.get('protected')) or None,
                    shared_with=members.get(image['id'], []),
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

    def use_changed(self, conn, found, ref):
        visibility = getattr(found, 'visibility', None)
        if (
            self.options.get('delete_shared')
            or visibility == ref.attrs.get('visibility')
            or visibility not in ('public', 'community', 'shared')
        ):
            return ''
        return f'it is now {visibility}: others may use it'

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
        direct.delete(
            conn.image, sdk_image.Image, ref.id, ignore_missing=False
        )

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
    lists_every_project = True
    synchronous_delete = True

    def list(self, conn, project_id):
        # Glance cannot filter images by member: every shared image is
        # asked who its members are (an admin sees them all).
        images = [
            image
            for image in pages(
                conn.image,
                '/images',
                'images',
                {'visibility': 'shared', 'member_status': 'all'},
            )
            # a filter a cloud may ignore
            if image.get('visibility') == 'shared'
        ]
        # one call per image, retried alone, made at once (kinds.calls)
        members = fan_out(
            lambda image: retried(
                lambda: list(conn.image.members(image['id']))
            ),
            images,
            service=self.service_type,
        )
        refs = [
            ResourceRef(
                kind=self.name,
                id=f'{image["id"]}/{m.member_id}',
                name=image.get('name') or '',
                project_id=m.member_id,
                attrs={'image_id': image['id']},
            )
            for image, found in zip(images, members, strict=True)
            for m in found
        ]
        return owned(refs, project_id)

    def delete(self, conn, ref):
        conn.image.remove_member(
            ref.project_id, ref.attrs['image_id'], ignore_missing=False
        )
