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

"""osc-cascade's benchmarks; ``log`` is the progress line they all
print."""

import sys
import time


def log(msg: str) -> None:
    """A benchmark's progress line, on stderr."""
    print(time.strftime('%H:%M:%S ') + msg, file=sys.stderr, flush=True)
