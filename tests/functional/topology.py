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

"""Builds realistic projects on the minicloud with openstacksdk, and lists
what a project owns in every service independently of the plugin."""

from __future__ import annotations

import dataclasses
import time
import uuid

from osc_cascade.workflows import scoped as scoped_mod


def unique(prefix: str) -> str:
    return f'{prefix}-{uuid.uuid4().hex[:8]}'


def wait_for(
    predicate,
    timeout: float = 180,
    interval: float = 1.0,
    what: str = 'condition',
):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out waiting for {what}')
        time.sleep(interval)


FLAVOR = 'm1.tiny'


@dataclasses.dataclass
class Built:
    project: object
    conn: object
    ids: dict


#: every project the builders made, for the modules' cleanup (conftest)
CREATED: list[str] = []


def make_project(admin, name, domain_id='default'):
    project = admin.identity.create_project(name=name, domain_id=domain_id)
    CREATED.append(project.id)
    role = admin.identity.find_role('admin')
    me = admin.identity.get_user(admin.current_user_id)
    admin.identity.assign_project_role_to_user(project, me, role)
    return project


def scoped(admin, project):
    conn = admin.connect_as_project(project)
    # the project's own Swift account, not the admin's
    scoped_mod.without_callers_swift_account(conn, admin, project.id)
    return conn


def public_network(admin):
    return next(n for n in admin.network.networks(is_router_external=True))


def capo_network(admin, conn, name, description, cidr):
    """(network, subnet, router) as Cluster API's OpenStack provider makes
    a cluster's: one name and description for the three, the router on
    the public network with an interface on the subnet."""
    net = conn.network.create_network(name=name, description=description)
    subnet = conn.network.create_subnet(
        network_id=net.id,
        name=name,
        description=description,
        cidr=cidr,
        ip_version=4,
    )
    router = conn.network.create_router(
        name=name,
        description=description,
        external_gateway_info={'network_id': public_network(admin).id},
    )
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    return net, subnet, router


def public_image(admin):
    return next(i for i in admin.image.images(visibility='public'))


def wait_status(get, wanted, what, timeout=240):
    def check():
        obj = get()
        if obj.status.lower() in ('error', 'error_deleting'):
            raise AssertionError(f'{what} went to {obj.status}')
        return obj if obj.status.lower() == wanted else None

    return wait_for(check, timeout=timeout, interval=1, what=what)


