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

"""Stuck resources on the minicloud (issue #33), as an operator's cloud has
them: states set with the admin's own reset actions (Cinder's
``os-reset_status``, Nova's ``os-resetState``).

The project of the issue: four volumes reset to ``error_deleting``,
``error``, ``creating`` and ``attaching``, a snapshot (of the ``error``
one) in ``error_deleting``, a server in ``ERROR`` and a locked server.
Without ``--force-stuck`` the cascade ends within a minute, exit 1, one
readable line per stuck resource (no URL, no exception class), the
project drained and the rest gone; with it, everything and the project
go. Another project's volume stuck ``attaching`` to nothing stays.

A volume stuck ``attaching`` has an attachment record Cinder's volume
view does not show (only ``attached`` ones are): one to another project's
server keeps the volume and its project; one to the project's own server
is deleted through Cinder's attachments API, and the volume goes.

The runs' output and wall times are printed (``pytest -s``).
"""

from __future__ import annotations

import re
import time

import pytest

from tests.functional import topology
from tests.functional.conftest import run_openstack
from tests.functional.topology import unique, wait_for, wait_status

pytestmark = pytest.mark.functional

#: Cinder's attachments API (the records of a volume being attached)
ATTACHMENTS = '3.27'
#: the statuses the issue's four volumes are reset to
VOLUME_STATES = ('error_deleting', 'error', 'creating', 'attaching')


def status_of(proxy, path, **kw):
    """The HTTP status of a GET: 200, or the service's own 404."""
    return proxy.get(path, raise_exc=False, **kw).status_code


def new_volume(conn, name):
    vol = conn.block_storage.create_volume(size=1, name=name)
    return wait_status(
        lambda: conn.block_storage.get_volume(vol.id), 'available', name
    )


def new_server(admin, conn, name):
    flavor = conn.compute.find_flavor(topology.FLAVOR, ignore_missing=False)
    server = conn.compute.create_server(
        name=name,
        flavor_id=flavor.id,
        image_id=topology.public_image(admin).id,
        networks='none',
    )
    return conn.compute.wait_for_server(server, wait=240)


def build_issue_project(admin, name):
    """The project of the issue, every state set by the admin's reset."""
    project = topology.make_project(admin, unique(name))
    conn = topology.scoped(admin, project)
    volumes = {s: new_volume(conn, f'stuck-{s}') for s in VOLUME_STATES}
    snap = conn.block_storage.create_snapshot(
        volume_id=volumes['error'].id, name='stuck-snap'
    )
    wait_status(
        lambda: conn.block_storage.get_snapshot(snap.id), 'available', 'snap'
    )
    vm_error = new_server(admin, conn, 'vm-error')
    vm_locked = new_server(admin, conn, 'vm-locked')
    for state, vol in volumes.items():
        admin.block_storage.reset_volume_status(
            vol, status=state, attach_status=None, migration_status=None
        )
    admin.block_storage.reset_snapshot_status(snap, 'error_deleting')
    admin.compute.reset_server_state(vm_error, 'error')
    conn.compute.lock_server(vm_locked)
    assert admin.compute.get_server(vm_error.id).status == 'ERROR'
    assert admin.compute.get_server(vm_locked.id).is_locked
    return project, {
        **{f'volume {s}': ('volume', v.id) for s, v in volumes.items()},
        'snapshot error_deleting': ('snapshot', snap.id),
        'server ERROR': ('server', vm_error.id),
        'server locked': ('server', vm_locked.id),
    }


def exists(admin, what, ident):
    if what == 'server':
        return status_of(admin.compute, f'/servers/{ident}') != 404
    return status_of(admin.block_storage, f'/{what}s/{ident}') != 404


def other_project_volume_attaching(admin):
    """Another project's volume reset to ``attaching``, attached to
    nothing: never the cascade's, forced or not."""
    other = topology.make_project(admin, unique('stuck-other'))
    vol = new_volume(topology.scoped(admin, other), 'other-attaching')
    admin.block_storage.reset_volume_status(
        vol, status='attaching', attach_status=None, migration_status=None
    )
    return other, vol


def timed(*args):
    started = time.monotonic()
    result = run_openstack(*args)
    return result, time.monotonic() - started


def report(title, result, seconds):
    print(f'\n===== {title}: exit {result.code}, {seconds:.1f}s =====')
    print(result.stdout + result.stderr)


def cascade_within_a_minute(project, title):
    """A cascade without --force-stuck of a project with stuck resources:
    it ends at once, exit 1; its output."""
    result, seconds = timed(
        'project', 'delete', '--cascade', '--yes', project.id
    )
    report(title, result, seconds)
    out = result.stdout + result.stderr
    assert result.code == 1, out
    assert seconds < 60, f'{seconds:.0f}s'
    return out


