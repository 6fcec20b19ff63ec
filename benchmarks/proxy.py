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

"""tools/cloudproxy, the latency proxy the benchmarks run the tools
through, as a child process: started, asked for its request counts and
told its latency through its control port, stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

PROXY = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    'tools',
    'cloudproxy',
)


class ProxyProcess:
    """tools/cloudproxy as a child process, driven through its control
    port."""

    def __init__(
        self,
        state_dir: str,
        clouds_yaml: str,
        cloud: str,
        *,
        latency_ms: float,
        client_timeout: float,
        fault_rate: float = 0.0,
        seed: int = 0,
        extra: list[str] | None = None,
    ):
        self.state_dir = state_dir
        os.makedirs(state_dir, exist_ok=True)
        state = os.path.join(state_dir, 'state.json')
        if os.path.exists(state):
            os.unlink(state)
        cmd = [
            sys.executable,
            PROXY,
            '--state-dir',
            state_dir,
            'up',
            '--clouds-yaml',
            clouds_yaml,
            '--cloud',
            cloud,
            '--latency-ms',
            str(latency_ms),
            '--client-timeout',
            str(client_timeout),
            '--fault-rate',
            str(fault_rate),
            '--seed',
            str(seed),
            '--stats-file',
            os.path.join(state_dir, 'stats-at-exit.json'),
            *(extra or []),
        ]
        self.log = open(os.path.join(state_dir, 'proxy.log'), 'w')
        self.proc = subprocess.Popen(
            cmd, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 120
        while not os.path.exists(state):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f'cloudproxy did not start: see {self.log.name}'
                )
            time.sleep(0.2)
        time.sleep(0.2)
        with open(state) as f:
            self.state = json.load(f)
        self.clouds_yaml = self.state['clouds_yaml']

    def _control(self, method: str, path: str, data: Any = None) -> Any:
        """Ask the proxy's control API (its stats, its config); its JSON
        answer."""
        import urllib.request

        req = urllib.request.Request(
            self.state['control'] + path,
            method=method,
            data=None if data is None else json.dumps(data).encode(),
            headers={'Content-Type': 'application/json'},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)

    def stats(self, reset: bool = False) -> dict:
        return self._control('GET', '/stats' + ('?reset=1' if reset else ''))

    def configure(self, **update: Any) -> dict:
        return self._control('POST', '/config', update)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
