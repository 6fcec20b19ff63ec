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

"""The reaper: a service that purges what every deleted project left.

It listens to Keystone's ``identity.project.deleted`` (and
``identity.domain.deleted``) notifications in an oslo.messaging listener
pool of its own (``listener``), waits a grace period, and purges the
project's orphans in every service and region with the orphan search's
discovery, planner and executor (``sweep``), one actor per project at a
time through a tooz lock (``lock``); a periodic full orphan sweep runs
beside it. Failed purges are retried with backoff (``schedule``). The
service and its console script are ``service`` and ``main``; its options
are ``config``'s.

Only this package imports oslo.messaging, oslo.config and tooz as it loads
(the ``reaper`` extra): the CLI plugin stays light, and loads tooz only to
lock on a backend other than files (``workflows.tooz_locks``). Like the
commands it may import the workflows, the engine and the kinds, and never
the commands.
"""
