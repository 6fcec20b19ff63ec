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

"""Issue 29 (1): a resource the project offered to another project (a
pending transfer) must never be deleted once the other project has
accepted it, however long the cascade has been retrying its delete."""

import pytest

from tests.unit import scenarios
from tests.unit.fakes.run import cascade_for


@pytest.mark.xfail(strict=True, reason="issue 29 (1): B's volume is deleted")
def test_volume_accepted_by_another_project_while_retried_is_not_deleted(
    cloud,
):
    """The issue's reproduction: A offered its volume to B (the volume is
    ``awaiting-transfer``, Cinder refuses its delete with 400 "Invalid
    volume"); B accepts while the cascade retries. B's volume must
    survive."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    vol = scenarios.volume(cloud, a)
    offer = cloud.offer_volume(vol)
    pc, targets, plan = cascade_for(cloud, a)
    accepted = []

    def b_accepts(event):
        if event.kind == 'retry' and not accepted:
            accepted.append(cloud.accept_volume_transfer(offer['id'], b))

    pc.on_event = b_accepts
    try:
        pc.execute(plan, targets)
    except Exception:  # refusing is fine; deleting B's volume is not
        pass
    if accepted == [True]:  # B took it: it is B's, and it stays
        assert cloud.get('volumes', vol['id']) is not None
