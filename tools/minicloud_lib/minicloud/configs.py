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

"""Config files: templates/<service>/<file> rendered into etc/."""

import os
import shutil
import string

from .paths import (
    DATA,
    ETC,
    KS_URL,
    LOGS,
    RUN,
    TEMPLATE_DIRS,
    TRANSPORT_URL,
    VENV,
)
from .util import mkdirs, write

# the ${names} every template may use, besides its own
COMMON = {
    'etc': ETC,
    'data': DATA,
    'logs': LOGS,
    'run': RUN,
    'auth_url': KS_URL,
    'transport_url': TRANSPORT_URL,
}


def template_path(template):
    """The release's own template if it has one, else the newest's."""
    for d in TEMPLATE_DIRS:
        path = os.path.join(d, template)
        if os.path.exists(path):
            return path
    return os.path.join(TEMPLATE_DIRS[-1], template)


def release_has(template):
    """Whether this release has a template of its own (a file that only it
    needs, such as a policy file)."""
    return template_path(template) != os.path.join(TEMPLATE_DIRS[-1], template)


def render(template, **values):
    with open(template_path(template)) as f:
        return string.Template(f.read()).substitute(COMMON, **values)


def write_config(template, dest=None, **values):
    """etc/<dest>, by default etc/<template>."""
    write(os.path.join(ETC, dest or template), render(template, **values))


def copy_from_venv(rel, dest):
    """A file or tree the package ships in venv/etc (paste pipelines,
    Heat's templates), copied once: ours to keep if edited."""
    src = os.path.join(VENV, 'etc', rel)
    if os.path.isdir(src):
        if not os.path.exists(dest):
            shutil.copytree(src, dest)
    elif not os.path.exists(dest):
        mkdirs(os.path.dirname(dest))
        shutil.copyfile(src, dest)
