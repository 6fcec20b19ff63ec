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

"""What the services leave out of a plain listing is deleted too: Glance's
hidden images, and server groups beyond one page of nova's max_limit (the
minicloud runs nova with ``[api] max_limit = 5``)."""

import pytest

from tests.functional import topology
from tests.functional.topology import unique

pytestmark = pytest.mark.functional


def test_hidden_images_and_server_groups_beyond_a_page_are_deleted(admin, cli):
    project = topology.make_project(admin, unique('hidden'))
    conn = topology.scoped(admin, project)
    hidden = conn.image.update_image(
        conn.image.create_image(
            name='hidden', disk_format='raw', container_format='bare'
        ),
        is_hidden=True,  # on create the SDK sends it as a string
    )
    groups = [
        conn.compute.create_server_group(name=f'g{i}', policy='affinity')
        for i in range(7)
    ]
    # what a plain listing shows: not the hidden image
    assert hidden.id not in {i.id for i in conn.image.images(owner=project.id)}

    result = cli('project', 'delete', '--cascade', '--yes', project.id)

    assert result.code == 0, result.stdout + result.stderr
    assert admin.image.find_image(hidden.id) is None
    # each by itself: a listing would show only nova's first page
    for group in groups:
        assert admin.compute.find_server_group(group.id) is None, group.name
    assert admin.identity.find_project(project.id) is None
