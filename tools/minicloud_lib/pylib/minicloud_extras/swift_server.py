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

"""A Swift server with its swift.conf read from the minicloud's swift_dir.

Swift 2.33 (2024.1) validates /etc/swift/swift.conf before it reads its
config's ``swift_dir`` (later releases set the dir first), so its servers
run as

    python -m minicloud_extras.swift_server SWIFT_DIR SCRIPT ARGS...

which sets the dir, then runs the server's script as its own.
"""

import runpy
import sys

from swift.common.utils import set_swift_dir

if __name__ == '__main__':
    swift_dir, script, *args = sys.argv[1:]
    set_swift_dir(swift_dir)
    sys.argv = [script, *args]
    runpy.run_path(script, run_name='__main__')
