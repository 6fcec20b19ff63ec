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

"""The engine: discovery, the planner and the executor that every command
shares.

Its model (``resource``, ``errors``, ``planner``, ``graph``, ``retry``,
and a selective cleanup's ``selection`` and ``closure``) is pure: what
a resource, a step, a plan and an error are; it imports nothing of
osc_cascade outside itself, and every layer may import it. ``heap``, with
them, sets how often Python collects cycles while a plan is made or run:
the one process-wide setting the engine touches. The rest
(``discovery``, the executor, ``listing``, ``limiter``, ``regions``,
``planfile``, ``report``, ...) drives the kinds, so it may import
``osc_cascade.kinds`` and ``osc_cascade.api`` but never the workflows or the
commands.
"""
