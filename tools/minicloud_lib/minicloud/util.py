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

"""Output, files and one-shot commands, shared by every module."""

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from .paths import HOME, LIB, LOGS, VBIN

T0 = time.monotonic()
_print_lock = threading.Lock()


class Failure(Exception):
    pass


def say(msg):
    with _print_lock:
        sys.stderr.write(f'minicloud: {msg}\n')
        sys.stderr.flush()


def phase(name, seconds, note=''):
    say(f'[{time.monotonic() - T0:6.1f}s] {name:<28} {seconds:6.1f}s {note}')


def mkdirs(*paths):
    for p in paths:
        os.makedirs(p, exist_ok=True)


def write(path, text, mode=None):
    mkdirs(os.path.dirname(path))
    with open(path, 'w') as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)


def tail(path, lines=25):
    try:
        with open(path, 'rb') as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            data = f.read().decode('utf-8', 'replace').splitlines()
        return '\n'.join(data[-lines:])
    except OSError:
        return ''


def child_env(extra=None):
    """Environment for every child: no OS_* leaking in from the caller."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(('OS_', 'PYTHON', 'VIRTUAL_ENV'))
    }
    env['PATH'] = os.pathsep.join(
        [os.path.join(LIB, 'bin'), VBIN, env.get('PATH', '/usr/bin:/bin')]
    )
    env['PIP_DISABLE_PIP_VERSION_CHECK'] = '1'
    env['LC_ALL'] = env['LANG'] = 'C.UTF-8'
    if extra:
        env.update(extra)
    return env


def run(cmd, log, env=None, cwd=None, check=True, timeout=900):
    """Run a command to completion, output appended to LOGS/<log>."""
    mkdirs(LOGS)
    path = os.path.join(LOGS, log)
    with open(path, 'ab') as out:
        out.write(f'\n{time.strftime("%T")} $ {" ".join(cmd)}\n'.encode())
        out.flush()
        t = time.monotonic()
        proc = subprocess.run(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env or child_env(),
            cwd=cwd or HOME,
            timeout=timeout,
        )
        out.write(
            f'{time.strftime("%T")} rc={proc.returncode} in '
            f'{time.monotonic() - t:.1f}s\n'.encode()
        )
    if check and proc.returncode != 0:
        raise Failure(
            f'{" ".join(cmd[:3])} failed (rc {proc.returncode}); see {path}:'
            f'\n{tail(path)}'
        )
    return proc.returncode


def port_open(port, host='127.0.0.1'):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def http_answers(url):
    try:
        urllib.request.urlopen(url, timeout=3).read()
        return True
    except urllib.error.HTTPError:
        return True  # 300/401/404: the server answers
    except (OSError, ValueError):
        return False
