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

"""Small pieces that tools/minicloud adds to the service venv.

Nothing here is imported by the project under test.  The modules run inside
the minicloud service venv (OpenStack servers from PyPI):

- ``wsgi``: one gunicorn entry point for every API service;
- ``ml2_mech``: an agent-less ML2 mechanism driver that binds every port;
- ``cinder_driver``: a file-backed fake Cinder volume driver (backups work);
- ``helper``: Swift rings and Octavia certificates;
- ``setup_cloud``: identity data, shared resources and readiness checks,
  all in one openstacksdk process;
- ``one_process``: an oslo.service server of one worker without its idle
  master process.
"""
