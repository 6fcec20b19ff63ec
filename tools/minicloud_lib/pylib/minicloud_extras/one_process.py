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
PSS (about 0.7 GiB over the minicloud's servers). A server that asks
``launch`` for one worker runs here in the main process, as oslo.service's
own ``no_fork`` runs it (nova-compute asks for that itself): SIGTERM stops
it gracefully. A server that asks for more workers, launches several
services in one launcher (manila-share) or drives cotyledon itself
(octavia-worker) is left as it is, and so is an older oslo.service (the
eventlet backend runs one worker in-process already).
"""

from __future__ import annotations

import importlib.metadata
import runpy
import sys


def _threading_backend() -> bool:
    """oslo.service 4 or later: asked of its metadata, so that nothing of
    it is imported before the server's own imports (eventlet's servers
    monkey-patch first)."""
    major = importlib.metadata.version('oslo.service').split('.')[0]
    return int(major) >= 4


def one_worker_in_process() -> None:
    from oslo_service.backend._threading import service

    launch = service.launch

    def launch_one_in_process(
        conf,
        server,
        workers=1,
        restart_method='reload',
        no_fork=False,
        start_method=None,
    ):
        return launch(
            conf,
            server,
            workers,
            restart_method,
            no_fork=no_fork or workers == 1,
            start_method=start_method,
        )

    # before the backend reads its components (oslo_service.service's
    # module-level get_component), which the server's imports trigger
    service.launch = launch_one_in_process


def main() -> None:
    script, *args = sys.argv[1:]
    if _threading_backend():
        one_worker_in_process()
    sys.argv = [script, *args]
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    main()
