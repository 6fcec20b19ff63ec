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

"""`openstack compute service delete --purge-allocations` against the real
minicloud: nova 34 and placement 16 with two fake computes, compute-a and
compute-b.

The tests take a compute down (``tools/minicloud stop nova-compute-a``) or
delete its service; the ``computes`` fixture brings both back afterwards
(restarted with its node identity kept, nova-compute re-creates its
service, its compute node and its provider), so that the tests and the
other functional tests find both computes. It ``disturbs_cloud``: tox
runs it after the others, so that no test boots a server meanwhile.
"""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest

from osc_cascade.engine.errors import CascadeError
from osc_cascade.workflows.service_purge import DISABLED_REASON, ServicePurge
from tests.functional.conftest import run_openstack
from tests.functional.topology import unique, wait_for

pytestmark = [pytest.mark.functional, pytest.mark.disturbs_cloud]

HOST, OTHER = 'compute-a', 'compute-b'
MINICLOUD = os.path.join(
    os.path.dirname(__file__), '..', '..', 'tools', 'minicloud'
)
FLAVOR, IMAGE = 'm1.tiny', 'cirros'


def minicloud(*args: str) -> None:
    subprocess.run(
        [MINICLOUD, *args],
        check=True,
        capture_output=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def service(admin, host=HOST):
    found = [
        s
        for s in admin.compute.services(microversion='2.53')
        if s.host == host and s.binary == 'nova-compute'
    ]
    return found[0] if found else None


def provider(admin, host=HOST):
    rps = admin.placement.get(
        f'/resource_providers?name={host}', microversion='1.14'
    ).json()
    return (
        rps['resource_providers'][0]['uuid']
        if rps['resource_providers']
        else None
    )


def provider_exists(admin, rp):
    return (
        admin.placement.get(
            f'/resource_providers/{rp}', microversion='1.14'
        ).status_code
        == 200
    )


def allocations(admin, consumer):
    return {
        rp: a['resources']
        for rp, a in admin.placement.get(
            f'/allocations/{consumer}', microversion='1.28'
        )
        .json()['allocations']
        .items()
    }


def host_of(admin, server_id):
    return admin.compute.get_server(server_id).compute_host


def ok(result):
    assert result.code == 0, result.stdout + result.stderr
    return result


def purge(*args):
    return run_openstack(
        'compute', 'service', 'delete', '--purge-allocations', *args
    )


def take_down(admin, host=HOST):
    """Stop nova-compute and force its service down, as an operator does
    before evacuating or deleting it."""
    minicloud('stop', f'nova-{host}')
    ok(
        run_openstack(
            '--os-compute-api-version',
            '2.11',
            'compute',
            'service',
            'set',
            '--down',
            host,
            'nova-compute',
        )
    )


def bring_up(admin, host=HOST):
    """Start nova-compute; once it has re-created what a purge deleted
    (service, compute node, provider with inventory), clear a forced down
    and wait until the scheduler can place instances on it."""
    minicloud('start', f'nova-{host}')
    svc = wait_for(
        lambda: service(admin, host), timeout=240, what=f'the {host} service'
    )
    if svc.is_forced_down:
        ok(
            run_openstack(
                '--os-compute-api-version',
                '2.11',
                'compute',
                'service',
                'set',
                '--up',
                host,
                'nova-compute',
            )
        )
    wait_for(
        lambda: service(admin, host).state == 'up' and provider(admin, host),
        timeout=240,
        what=f'{host} up with its provider',
    )
    # a compute whose service was deleted may come back unmapped to its
    # cell (Nova 29): the scheduler would pick it and the boot fail
    minicloud('map-hosts')


@pytest.fixture
def computes(admin):
    """Both computes up before the test, and up again after it, whatever
    the test did to them; the test's servers are deleted."""
    for host in (HOST, OTHER):
        bring_up(admin, host)
    servers: list[str] = []
    yield servers
    for host in (HOST, OTHER):
        bring_up(admin, host)
    for server_id in servers:
        server = admin.compute.find_server(server_id)
        if server is not None and server.status == 'VERIFY_RESIZE':
            admin.compute.confirm_server_resize(server_id)
            wait_for(
                lambda: (
                    admin.compute.get_server(server_id).status
                    != 'VERIFY_RESIZE'
                ),
                what='the resize confirmed',
            )
        if server is not None:
            admin.compute.delete_server(server_id)
            admin.compute.wait_for_delete(server, wait=180)


def boot(admin, servers, host=HOST):
    """An ACTIVE server on ``host``."""
    flavor = admin.compute.find_flavor(FLAVOR, ignore_missing=False)
    image = admin.image.find_image(IMAGE, ignore_missing=False)
    for _attempt in range(4):
        server = admin.compute.create_server(
            name=unique('purge'),
            flavor_id=flavor.id,
            image_id=image.id,
            networks='none',
            availability_zone=f'nova:{host}',
        )
        servers.append(server.id)
        server = wait_for(
            lambda: _settled(admin, server.id),
            timeout=180,
            what=f'a server on {host}',
        )
        if server.status == 'ACTIVE':
            return server
        # a compute whose service was just re-created is placed only once
        # the scheduler's host discovery has mapped it again
        admin.compute.delete_server(server.id)
        admin.compute.wait_for_delete(server, wait=180)
    raise AssertionError(f'could not boot a server on {host}')


def _settled(admin, server_id):
    server = admin.compute.get_server(server_id)
    return server if server.status in ('ACTIVE', 'ERROR') else None


def stray_allocation(admin, rp):
    """An allocation of a consumer nova never had, on ``rp``."""
    stray = str(uuid.uuid4())
    ok(
        run_openstack(
            '--os-placement-api-version',
            '1.28',
            'resource',
            'provider',
            'allocation',
            'set',
            stray,
            '--allocation',
            f'rp={rp},VCPU=1,MEMORY_MB=256',
            '--project-id',
            admin.current_project_id,
            '--user-id',
            admin.current_user_id,
        )
    )
    return stray


def test_evacuated_instance_purge(admin, computes):
    vm = boot(admin, computes)
    rp_a, rp_b = provider(admin, HOST), provider(admin, OTHER)
    take_down(admin)
    ok(
        run_openstack(
            '--os-compute-api-version', '2.29', 'server', 'evacuate', vm.id
        )
    )
    wait_for(
        lambda: (
            host_of(admin, vm.id) == OTHER
            and admin.compute.get_server(vm.id).status == 'ACTIVE'
        ),
        timeout=240,
        what='the evacuation',
    )
    held = allocations(admin, vm.id)
    assert held.keys() == {rp_a, rp_b}  # the source's stays while it is down
    svc = service(admin)

    dry = ok(purge('--dry-run', HOST, '-f', 'json'))
    print(dry.stdout)  # the closing note quotes it
    rows = {(r['Kind'], r['ID']): r for r in dry.json()}
    assert rows[('placement.allocation', vm.id)]['Class'] == (
        'evacuated instance'
    )
    assert rows[('placement.allocation', vm.id)]['Action'] == 'remove'
    assert rows[('placement.resource_provider', rp_a)]['Action'] == 'delete'
    assert rows[('compute.service', svc.id)]['Action'] == 'delete'
    assert allocations(admin, vm.id) == held  # a dry run changes nothing
    assert service(admin) is not None

    ok(purge('--yes', svc.id))

    assert service(admin) is None
    assert not provider_exists(admin, rp_a)
    assert allocations(admin, vm.id) == {rp_b: held[rp_b]}


def test_unconfirmed_migration_blocks_and_force_removes_its_allocation(
    admin, computes
):
    # from compute-b: once a host's service has been deleted and re-created,
    # nova 34 refuses to migrate its instances (Instance.services includes
    # the soft-deleted service rows, and the first one is down)
    vm = boot(admin, computes, host=OTHER)
    rp_b, rp_a = provider(admin, OTHER), provider(admin, HOST)
    ok(run_openstack('server', 'migrate', vm.id))
    wait_for(
        lambda: admin.compute.get_server(vm.id).status == 'VERIFY_RESIZE',
        timeout=240,
        what='VERIFY_RESIZE',
    )
    migration = next(
        m
        for m in admin.compute.migrations(server_id=vm.id, microversion='2.59')
        if m.status == 'finished'
    )
    # the migration holds the source, the instance the destination
    assert allocations(admin, migration.uuid).keys() == {rp_b}
    assert allocations(admin, vm.id).keys() == {rp_a}
    take_down(admin, OTHER)

    blocked = purge('--yes', OTHER, '-f', 'json')

    assert blocked.code == 1
    rows = {r['Consumer']: r for r in blocked.json()}
    assert rows[migration.uuid]['Class'] == 'migration not confirmed'
    assert (
        f'openstack server resize confirm {vm.id}'
        in rows[migration.uuid]['Why, and what to do']
    )
    assert 'Nothing was changed' in blocked.stderr
    assert allocations(admin, migration.uuid).keys() == {rp_b}

    forced = purge('--yes', '--force', OTHER)

    # the migration's allocation goes; nova keeps the service while the
    # migration is unconfirmed, and says so; the node's provider stays
    # with its service (nothing orphaned)
    assert forced.code == 1
    assert 'nova refuses to delete the service of compute-b' in forced.stderr
    assert 'in-progress migrations' in forced.stderr
    assert allocations(admin, migration.uuid) == {}
    assert allocations(admin, vm.id).keys() == {rp_a}
    assert service(admin, OTHER) is not None
    assert provider_exists(admin, rp_b)
    # disabled for the purge, enabled again since nova kept it
    assert f'disabled compute service {OTHER}' in forced.stderr
    assert 'was enabled again: the purge did not delete it' in forced.stderr
    assert service(admin, OTHER).status == 'enabled'


def test_stale_allocation_of_a_consumer_nova_never_had(admin, computes):
    rp_a = provider(admin, HOST)
    take_down(admin)
    stray = stray_allocation(admin, rp_a)

    blocked = purge('--yes', HOST, '-f', 'json')
    assert blocked.code == 1
    assert [(r['Consumer'], r['Class']) for r in blocked.json()] == [
        (stray, 'unknown consumer')
    ]
    assert allocations(admin, stray) == {rp_a: {'VCPU': 1, 'MEMORY_MB': 256}}

    ok(purge('--yes', '--force', HOST))

    assert allocations(admin, stray) == {}
    assert not provider_exists(admin, rp_a)
    assert service(admin) is None


def test_host_with_an_instance_is_refused(admin, computes):
    vm = boot(admin, computes)
    rp_a = provider(admin, HOST)
    held = allocations(admin, vm.id)
    svc = service(admin)

    result = purge('--yes', '--force', HOST, '-f', 'json')

    assert result.code == 1
    rows = {r['Consumer']: r for r in result.json()}
    assert rows[vm.id]['Class'] == 'instance on host'
    assert service(admin).id == svc.id
    assert provider_exists(admin, rp_a)
    assert allocations(admin, vm.id) == held
    # refused before anything changed: the service was never disabled
    assert svc.status == 'enabled'
    assert (service(admin).status, service(admin).disabled_reason) == (
        'enabled',
        None,
    )


def test_service_is_disabled_while_its_allocations_go(admin, computes):
    rp_a = provider(admin, HOST)
    take_down(admin)  # stopped and forced down, still enabled
    assert service(admin).status == 'enabled'
    stray = stray_allocation(admin, rp_a)
    seen = []

    def look(event):
        # what nova says of the service when the allocation's removal
        # starts
        if event.kind == 'started' and event.step.target.id == stray:
            svc = service(admin)
            seen.append((svc.status, svc.disabled_reason))

    notes = []
    purge = ServicePurge(admin, force=True, on_event=look, notify=notes.append)
    plan = purge.plan(purge.resolve([HOST]))
    assert any(
        'is enabled: the purge disables it first' in n for n in plan.notes
    )
    assert service(admin).status == 'enabled'  # planning changed nothing

    result = purge.execute(plan)

    assert result.ok, [r.error for r in result.results.values() if r.error]
    assert seen == [('disabled', DISABLED_REASON)]
    assert any(n.startswith(f'disabled compute service {HOST}') for n in notes)
    assert allocations(admin, stray) == {}
    assert service(admin) is None  # deleted: nothing to enable again
    assert not provider_exists(admin, rp_a)


def test_refused_purge_enables_the_service_again(admin, computes):
    svc = service(admin)
    assert svc.status == 'enabled'
    purge = ServicePurge(admin)
    plan = purge.plan(purge.resolve([HOST]))  # an empty host: nothing blocks
    assert not plan.kept()
    # the scheduler places an instance there before the purge disables it
    vm = boot(admin, computes)
    held = allocations(admin, vm.id)
    seen = []
    read_again = purge.plan

    def plan_and_look(services):
        svc = service(admin)
        seen.append((svc.status, svc.disabled_reason))
        return read_again(services)

    purge.plan = plan_and_look

    with pytest.raises(CascadeError) as err:
        purge.execute(plan)

    assert 'with the service(s) disabled, 1 consumer(s) block the purge' in (
        str(err.value)
    )
    assert f'{vm.id} (instance on host)' in str(err.value)
    assert 'was enabled again' in str(err.value)
    assert seen == [('disabled', DISABLED_REASON)]
    after = service(admin)
    assert (after.id, after.status, after.disabled_reason) == (
        svc.id,
        'enabled',
        None,
    )
    assert allocations(admin, vm.id) == held
    assert provider_exists(admin, provider(admin, HOST))
