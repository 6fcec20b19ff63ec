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

"""One actor per project, for the commands: the reaper's lock.

The cascade (its drain, its deletes and its settle), ``project drain``,
``project restore`` and ``project sweep`` take a project's lock before
they change anything of it, and hold it until they are done; a second
actor is refused with one line naming the holder when it is known. The
lock is the reaper's (``tooz_locks``: the same name per project, on the
same tooz backend when configured alike), so that the reaper never purges
what a cascade is working on either.

Where the locks live (``coordination_url``): ``--coordination-url``, else
``OSC_CASCADE_COORDINATION_URL``, else the cloud's
``osc_cascade_coordination_url`` in ``clouds.yaml``, else a directory of
this host (``$XDG_CACHE_HOME/osc-cascade/locks``, ``~/.cache/...``): runs
on one host exclude each other, runs on several hosts need a shared
backend (the reaper's ``coordination_url``: MySQL, etcd, Redis).

A ``file://`` URL, or the default directory, is locked with ``fcntl`` on
the very file tooz's file driver locks (fasteners' ``lockf`` on
``<dir>/<lock name>``), so that the two exclude each other across
processes; tooz is optional for the commands (the ``reaper`` extra) and not
imported for files (a third of a second of every run's start-up), unless
this process has loaded it already: POSIX locks belong to the process, so
within one process only tooz's own bookkeeping excludes a reaper's locks
from a command's. Beside each lock a ``.holder`` file says who holds it
(user, host, process, what, since when): what a refusal names. Another
backend without tooz is refused.
"""

from __future__ import annotations

import contextlib
import datetime
import getpass
import os
import socket
import sys
import threading
from typing import Any
from urllib import parse

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows import tooz_locks
from osc_cascade.workflows.tooz_locks import lock_name

#: the environment variable of the backend's URL
ENV = 'OSC_CASCADE_COORDINATION_URL'
#: the cloud's key of it in clouds.yaml
CLOUD_KEY = 'osc_cascade_coordination_url'


class Busy(CascadeError):
    """Another actor holds the project's lock."""


def default_dir() -> str:
    cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache'
    )
    return os.path.join(cache, 'osc-cascade', 'locks')


def coordination_url(option: str | None = None, conn: Any = None) -> str:
    """The backend's URL: the option, the environment, clouds.yaml, or a
    ``file://`` directory of this host."""
    if option:
        return option
    if os.environ.get(ENV):
        return os.environ[ENV]
    config = getattr(getattr(conn, 'config', None), 'config', None)
    if isinstance(config, dict) and config.get(CLOUD_KEY):
        return str(config[CLOUD_KEY])
    return 'file://' + default_dir()


def _file_dir(url: str) -> str | None:
    parts = parse.urlsplit(url)
    return parts.path if parts.scheme == 'file' else None


def _tooz_available() -> bool:
    try:
        import tooz.coordination  # noqa: F401
    except ImportError:
        return False
    return True


def _tooz_loaded() -> bool:
    """Whether this process uses tooz already (a reaper's locks)."""
    return 'tooz.coordination' in sys.modules


def holder_text(doing: str) -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no name for the uid (a container)
        user = str(os.getuid())
    since = datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')
    return (
        f'{user}@{socket.gethostname()} pid {os.getpid()}: {doing}, '
        f'since {since}'
    )


