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

"""osc-cascade: an OpenStackClient plugin that deletes a project, a domain,
a compute service or a stuck cluster together with everything it owns, in
dependency order, and keeps whatever is not certainly its.

The packages are layers, each importing only those below it (``tox -e pep8``
checks it with ``tools/check-structure``): ``v1`` (the commands) and
``reaper`` (the service) -> ``workflows`` -> ``engine`` -> ``kinds`` ->
``api``, with the engine's model (``engine.resource``, ``errors``,
``planner``, ``graph``, ``retry``) below them all. ``plugin`` is OSC's entry
into the ``v1`` commands.
"""
