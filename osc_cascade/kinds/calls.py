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

"""The kinds' sub-calls: what a kind calls inside ``list``, ``parts`` or a
helper of theirs, besides the call the engine makes for it.

Discovery retries a kind's whole ``list``, and the executor each part and
delete. A list that makes one more call per stack or per container would
then be made whole again for one 503 among its calls, and with a few per
cent of calls failing it would rarely pass at all (at 20 %, a list of
ten calls passes whole once in ten attempts). So each sub-call is retried
on its own, as the engine retries: while it fails in a way that may pass
(429, 5xx, no answer), a few times, backing off; what fails otherwise (a
404 a kind expects, a 403) is raised at once, as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from osc_cascade.engine.retry import Clock, RetryPolicy, retrying

T = TypeVar('T')

#: fewer attempts and shorter waits than a step's: the engine retries the
#: list or the step around them too
POLICY = RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=4.0)


def retried(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, retried while it fails in a way that may
    pass."""
    return retrying(lambda: call(*args, **kwargs), retry=POLICY, clock=Clock())
