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

"""A saved plan runs only on what the project still owns: a volume that
Cinder transferred to another project between the dry run and the run is
kept, on a real Cinder."""

import json

import pytest

from tests.functional import topology
from tests.functional.topology import unique

pytestmark = pytest.mark.functional


def test_a_volume_transferred_after_the_saved_plan_is_kept(
    admin, cli, tmp_path
):
    a = topology.make_project(admin, unique('plan-a'))
    b = topology.make_project(admin, unique('plan-b'))
    a_conn, b_conn = topology.scoped(admin, a), topology.scoped(admin, b)
    kept = a_conn.block_storage.create_volume(size=1, name='given-away')
    gone = a_conn.block_storage.create_volume(size=1, name='deleted')
    for vol in (kept, gone):
        topology.wait_status(
            lambda v=vol: a_conn.block_storage.get_volume(v.id),
            'available',
            f'volume {vol.name}',
        )
    path = tmp_path / 'plan.json'
    dry = cli(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--plan-file',
        str(path),
        a.id,
    )
    assert dry.code == 0, dry.stderr
    planned = {
        s['target']['id'] for s in json.loads(path.read_text())['steps']
    }
    assert {kept.id, gone.id} <= planned

    # the owner gives the volume to project B, which accepts it
    transfer = a_conn.block_storage.create_transfer(
        volume_id=kept.id, name='to-b'
    )
    b_conn.block_storage.accept_transfer(transfer.id, transfer.auth_key)
    assert admin.block_storage.get_volume(kept.id).project_id == b.id

    run = cli(
        'project',
        'delete',
        '--cascade',
        '--yes',
        '--plan-file',
        str(path),
        a.id,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert f'owner is now {b.id}: kept' in run.stderr
    assert admin.block_storage.get_volume(kept.id).status == 'available'
    assert admin.block_storage.find_volume(gone.id) is None
    assert admin.identity.find_project(a.id) is None
