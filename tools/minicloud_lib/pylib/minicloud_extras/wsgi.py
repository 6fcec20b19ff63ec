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

"""gunicorn entry point for every minicloud API service.

The OpenStack WSGI modules parse ``sys.argv`` with oslo.config, so gunicorn's
own command line must not reach them.  tools/minicloud starts gunicorn with

    MINICLOUD_WSGI_APP=<module>:<attribute>
    MINICLOUD_WSGI_ARGV=<JSON list used as sys.argv>

and ``minicloud_extras.wsgi:application`` as the application.  An older
release names a factory, ``<module>:<name>()`` (minicloud.releases).
"""

import importlib
import json
import os
import sys

sys.argv = json.loads(os.environ.get('MINICLOUD_WSGI_ARGV') or '["wsgi"]')
_module, _, _attr = os.environ['MINICLOUD_WSGI_APP'].partition(':')
# an older release's factory (``name()``: its *-wsgi script's) is called
_factory = _attr.endswith('()')
application = getattr(
    importlib.import_module(_module), _attr.rstrip('()') or 'application'
)
if _factory:
    application = application()
