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

"""What a cascade is asked to do (``project delete --cascade``'s options,
and those the sweep and the drain give it): ``CascadeOptions``.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class CascadeOptions:
    recursive: bool = False
    #: delete shared and public images and shared zones too
    delete_shared: bool = False
    #: reset what its service will not delete from (``--force-stuck``)
    force_stuck: bool = False
    parallel: int = 10
    #: worker processes for the plan's HTTP exchanges (``api.workers``);
    #: None: one per core for a large plan, 0: none
    workers: int | None = None
    timeout: float = 600.0
    #: discovery rounds after the plan has run, to catch what appeared
    verify_rounds: int = 3
    #: where to write what was done, as JSON (``engine.report``)
    report_file: str | None = None
    #: who runs it, where and since when (``report.context``)
    report_context: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the oldest saved plan that may be run, in seconds
    plan_max_age: float = 24 * 3600
    #: the regions to cascade in (``--region``); none: every region. The
    #: projects are deleted only if the other regions hold nothing of them
    regions: tuple[str, ...] = ()
    #: seconds to wait after the projects are deleted (the services' token
    #: cache time) before deleting what appeared with their IDs; 0: none
    settle: float = 0.0
    #: where the per-project locks live (``actor.coordination_url``);
    #: None: the environment, clouds.yaml, or this host's directory
    coordination_url: str | None = None
