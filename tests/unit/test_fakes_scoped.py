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

"""The scoped fake does what Nova does to a non-admin: read from
``nova.compute.api`` (``check_instance_lock``: a locked server's delete
is an admin's alone, ``InstanceIsLocked`` answered as 409)."""

from openstack import exceptions as sdk_exc
import pytest

from tests.unit import scenarios
from tests.unit.fakes.scoped import ScopedCloud


def test_a_locked_server_is_deleted_by_an_admin_alone():
    with ScopedCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        user = cloud.add_user('member')
        cloud.assign(user, 'member', project={'id': pid})
        net, subnet = scenarios.network(cloud, pid)
        vm = scenarios.server(cloud, pid, net=net, subnet=subnet)
        vm['locked'] = True
        member = cloud.connection_as(user, project_id=pid)

        with pytest.raises(sdk_exc.ConflictException, match='is locked'):
            member.compute.delete_server(vm['id'])
        assert not cloud.get('servers', vm['id']).get('task_state')

        cloud.connection().compute.delete_server(vm['id'])  # accepted
        assert cloud.get('servers', vm['id'])['task_state'] == 'deleting'