def stuck_lines(text, ident):
    """The progress lines that say the resource ``ident`` is stuck."""
    return [
        line
        for line in text.splitlines()
        if re.search(rf'\] stuck: \S+ \S+ \({ident}\)', line)
    ]


def force_away(admin, *projects):
    """What a failed test left: forced, so that the module's cleanup (a
    plain cascade) finds nothing stuck."""
    for project in projects:
        if admin.identity.find_project(project.id) is not None:
            run_openstack(
                'project',
                'delete',
                '--cascade',
                '--yes',
                '--force-stuck',
                project.id,
            )


def test_stuck_resources_end_the_run_at_once_and_are_forced_when_asked(
    admin, cli
):
    project, made = build_issue_project(admin, 'stuck')
    other, other_vol = other_project_volume_attaching(admin)
    try:
        the_issues_runs(admin, cli, project, made, other, other_vol)
    finally:
        admin.block_storage.reset_volume_status(
            other_vol,
            status='available',
            attach_status=None,
            migration_status=None,
        )
        force_away(admin, project)


def the_issues_runs(admin, cli, project, made, other, other_vol):
    dry = cli('project', 'delete', '--cascade', '--dry-run', project.id)
    report('dry run', dry, 0)
    assert dry.code == 1, dry.stdout + dry.stderr

    out = cascade_within_a_minute(
        project, 'project delete --cascade (without --force-stuck)'
    )
    # one readable line per stuck resource: no URL, no exception class
    assert 'http' not in out.lower(), out
    assert 'Exception' not in out and 'Error:' not in out, out
    for key in (
        'volume error_deleting',
        'volume creating',
        'volume attaching',
        'snapshot error_deleting',
    ):
        ident = made[key][1]
        [line] = stuck_lines(out, ident)
        state = key.split()[1]
        assert f" is '{state}' since " in line, line
        assert line.endswith('--force-stuck'), line
    # the stuck ones are still there; the project is drained, not
    # deleted; the servers (ERROR, locked) are gone
    for key in ('volume error_deleting', 'volume creating'):
        assert exists(admin, *made[key]), key
    for key in ('server ERROR', 'server locked'):
        assert not exists(admin, *made[key]), key
    still = admin.identity.get_project(project.id)
    assert still.is_enabled is False

    forced, seconds = timed(
        'project', 'delete', '--cascade', '--yes', '--force-stuck', project.id
    )
    report('project delete --cascade --force-stuck', forced, seconds)
    assert forced.code == 0, forced.stdout + forced.stderr
    for key, (what, ident) in made.items():
        assert not exists(admin, what, ident), key
    assert admin.identity.find_project(project.id) is None
    # another project's volume stuck attaching to nothing stays
    kept = admin.block_storage.get_volume(other_vol.id)
    assert kept.status == 'attaching'
    assert kept.project_id == other.id


def attachment_record(admin, volume_id, server_id):
    """An attachment record of the volume to the server, as Nova's attach
    makes one before the host connects (Cinder's ``attaching``: the
    connector given, the attach not completed)."""
    made = admin.block_storage.post(
        '/attachments',
        json={
            'attachment': {
                'volume_uuid': volume_id,
                'instance_uuid': server_id,
                'connector': {
                    'initiator': 'iqn.1993-08.org.debian:01:stuck',
                    'host': 'stuck-host',
                    'platform': 'x86_64',
                    'os_type': 'linux',
                    'multipath': False,
                    'mountpoint': '/dev/vdb',
                },
            }
        },
        microversion=ATTACHMENTS,
    )
    made.raise_for_status()
    return made.json()['attachment']


def records_of(admin, volume_id):
    return admin.block_storage.get(
        '/attachments',
        params={'all_tenants': 1, 'volume_id': volume_id},
        microversion=ATTACHMENTS,
    ).json()['attachments']


def test_a_volume_stuck_attaching_to_another_projects_server_is_kept(
    admin, cli
):
    project = topology.make_project(admin, unique('attaching-own'))
    other = topology.make_project(admin, unique('attaching-other'))
    conn = topology.scoped(admin, project)
    theirs = new_server(admin, topology.scoped(admin, other), 'theirs')
    mine = new_server(admin, conn, 'mine')
    to_theirs = new_volume(conn, 'to-theirs')
    to_mine = new_volume(conn, 'to-mine')
    try:
        attaching_runs(
            admin, cli, project, other, theirs, mine, to_theirs, to_mine
        )
    finally:
        for record in records_of(admin, to_theirs.id):
            admin.block_storage.delete(
                f'/attachments/{record["id"]}', microversion=ATTACHMENTS
            )
        force_away(admin, project)