def build(admin, name, *, project=None, shared_network_from=None):
    """Project `name` (or the given one) with the topology of the issue."""
    project = project or make_project(admin, name)
    conn = scoped(admin, project)
    ids = {'project': project.id}
    public = public_network(admin)
    flavor = conn.compute.find_flavor(FLAVOR, ignore_missing=False)
    image = public_image(admin)

    net = conn.network.create_network(name='net')
    subnet = conn.network.create_subnet(
        network_id=net.id, name='subnet', ip_version=4, cidr='10.10.0.0/24'
    )
    router = conn.network.create_router(
        name='router', external_gateway_info={'network_id': public.id}
    )
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    web = conn.network.create_security_group(name='web')
    db = conn.network.create_security_group(name='db')
    for group, remote in ((web, db), (db, web)):  # a cycle of references
        conn.network.create_security_group_rule(
            security_group_id=group.id,
            direction='ingress',
            remote_group_id=remote.id,
            ethertype='IPv4',
        )
    port = conn.network.create_port(
        network_id=net.id, name='user-port', security_group_ids=[web.id]
    )
    ids.update(
        net=net.id,
        subnet=subnet.id,
        router=router.id,
        port=port.id,
        web_sg=web.id,
        db_sg=db.id,
    )
    if shared_network_from is not None:
        ids['port_on_shared'] = conn.network.create_port(
            network_id=shared_network_from, name='on-shared'
        ).id

    # its twin has an image of the same name
    private_image = conn.image.create_image(
        name='private-image',
        data=b'\0' * 1024,
        disk_format='raw',
        container_format='bare',
        visibility='private',
        allow_duplicates=True,
    )
    ids['image'] = private_image.id

    vm = conn.compute.create_server(
        name='vm-port',
        flavor_id=flavor.id,
        image_id=image.id,
        networks=[{'port': port.id}],
    )
    boot = conn.block_storage.create_volume(name='boot', size=1)
    wait_status(
        lambda: conn.block_storage.get_volume(boot.id),
        'available',
        'boot volume',
    )
    conn.block_storage.set_volume_bootable_status(boot, True)
    vm_bfv = conn.compute.create_server(
        name='vm-bfv',
        flavor_id=flavor.id,
        networks='none',
        block_device_mapping=[
            {
                'boot_index': 0,
                'uuid': boot.id,
                'source_type': 'volume',
                'destination_type': 'volume',
                'delete_on_termination': False,
            }
        ],
    )
    data = conn.block_storage.create_volume(name='data', size=1)
    wait_status(
        lambda: conn.block_storage.get_volume(data.id),
        'available',
        'data volume',
    )
    for server in (vm, vm_bfv):
        conn.compute.wait_for_server(server, wait=240)
    conn.compute.create_volume_attachment(vm, volume_id=data.id)
    wait_status(
        lambda: conn.block_storage.get_volume(data.id), 'in-use', 'attachment'
    )
    snap = conn.block_storage.create_snapshot(
        volume_id=data.id, name='data-snap', force=True
    )
    wait_status(
        lambda: conn.block_storage.get_snapshot(snap.id),
        'available',
        'snapshot',
    )
    from_snap = conn.block_storage.create_volume(
        name='from-snap', size=1, snapshot_id=snap.id
    )
    wait_status(
        lambda: conn.block_storage.get_volume(from_snap.id),
        'available',
        'volume from snapshot',
    )
    full = conn.block_storage.create_backup(
        volume_id=from_snap.id, name='full'
    )
    wait_status(
        lambda: conn.block_storage.get_backup(full.id),
        'available',
        'full backup',
    )
    incr = conn.block_storage.create_backup(
        volume_id=from_snap.id, name='incr', is_incremental=True
    )
    wait_status(
        lambda: conn.block_storage.get_backup(incr.id),
        'available',
        'incremental backup',
    )

    vm_port = next(conn.network.ports(device_id=vm.id))
    fip = conn.network.create_ip(
        floating_network_id=public.id, port_id=vm_port.id
    )
    spare_fip = conn.network.create_ip(floating_network_id=public.id)
    ids.update(
        vm=vm.id,
        vm_bfv=vm_bfv.id,
        boot=boot.id,
        data=data.id,
        snapshot=snap.id,
        from_snap=from_snap.id,
        full=full.id,
        incremental=incr.id,
        fip=fip.id,
        spare_fip=spare_fip.id,
    )
    return Built(project, conn, ids)


# Ports that go with their owner: the plugin never deletes them directly.
_OWNED_PORTS = (
    'network:router_interface',
    'network:router_gateway',
    'network:dhcp',
    'network:floatingip',
)


def owned(admin, project_id):
    """Every resource of the project in every service, by admin listings
    with the owner re-checked, as {(kind, id)}."""
    found = set()

    def add(kind, items, owner=lambda o: o.project_id):
        found.update((kind, o.id) for o in items if owner(o) == project_id)

    add(
        'compute.server',
        admin.compute.servers(all_projects=True, project_id=project_id),
    )
    add(
        'block_storage.volume',
        admin.block_storage.volumes(all_projects=True, project_id=project_id),
    )
    add(
        'block_storage.snapshot',
        admin.block_storage.snapshots(
            all_projects=True, project_id=project_id
        ),
    )
    add(
        'block_storage.backup',
        admin.block_storage.backups(all_projects=True, project_id=project_id),
    )
    add('network.floating_ip', admin.network.ips(project_id=project_id))
    add('network.router', admin.network.routers(project_id=project_id))
    add(
        'network.port',
        (
            p
            for p in admin.network.ports(project_id=project_id)
            if p.device_owner not in _OWNED_PORTS
        ),
    )
    add('network.subnet', admin.network.subnets(project_id=project_id))
    add('network.network', admin.network.networks(project_id=project_id))
    # no project filter: Neutron creates the default group of the project
    # it is asked to filter by (add() checks the owner)
    add('network.security_group', admin.network.security_groups())
    add(
        'network.rbac_policy',
        admin.network.rbac_policies(project_id=project_id),
    )
    add(
        'image.image',
        admin.image.images(owner=project_id, visibility='all'),
        owner=lambda i: i.owner_id,
    )
    if admin.network.find_extension('fwaas_v2'):
        # no project filter: neutron-fwaas makes the default firewall group
        # of the project a list names (the service makes one anyway when
        # it counts the project's quota, as a server's boot does)
        add('network.firewall_group', admin.network.firewall_groups())
        add('network.firewall_policy', admin.network.firewall_policies())
        add('network.firewall_rule', admin.network.firewall_rules())
    return found


