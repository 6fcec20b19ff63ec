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

from tests.unit.fakes.common import ENDPOINTS, matches, versions


class Image:
    def _image(self, method, path, query, body):
        if path in ('', '/'):
            return 300, versions('v2.16', ENDPOINTS['image'] + '/v2/')
        if path == '/v2/images':
            # as Glance: hidden images only when asked for, and then alone
            hidden = query.get('os_hidden', 'false').lower() == 'true'
            items = [
                i
                for i in self.all('images')
                if matches(i, query, {'owner'})
                and bool(i.get('os_hidden')) == hidden
            ]
            return 200, {'images': items}
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
