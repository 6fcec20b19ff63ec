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

"""Barbican's API application, from the paste pipeline in etc/barbican.

``barbican.wsgi.api`` reads ``/etc/barbican/barbican-api-paste.ini``,
always; this loads the copy that minicloud writes (``MINICLOUD_PASTE``).
Barbican's config (each of its plugin modules parses one of its own, from
the default places only) is ``$HOME/barbican.conf``: the unit's ``HOME``
is ``etc/barbican``.
"""

import os

from paste import deploy

application = deploy.loadapp('config:' + os.environ['MINICLOUD_PASTE'])