def create_stack(conn, name, template):
    """A stack of the connection's project, once Heat has made it."""
    stack = conn.orchestration.create_stack(name=name, template=template)
    return conn.orchestration.wait_for_status(
        stack,
        'CREATE_COMPLETE',
        failures=['CREATE_FAILED'],
        interval=2,
        wait=300,
    )


def build_services(admin, built, objects=300):
    """Add to a project of build() what the other services hold: a Heat
    stack that made a network and a Swift container; an Octavia load
    balancer with a listener, a pool and a member on the project's subnet,
    and a floating IP on its VIP address; a Swift container of ``objects``
    objects and a versioned one. Returns the ids, also added to built.ids.

    With the minicloud's no-op Octavia the VIP port is not in Neutron, so
    the floating IP is on a port of the project that holds the VIP address.
    The versioned container keeps its ``X-Versions-Location`` only where
    Swift's versioned_writes allows it.
    """
    import concurrent.futures

    conn = built.conn
    ids = {}

    # Heat deletes a stack's container by name in the account of whoever
    # deletes the stack: a name of its own keeps the admin's out of it
    ids['stack_cont'] = f'stack-cont-{built.project.name}'
    template = {
        'heat_template_version': '2018-08-31',
        'resources': {
            'net': {
                'type': 'OS::Neutron::Net',
                'properties': {'name': 'stack-net'},
            },
            'cont': {
                'type': 'OS::Swift::Container',
                'properties': {'name': ids['stack_cont']},
            },
        },
    }
    stack = create_stack(conn, 'app', template)
    ids['stack'] = stack.id
    [ids['stack_net']] = [
        n.id
        for n in conn.network.networks(
            name='stack-net', project_id=built.project.id
        )
    ]

    lbaas = conn.load_balancer

    def settled():
        return wait_for(
            lambda: (
                lbaas.get_load_balancer(ids['lb']).provisioning_status
                == 'ACTIVE'
            ),
            timeout=120,
            what='the load balancer to settle',
        )

    lb = lbaas.create_load_balancer(
        name='lb', vip_subnet_id=built.ids['subnet'], vip_address='10.10.0.50'
    )
    ids['lb'] = lb.id
    settled()
    listener = lbaas.create_listener(
        name='http', protocol='HTTP', protocol_port=80, load_balancer_id=lb.id
    )
    settled()
    pool = lbaas.create_pool(
        name='web',
        protocol='HTTP',
        lb_algorithm='ROUND_ROBIN',
        listener_id=listener.id,
    )
    settled()
    lbaas.create_member(
        pool,
        address='10.10.0.60',
        protocol_port=80,
        subnet_id=built.ids['subnet'],
    )
    settled()
    vip = conn.network.create_port(
        network_id=built.ids['net'],
        name='vip',
        fixed_ips=[
            {'subnet_id': built.ids['subnet'], 'ip_address': '10.10.0.50'}
        ],
    )
    ids['vip_port'] = vip.id
    ids['vip_fip'] = conn.network.create_ip(
        floating_network_id=public_network(admin).id, port_id=vip.id
    ).id

    store = conn.object_store
    store.create_container(name='data')
    with concurrent.futures.ThreadPoolExecutor(8) as pool_:
        list(
            pool_.map(
                lambda i: store.create_object(
                    'data', f'obj-{i:04d}', data=b'x'
                ),
                range(objects),
            )
        )
    store.create_container(name='docs-versions')
    store.request(
        '/docs', 'PUT', headers={'X-Versions-Location': 'docs-versions'}
    )
    for text in (b'v1', b'v2', b'v3'):
        store.create_object('docs', 'readme', data=text)
    built.ids.update(ids)
    return ids


def main(argv=None):
    """Fill a new project on a cloud: `python -m tests.functional.topology
    --cloud CLOUD NAME` (used by tools/try-cascade)."""
    import argparse

    import openstack

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument('--cloud', required=True)
    parser.add_argument('name')
    args = parser.parse_args(argv)
    built = build(openstack.connect(cloud=args.cloud), args.name)
    print(
        f'project {args.name} ({built.project.id}): '
        f'{len(built.ids)} resources created'
    )


if __name__ == '__main__':
    main()


def cascade(cli, project_id, *extra, scope=()):
    """The project's cascade as a user runs it: its dry run (JSON), then
    the run; ``scope``: global options before the command."""
    dry = cli(
        *scope,
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        *extra,
        project_id,
        '-f',
        'json',
    )
    run = cli(
        *scope, 'project', 'delete', '--cascade', '--yes', *extra, project_id
    )
    return dry, run