class Actor:
    """The project locks of one command run (``doing`` says what it is,
    for the refusals of others). ``hold`` takes a lock without waiting,
    ``release`` gives them back; taking one again is a no-op."""

    def __init__(self, url: str | None = None, *, doing: str = 'a cascade'):
        self.url = url or coordination_url()
        self.doing = doing
        self._dir = _file_dir(self.url)
        self._held: dict[str, contextlib.ExitStack] = {}
        self._backend: Any = None

    # -- the backend -------------------------------------------------------

    def _locks(self) -> Any:
        if self._backend is None:
            if self._dir is not None and not _tooz_loaded():
                self._backend = _Fcntl(self._dir)
            elif _tooz_available():
                self._backend = _Tooz(self.url, self.doing)
            else:
                raise CascadeError(
                    f'The coordination backend {self.url} needs tooz, '
                    "which is not installed (pip install 'osc-cascade"
                    "[reaper]'), or use a file:// URL."
                )
        return self._backend

    def _holder_path(self, project_id: str) -> str | None:
        if self._dir is None:
            return None
        return os.path.join(self._dir, lock_name(project_id) + '.holder')

    # -- the locks ---------------------------------------------------------

    def hold(self, project_id: str, label: str = '') -> None:
        """Take the project's lock, or raise ``Busy`` naming who holds
        it (when it is known)."""
        if project_id in self._held:
            return
        if self._dir is not None:
            os.makedirs(self._dir, exist_ok=True)
        stack = contextlib.ExitStack()
        if not stack.enter_context(self._locks().held(project_id)):
            stack.close()
            raise Busy(self.refusal(project_id, label))
        self._held[project_id] = stack
        path = self._holder_path(project_id)
        if path is not None:
            with contextlib.suppress(OSError):
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(holder_text(self.doing) + '\n')
            stack.callback(_remove, path)

    def refusal(self, project_id: str, label: str = '') -> str:
        who = self.holder(project_id)
        return (
            f'Project {label or project_id} is busy: another actor holds '
            'its lock ('
            + (who or f'{lock_name(project_id)} on {self.url}')
            + '); nothing was changed, try again once it is done.'
        )

    def holder(self, project_id: str) -> str | None:
        """Who holds the project's lock, as its holder wrote it."""
        path = self._holder_path(project_id)
        if path is None:
            return None
        try:
            with open(path, encoding='utf-8') as f:
                return f.read().strip() or None
        except OSError:
            return None

    def holds(self, project_id: str) -> bool:
        return project_id in self._held

    def release(self, project_id: str | None = None) -> None:
        """Give back one project's lock, or all of them."""
        ids = [project_id] if project_id else list(self._held)
        for id_ in ids:
            stack = self._held.pop(id_, None)
            if stack is not None:
                stack.close()
        if not self._held and self._backend is not None:
            self._backend.stop()
            self._backend = None

    def __enter__(self) -> Actor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class _Tooz:
    """The reaper's locks (``tooz_locks.Locks``), started when first
    used."""

    def __init__(self, url: str, doing: str):
        member = f'osc-cascade-cli.{socket.gethostname()}.{os.getpid()}'
        self._locks = tooz_locks.Locks(url, member)
        self._started = False

    def held(self, project_id: str) -> Any:
        if not self._started:
            self._locks.start()
            self._started = True
        return self._locks.held(project_id)

    def stop(self) -> None:
        if self._started:
            self._locks.stop()
            self._started = False


class _Fcntl:
    """``fcntl.lockf`` on ``<dir>/<lock name>``: the file and the call of
    tooz's file driver. POSIX locks belong to the process, so the locks
    this process holds are also kept here, to refuse its other actors."""

    #: lock path -> the open file that holds it, in this process
    _mine: dict[str, Any] = {}
    _guard = threading.Lock()

    def __init__(self, directory: str):
        self.dir = directory

    @contextlib.contextmanager
    def held(self, project_id: str) -> Any:
        import fcntl

        path = os.path.join(self.dir, lock_name(project_id))
        f = None
        with self._guard:
            if path not in self._mine:
                f = open(path, 'a')  # held past this block
                try:
                    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    f.close()
                    f = None
                else:
                    self._mine[path] = f
        if f is None:
            yield False
            return
        try:
            yield True
        finally:
            with self._guard:
                self._mine.pop(path, None)
                fcntl.lockf(f, fcntl.LOCK_UN)
                f.close()

    def stop(self) -> None:
        pass
