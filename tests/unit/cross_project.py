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

"""What the tests of resources kept for another project's use share."""

from __future__ import annotations

import pytest

from osc_cascade.engine.errors import CascadeError
from tests.unit.fakes.run import cascade_for


def kept_and_refused(cloud, project_id, resource_id) -> str:
    """The cascade of the project, planned and run: its plan keeps exactly
    one resource, ``resource_id``, and the run refuses before changing
    anything, saying why. Returns the reason."""
    pc, targets, plan = cascade_for(cloud, project_id)
    [kept] = plan.kept()
    assert kept.target.id == resource_id
    with pytest.raises(CascadeError, match='Nothing was changed') as refused:
        pc.execute(plan, targets)
    assert kept.params['reason'] in str(refused.value)
    assert cloud.changes == []
    return kept.params['reason']
