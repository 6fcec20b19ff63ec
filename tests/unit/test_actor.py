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

"""One actor per project (``workflows.actor``): the commands' lock, on
tooz or, without it, on ``fcntl``; the same lock as the reaper's."""

import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows import actor, after_delete, drain_record
from tests.unit import scenarios
from tests.unit.fakes.run import cascade_for

BACKENDS = ['tooz', 'fcntl']


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    if request.param == 'fcntl':
        monkeypatch.setattr(actor, '_tooz_available', lambda: False)
        monkeypatch.setattr(actor, '_tooz_loaded', lambda: False)
    else:
        import tooz.coordination  # noqa: F401  (a process that uses tooz)
    return request.param


@pytest.fixture
def url(tmp_path):
    return f'file://{tmp_path}/locks'


def test_a_second_actor_is_refused_naming_the_holder(backend, url):
    first = actor.Actor(url, doing='openstack project drain')
    second = actor.Actor(url, doing='openstack project sweep')
    first.hold('p1', 'A (p1)')
    with pytest.raises(actor.Busy) as refused:
        second.hold('p1', 'A (p1)')
    message = str(refused.value)
    assert '\n' not in message
    assert message.startswith('Project A (p1) is busy: another actor holds')
    assert f'pid {os.getpid()}: openstack project drain, since' in message
    # another project is free; taking one again is a no-op
    second.hold('p2')
    first.hold('p1')
    first.release()
    second.hold('p1')
    second.release()
    assert not os.listdir(url[len('file://') :]) or all(
        not n.endswith('.holder') for n in os.listdir(url[len('file://') :])
    )


def test_the_actor_is_a_context_that_releases(backend, url):
    with actor.Actor(url) as a:
        a.hold('p1')
        assert a.holds('p1')
    actor.Actor(url).hold('p1')


def test_fcntl_locks_the_file_tooz_locks(url):
    """Without tooz, the lock is tooz's file driver's own file: a process
    holding it through tooz (the reaper) refuses this one."""
    directory = url[len('file://') :]
    holder = subprocess.Popen(
        [
            sys.executable,
            '-c',
            textwrap.dedent(f"""
                import sys
                from osc_cascade.reaper.lock import Locks
                locks = Locks({url!r}, 'reaper')
                locks.start()
                with locks.held('p1') as got:
                    print(got, flush=True)
                    sys.stdin.readline()
                locks.stop()
            """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == 'True'
        fallback = actor._Fcntl(directory)
        with fallback.held('p1') as got:
            assert got is False
        with fallback.held('p2') as got:
            assert got is True
    finally:
        holder.communicate('\n', timeout=30)
    with fallback.held('p1') as got:
        assert got is True


def test_the_reapers_lock_and_the_commands_exclude_each_other(url):
    from osc_cascade.reaper.lock import Locks

    reaper = Locks(url, 'reaper')
    reaper.start()
    try:
        with reaper.held('p1') as got:
            assert got
            with pytest.raises(actor.Busy, match=r'osc-cascade\.project\.p1'):
                actor.Actor(url).hold('p1')
        cli = actor.Actor(url)
        cli.hold('p1')
        with reaper.held('p1') as got:
            assert not got
        cli.release()
    finally:
        reaper.stop()


def test_files_are_locked_without_importing_tooz(tmp_path):
    """tooz is installed here, but a command's file locks do not import
    it: a third of a second of every run's start-up."""
    code = textwrap.dedent(f"""
        import sys
        from osc_cascade.workflows import actor
        a = actor.Actor('file://{tmp_path}/locks')
        a.hold('p1')
        print(type(a._locks()).__name__, 'tooz.coordination' in sys.modules)
        a.release()
    """)
    out = subprocess.run(
        [sys.executable, '-c', code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ['_Fcntl', 'False']


def test_a_process_that_uses_tooz_locks_files_through_it(url, monkeypatch):
    monkeypatch.setattr(actor, '_tooz_loaded', lambda: True)
    a = actor.Actor(url)
    a.hold('p1')
    assert isinstance(a._locks(), actor._Tooz)
    a.release()


def test_the_url_option_then_env_then_clouds_yaml_then_this_host(
    monkeypatch, tmp_path
):
    monkeypatch.delenv(actor.ENV, raising=False)
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    conn = SimpleNamespace(
        config=SimpleNamespace(config={actor.CLOUD_KEY: 'redis://cloud'})
    )
    assert actor.coordination_url() == (f'file://{tmp_path}/osc-cascade/locks')
    assert actor.coordination_url(None, conn) == 'redis://cloud'
    monkeypatch.setenv(actor.ENV, 'etcd3+http://env')
    assert actor.coordination_url(None, conn) == 'etcd3+http://env'
    assert actor.coordination_url('mysql://opt', conn) == 'mysql://opt'


def test_a_backend_other_than_files_needs_tooz(monkeypatch):
    monkeypatch.setattr(actor, '_tooz_available', lambda: False)
    with pytest.raises(CascadeError, match='needs tooz'):
        actor.Actor('redis://localhost').hold('p1')


@pytest.fixture
def services():
    from tests.unit.fakes.clouds import ServicesCloud

    with ServicesCloud() as c:
        yield c


def test_the_cascade_is_refused_while_another_actor_holds_the_project(
    services, url, backend
):
    pid = scenarios.project(services, 'A')['id']
    scenarios.network(services, pid)
    other = actor.Actor(url, doing='openstack project sweep')
    other.hold(pid)
    pc, targets, plan = cascade_for(services, pid)
    pc.actor = actor.Actor(url)
    with pytest.raises(actor.Busy, match='openstack project sweep'):
        pc.execute(plan, targets)
    # nothing changed: not drained, not disabled
    project = services.get('projects', pid)
    assert project['enabled'] is True
    assert not project.get(drain_record.RECORD)
    other.release()


def test_the_cascade_holds_the_lock_until_finish(services, url, backend):
    pid = scenarios.project(services, 'A')['id']
    pc, targets, plan = cascade_for(services, pid)
    pc.actor = actor.Actor(url)
    outcome = pc.execute(plan, targets)
    with pytest.raises(actor.Busy):
        actor.Actor(url).hold(pid)
    pc.conn.identity.delete_project(pid)
    after_delete.finish(pc, outcome)
    actor.Actor(url).hold(pid)  # released


def test_a_failed_cascade_releases_the_lock(services, url, backend):
    pid = scenarios.project(services, 'A')['id']
    pc, targets, plan = cascade_for(services, pid)
    pc.actor = actor.Actor(url)

    def fail(_targets):
        raise CascadeError('boom')

    pc.drain = fail
    with pytest.raises(CascadeError, match='boom'):
        pc.execute(plan, targets)
    actor.Actor(url).hold(pid)
