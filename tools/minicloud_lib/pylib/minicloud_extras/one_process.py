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

"""Run an oslo.service server of one worker in one process.

    python -m minicloud_extras.one_process <console script> [args...]

oslo.service's threading backend (4.x) starts even one worker under a
cotyledon master process that does no work and holds 40 to 120 MiB of
PSS. A server that asks ``launch`` for one worker runs here in the main
process, as oslo.service's own ``no_fork`` runs it (nova-compute asks for
that itself): SIGTERM stops it gracefully. A server that asks for more
workers, launches several services in one launcher (manila-share) or
drives cotyledon itself (octavia-worker) is left as it is, and so is an
older oslo.service (the eventlet backend runs one worker in-process
already). The minicloud runs nova-conductor, nova-scheduler and
manila-scheduler so. Not the others, each tried: Designate's servers make
their RPC transport in the forked worker ('TRANSPORT' must not be None
without it), heat-engine stops after starting its worker service (no RPC
server: its API hangs), magnum-conductor never reports its service.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.metadata
import runpy
import sys

BACKEND = 'oslo_service.backend._threading.service'


def _threading_backend() -> bool:
    """oslo.service 4 or later, asked of its metadata."""
    major = importlib.metadata.version('oslo.service').split('.')[0]
    return int(major) >= 4


def launch_one_in_process(service) -> None:
    """``service`` (the threading backend's module) launches a server of
    one worker in the main process."""
    original = service.launch

    def launch(
        conf,
        server,
        workers=1,
        restart_method='reload',
        no_fork=False,
        start_method=None,
    ):
        return original(
            conf,
            server,
            workers,
            restart_method,
            no_fork=no_fork or workers == 1,
            start_method=start_method,
        )

    service.launch = launch


class PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches the threading backend when the server imports it, not
    before: nothing of oslo.service (nor eventlet, which it pulls in) may
    be imported ahead of the server's own imports (nova refuses to start
    when eventlet was imported early)."""

    def find_spec(self, name, path, target=None):
        if name != BACKEND:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            # before the backend reads its components (get_component)
            launch_one_in_process(module)

        spec.loader.exec_module = exec_module
        return spec


def main() -> None:
    script, *args = sys.argv[1:]
    if _threading_backend():
        sys.meta_path.insert(0, PatchOnImport())
    sys.argv = [script, *args]
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    main()