def attaching_runs(
    admin, cli, project, other, theirs, mine, to_theirs, to_mine
):
    attachment_record(admin, to_theirs.id, theirs.id)
    attachment_record(admin, to_mine.id, mine.id)
    for vol in (to_theirs, to_mine):
        wait_for(
            lambda v=vol: (
                admin.block_storage.get_volume(v.id).status == 'attaching'
            ),
            what='attaching',
        )
        # Cinder's volume view shows attached records alone
        assert admin.block_storage.get_volume(vol.id).attachments == []
        assert len(records_of(admin, vol.id)) == 1

    run, seconds = timed(
        'project', 'delete', '--cascade', '--yes', '--force-stuck', project.id
    )
    report(
        '--force-stuck, a volume attaching to another project', run, seconds
    )
    out = run.stdout + run.stderr
    # the plan keeps it, which refuses the run before anything changes
    assert run.code == 1, out
    assert 'Nothing was changed' in out, out
    assert f'attached to server {theirs.id} of project {other.id}' in out
    kept = admin.block_storage.get_volume(to_theirs.id)
    assert kept.status == 'attaching', kept.status
    assert len(records_of(admin, to_theirs.id)) == 1
    assert admin.compute.get_server(theirs.id).status == 'ACTIVE'
    assert admin.identity.get_project(project.id).is_enabled

    # the record removed (the other project's attach given up), both go:
    # the one attaching to the project's own server through Cinder's
    # attachment delete, once that server is gone
    for record in records_of(admin, to_theirs.id):
        admin.block_storage.delete(
            f'/attachments/{record["id"]}', microversion=ATTACHMENTS
        )
    again = cli(
        'project', 'delete', '--cascade', '--yes', '--force-stuck', project.id
    )
    report('--force-stuck again, the record gone', again, 0)
    assert again.code == 0, again.stdout + again.stderr
    assert 'detach=1' in again.stdout + again.stderr
    assert admin.identity.find_project(project.id) is None
    for vol in (to_theirs, to_mine):
        assert status_of(admin.block_storage, f'/volumes/{vol.id}') == 404
    assert status_of(admin.compute, f'/servers/{mine.id}') == 404
    assert admin.compute.get_server(theirs.id).status == 'ACTIVE'


VOLUME_STACK = {
    'heat_template_version': '2021-04-16',
    'resources': {
        'data': {'type': 'OS::Cinder::Volume', 'properties': {'size': 1}}
    },
}


def test_a_stack_delete_failed_is_deleted_again_then_abandoned(admin, cli):
    """A stack whose delete failed (its volume stuck error_deleting, which
    Cinder refuses to delete): without --force-stuck its delete again
    fails and the volume is stuck; with it, the volume is reset and
    deleted, and the stack, failed again, abandoned (Heat's
    enable_stack_abandon is on on the minicloud)."""
    project = topology.make_project(admin, unique('stack-failed'))
    try:
        stack_runs(admin, cli, project)
    finally:
        force_away(admin, project)


def stack_runs(admin, cli, project):
    conn = topology.scoped(admin, project)
    stack = topology.create_stack(conn, 'failing', VOLUME_STACK)
    [made] = list(conn.orchestration.resources(stack))
    volume_id = made.physical_resource_id
    admin.block_storage.reset_volume_status(
        volume_id,
        status='error_deleting',
        attach_status=None,
        migration_status=None,
    )
    conn.orchestration.delete_stack(stack)
    wait_for(
        lambda: (
            conn.orchestration.get_stack(stack.id).status == 'DELETE_FAILED'
        ),
        what='DELETE_FAILED',
    )

    dry = cli(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--force-stuck',
        project.id,
        '-f',
        'json',
    )
    report('dry run --force-stuck', dry, 0)
    planned = {(r['Kind'], r['ID'], r['Action']) for r in dry.json()}
    assert ('orchestration.stack', stack.id, 'abandon_stack') in planned
    assert ('orchestration.stack', stack.id, 'delete') in planned
    assert ('block_storage.volume', volume_id, 'reset_volume_state') in (
        planned
    )

    out = cascade_within_a_minute(
        project, 'a DELETE_FAILED stack, without --force-stuck'
    )
    assert f'({volume_id}) in RegionOne is \'error_deleting\'' in out
    assert status_of(conn.orchestration, f'/stacks/failing/{stack.id}') != 404

    forced, seconds = timed(
        'project', 'delete', '--cascade', '--yes', '--force-stuck', project.id
    )
    report('a DELETE_FAILED stack, --force-stuck', forced, seconds)
    assert forced.code == 0, forced.stdout + forced.stderr
    assert status_of(admin.block_storage, f'/volumes/{volume_id}') == 404
    assert admin.identity.find_project(project.id) is None
    assert not [
        s
        for s in admin.orchestration.stacks(all_projects=True)
        if s.id == stack.id
    ]
