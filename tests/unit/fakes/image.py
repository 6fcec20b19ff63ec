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

"""Glance: images, their members, and the 403 of a protected image."""

from __future__ import annotations

import re
from urllib import parse

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    ENDPOINTS,
    matches,
    page,
    versions,
)


class Image:
    def _image(self, method, path, query, body):
        if path in ('', '/'):
            return 300, versions('v2.16', ENDPOINTS['image'] + '/v2/')
        if path == '/v2/images':
            return self._glance_list(query)
        m = re.fullmatch(r'/v2/images/([^/]+)(/members)?', path)
        if m:
            image = self.get('images', m.group(1))
            if image is None:
                return 404, {'message': 'not found'}
            if m.group(2):
                return 200, {
                    'members': [
                        {
                            'member_id': mid,
                            'image_id': image['id'],
                            'status': 'accepted',
                        }
                        for mid in image.get('members', [])
                    ]
                }
            if method == 'GET':
                return 200, image
            if method == 'PATCH':
                for op in body:
                    image[op['path'].lstrip('/')] = op.get('value')
                return 200, image
            if method == 'DELETE':
                if image.get('protected'):
                    return 403, {'message': 'Image is protected'}
                self._remove('images', image['id'])
                return 204, None
        return 404, {'message': 'no route'}

    #: Glance's ``limit_param_default`` and ``api_limit_max``
    glance_page = 25
    glance_max_limit = 1000

    def _glance_user(self) -> str | None:
        """The project of a regular user's token; None for an admin's."""
        return None

    def _glance_visible(self, image, visibility, user) -> bool:
        """glance.db.sqlalchemy.api's ``_select_images_query`` and
        ``_image_get_all``: a regular user sees public and community
        images, its own and those shared with it (membership accepted);
        an admin every one. Then a ``visibility`` keeps that one alone
        (``all``: any); without one, community images only the caller's
        own (an admin's token's project's)."""
        if user is not None and not (
            image.get('visibility') in ('public', 'community')
            or image.get('owner') == user
            or (
                image.get('visibility') == 'shared'
                and user in image.get('members', [])
            )
        ):
            return False
        if visibility:
            return visibility in ('all', image.get('visibility'))
        own = ADMIN_PROJECT if user is None else user
        return image.get('visibility') != 'community' or (
            image.get('owner') == own
        )

    def _glance_list(self, query):
        """A page of images as Glance answers it: hidden images only when
        asked for, and then alone; what the caller may see
        (``_glance_visible``); at most ``limit`` (25 by default, 1000 at
        most) after ``marker``, the next page in ``next`` (the same
        query, the marker moved), as glance.api.v2.images does."""
        hidden = query.get('os_hidden', 'false').lower() == 'true'
        user = self._glance_user()
        items = [
            i
            for i in self.all('images')
            if matches(i, query, {'owner'})
            and bool(i.get('os_hidden')) == hidden
            and self._glance_visible(i, query.get('visibility'), user)
        ]
        size = (
            self.glance_max_limit if query.get('limit') else self.glance_page
        )
        chunk, link = page(items, query, min(size, self.glance_max_limit))
        body = {'images': chunk, 'first': '/v2/images'}
        if link:
            following = {**query, 'marker': chunk[-1]['id']}
            body['next'] = '/v2/images?' + parse.urlencode(following)
        return 200, body


class ImageMembers:
    """The delete of an image's member."""

    def _image(self, method, path, query, body):
        m = re.fullmatch(r'/v2/images/([^/]+)/members/([^/]+)', path)
        if m and method == 'DELETE':
            image = self.get('images', m.group(1))
            if image is None or m.group(2) not in image.get('members', []):
                return 404, {'message': 'no such member'}
            image['members'].remove(m.group(2))
            return 204, None
        return super()._image(method, path, query, body)
