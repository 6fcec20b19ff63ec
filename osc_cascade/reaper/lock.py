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

"""The reaper's per-project locks: tooz's, the same the commands take on a
backend other than files (``workflows.tooz_locks``, where they live, so
that the commands need not import the reaper).

tooz is imported here, as the reaper loads this module, not only when its
locks are made: a process that has loaded tooz locks even files through it
(``workflows.actor``), since within one process only tooz's bookkeeping
excludes its locks from another actor's.
"""

from __future__ import annotations

import tooz.coordination  # noqa: F401  (loaded with the reaper: see above)

from osc_cascade.workflows.tooz_locks import Locks

__all__ = ['Locks']
