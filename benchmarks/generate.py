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

"""Fill projects with N resources in a realistic mix, in parallel.

    python -m benchmarks.generate --cloud minicloud-admin -n 300 \\
        --twins 2 --prefix bench300

makes projects ``bench300-a`` and ``bench300-b`` with the same content
(identical twins: same kinds, counts, names and relations), the admin user
holding the ``admin`` role on each (``openstack project cleanup`` needs a
token scoped to the project). Kinds whose service is not in the catalog are
skipped with a printed note. What a project owns is listed, independently of
the plugin, by :func:`owned` (``tests/functional/topology.owned`` plus the
services that one does not cover).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
import concurrent.futures
import json
import sys
import threading
import time
from typing import Any

from keystoneauth1 import exceptions as ks_exc

from tests.functional import topology

#: resources per 100, by kind (rules go with their group, objects with
#: their container, listeners and pools with their load balancer)
WEIGHTS: dict[str, float] = {
    'network.network': 5,
    'network.subnet': 5,
    'network.router': 3,
    'network.port': 14,
    'network.floating_ip': 4,
    'network.security_group': 5,
    'network.security_group_rule': 10,
    'compute.server': 8,
    'block_storage.volume': 12,
    'block_storage.snapshot': 6,
    'block_storage.backup': 1,
    'image.image': 4,
    'orchestration.stack': 2,
    'load_balancer.load_balancer': 1,
    'object_store.container': 2,
    'object_store.object': 14,
}
#: a backup takes 10-30 s and Cinder makes them one at a time
MAX_BACKUPS = 4
SERVICE_OF = {
    'network': 'network',
    'compute': 'compute',
    'block_storage': 'block-storage',
    'image': 'image',
    'orchestration': 'orchestration',
    'load_balancer': 'load-balancer',
    'object_store': 'object-store',
}
STACK_TEMPLATE = {
    'heat_template_version': '2018-08-31',
    'resources': {
        'net': {
            'type': 'OS::Neutron::Net',
            'properties': {'name': 'stack-net'},
        },
        'secret': {'type': 'OS::Heat::RandomString'},
    },
}


def service_of(kind: str) -> str:
    return SERVICE_OF[kind.split('.')[0]]


def mix(n: int, services: Iterable[str] | None = None) -> dict[str, int]:
    """How many of each kind make ``n`` resources (largest remainder), over
    the kinds whose service is available; every kind gets at least one when
    ``n`` allows, and the counts keep their relations possible (a subnet
    per network, no more routers than networks, a container for objects).
    """
    kinds = [
        k
        for k in WEIGHTS
        if services is None or service_of(k) in set(services)
    ]
    if n <= 0 or not kinds:
        return {}
    total = sum(WEIGHTS[k] for k in kinds)
    exact = {k: n * WEIGHTS[k] / total for k in kinds}
    counts = {k: int(v) for k, v in exact.items()}
    if 'block_storage.backup' in counts:
        counts['block_storage.backup'] = min(
            counts['block_storage.backup'], MAX_BACKUPS
        )
    rest = n - sum(counts.values())
    by_remainder = sorted(
        kinds, key=lambda k: (-(exact[k] - int(exact[k])), kinds.index(k))
    )
    i = 0
    while rest > 0 and by_remainder:
        k = by_remainder[i % len(by_remainder)]
        if not (k == 'block_storage.backup' and counts[k] >= MAX_BACKUPS):
            counts[k] += 1
            rest -= 1
        i += 1
    # relations: subnets need networks, routers need subnets, snapshots
    # and backups need volumes, objects need a container
    _at_least(counts, 'network.subnet', 'network.network')
    _at_most(counts, 'network.router', 'network.subnet')
    _at_most(counts, 'network.network', 'network.subnet')
    _at_most(counts, 'block_storage.snapshot', 'block_storage.volume')
    _at_most(counts, 'block_storage.backup', 'block_storage.volume')
    if counts.get('object_store.object') and not counts.get(
        'object_store.container'
    ):
        counts['object_store.container'] = 1
        counts['object_store.object'] -= 1
    if counts.get('network.security_group_rule') and not counts.get(
        'network.security_group'
    ):
        counts['network.security_group'] = 1
        counts['network.security_group_rule'] -= 1
    return {k: v for k, v in counts.items() if v > 0}


def _at_least(counts: dict, kind: str, other: str) -> None:
    if counts.get(kind, 0) < 1 and counts.get(other):
        counts[kind] = 1
        counts[other] -= 1


def _at_most(counts: dict, kind: str, other: str) -> None:
    if kind in counts and counts[kind] > counts.get(other, 0):
        # the surplus goes to the bigger kind
        surplus = counts[kind] - counts.get(other, 0)
        counts[kind] -= surplus
        counts[other] = counts.get(other, 0) + surplus


class Builder:
    """Creates one project's resources in dependency phases, each phase in
    parallel on a thread pool."""

    def __init__(
        self,
        admin: Any,
        name: str,
        counts: dict[str, int],
        *,
        threads: int = 8,
        log: Callable[[str], None] = print,
    ):
        self.admin = admin
        self.name = name
        self.counts = counts
        self.threads = threads
        self.log = log
        self.ids: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def n(self, kind: str) -> int:
        return self.counts.get(kind, 0)

    def add(self, kind: str, id_: str) -> None:
        with self._lock:
            self.ids.setdefault(kind, []).append(id_)

    def parallel(
        self, fn: Callable[[int], Any], count: int, what: str
    ) -> list[Any]:
        if count <= 0:
            return []
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(self.threads) as pool:
            out = list(pool.map(fn, range(count)))
        self.log(
            f'  {self.name}: {count} {what} '
            f'({time.monotonic() - started:.1f}s)'
        )
        return out

    def build(self) -> Any:
        admin = self.admin
        project = topology.make_project(admin, self.name)
        self.project = project
        self._unlimited_quotas(project.id)
        self.conn = topology.scoped(admin, project)
        public = topology.public_network(admin)
        nets = self.parallel(
            self._network, self.n('network.network'), 'networks with subnets'
        )
        groups = self.parallel(
            self._group, self.n('network.security_group'), 'security groups'
        )
        self.parallel(
            lambda i: self._rule(groups, i),
            self.n('network.security_group_rule'),
            'rules',
        )
        self.parallel(self._image, self.n('image.image'), 'images')
        containers = self.parallel(
            self._container, self.n('object_store.container'), 'containers'
        )
        self.parallel(
            lambda i: self._object(containers, i),
            self.n('object_store.object'),
            'objects',
        )
        volumes = self.parallel(
            self._volume, self.n('block_storage.volume'), 'volumes'
        )
        routed = self.parallel(
            lambda i: self._router(nets, public, i),
            self.n('network.router'),
            'routers (gateway + interface)',
        )
        self.parallel(
            lambda i: self._port(nets, groups, i),
            self.n('network.port'),
            'ports',
        )
        servers = self.parallel(
            lambda i: self._server(nets, i),
            self.n('compute.server'),
            'servers',
        )
        self.parallel(
            lambda i: self._stack(i), self.n('orchestration.stack'), 'stacks'
        )
        self.parallel(
            lambda i: self._load_balancer(nets, i),
            self.n('load_balancer.load_balancer'),
            'load balancers (listener + pool)',
        )
        # volumes: the first quarter attached to servers, snapshots of the
        # next ones, backups of the last ones
        attached = min(len(servers), len(volumes) // 4)
        self.parallel(
            lambda i: self._attach(servers[i], volumes[i]),
            attached,
            'volume attachments',
        )
        self.parallel(
            lambda i: self._snapshot(volumes, attached, i),
            self.n('block_storage.snapshot'),
            'snapshots',
        )
        # Cinder backs up one volume at a time: two threads are plenty
        with_backup = volumes[::-1]
        self.parallel(
            lambda i: self._backup(with_backup[i]),
            self.n('block_storage.backup'),
            'backups',
        )
        # floating IPs: half on the ports of servers on routed networks
        on_routed = [
            s
            for i, s in enumerate(servers)
            if i % max(1, len(nets)) < len(routed)
        ]
        self.parallel(
            lambda i: self._floating_ip(public, on_routed, i),
            self.n('network.floating_ip'),
            'floating IPs',
        )
        return project

    # -- one resource each ---------------------------------------------------

    def _unlimited_quotas(self, pid: str) -> None:
        admin = self.admin
        if admin.has_service('compute'):
            admin.set_compute_quotas(pid, instances=-1, cores=-1, ram=-1)
        if admin.has_service('network'):
            admin.network.update_quota(
                pid,
                networks=-1,
                subnets=-1,
                ports=-1,
                routers=-1,
                floating_ips=-1,
                security_groups=-1,
                security_group_rules=-1,
            )
        if admin.has_service('block-storage'):
            admin.set_volume_quotas(
                pid,
                volumes=-1,
                snapshots=-1,
                gigabytes=-1,
                backups=-1,
                backup_gigabytes=-1,
            )

    def _network(self, i):
        net = self.conn.network.create_network(name=f'net-{i}')
        subnet = self.conn.network.create_subnet(
            network_id=net.id,
            name=f'subnet-{i}',
            ip_version=4,
            cidr=f'10.{i // 250}.{i % 250}.0/24',
        )
        self.add('network.network', net.id)
        self.add('network.subnet', subnet.id)
        return net, subnet

    def _group(self, i):
        group = self.conn.network.create_security_group(name=f'sg-{i}')
        self.add('network.security_group', group.id)
        return group

    def _rule(self, groups, i):
        group = groups[i % len(groups)]
        kw = {
            'port_range_min': 1000 + i,
            'port_range_max': 1000 + i,
            'protocol': 'tcp',
        }
        if i % 3 == 0 and len(groups) > 1:
            # rules that name another group as remote, some both ways
            kw['remote_group_id'] = groups[(i + 1) % len(groups)].id
        rule = self.conn.network.create_security_group_rule(
            security_group_id=group.id,
            direction='ingress',
            ethertype='IPv4',
            **kw,
        )
        self.add('network.security_group_rule', rule.id)

    def _image(self, i):
        image = self.conn.image.create_image(
            name=f'image-{i}',
            data=b'\0' * 1024,
            disk_format='raw',
            container_format='bare',
            visibility='private',
            # the twin has one of the same name, which admin sees
            allow_duplicates=True,
        )
        self.add('image.image', image.id)

    def _container(self, i):
        name = f'container-{i}'
        self.conn.object_store.create_container(name=name)
        self.add('object_store.container', name)
        return name

    def _object(self, containers, i):
        container = containers[i % len(containers)]
        self.conn.object_store.upload_object(
            container=container, name=f'object-{i}', data=b'x' * 64
        )
        self.add('object_store.object', f'{container}/object-{i}')

    def _volume(self, i):
        volume = self.conn.block_storage.create_volume(name=f'vol-{i}', size=1)
        topology.wait_status(
            lambda: self.conn.block_storage.get_volume(volume.id),
            'available',
            f'volume {i}',
        )
        self.add('block_storage.volume', volume.id)
        return volume

    def _router(self, nets, public, i):
        router = self.conn.network.create_router(
            name=f'router-{i}', external_gateway_info={'network_id': public.id}
        )
        self.conn.network.add_interface_to_router(
            router, subnet_id=nets[i][1].id
        )
        self.add('network.router', router.id)
        return router

    def _port(self, nets, groups, i):
        net = nets[i % len(nets)][0]
        kw = {}
        if groups:
            kw['security_group_ids'] = [groups[i % len(groups)].id]
        port = self.conn.network.create_port(
            network_id=net.id, name=f'port-{i}', **kw
        )
        self.add('network.port', port.id)

    def _server(self, nets, i):
        conn = self.conn
        flavor = conn.compute.find_flavor(
            topology.FLAVOR, ignore_missing=False
        )
        image = topology.public_image(self.admin)
        networks = [{'uuid': nets[i % len(nets)][0].id}] if nets else 'none'
        server = conn.compute.create_server(
            name=f'vm-{i}',
            flavor_id=flavor.id,
            image_id=image.id,
            networks=networks,
        )
        server = conn.compute.wait_for_server(server, wait=600)
        self.add('compute.server', server.id)
        return server

    def _stack(self, i):
        stack = self.conn.orchestration.create_stack(
            name=f'stack-{i}', template=STACK_TEMPLATE
        )
        for attempt in range(5):
            try:
                # 1 s: heat-api's gunicorn closes idle kept-alive
                # connections after 2 s, and a poll every 2 s races it
                self.conn.orchestration.wait_for_status(
                    stack,
                    'CREATE_COMPLETE',
                    failures=['CREATE_FAILED'],
                    interval=1,
                    wait=600,
                )
                break
            except ks_exc.ConnectFailure:
                if attempt == 4:
                    raise
        self.add('orchestration.stack', stack.id)

    def _load_balancer(self, nets, i):
        lb_api = self.conn.load_balancer
        lb = lb_api.create_load_balancer(
            name=f'lb-{i}', vip_subnet_id=nets[i % len(nets)][1].id
        )
        lb_api.wait_for_load_balancer(lb.id, wait=600)
        listener = lb_api.create_listener(
            name=f'listener-{i}',
            load_balancer_id=lb.id,
            protocol='HTTP',
            protocol_port=80,
        )
        lb_api.wait_for_load_balancer(lb.id, wait=600)
        lb_api.create_pool(
            name=f'pool-{i}',
            listener_id=listener.id,
            protocol='HTTP',
            lb_algorithm='ROUND_ROBIN',
        )
        lb_api.wait_for_load_balancer(lb.id, wait=600)
        self.add('load_balancer.load_balancer', lb.id)

    def _attach(self, server, volume):
        self.conn.compute.create_volume_attachment(server, volume_id=volume.id)
        topology.wait_status(
            lambda: self.conn.block_storage.get_volume(volume.id),
            'in-use',
            f'attachment of {volume.name}',
        )

    def _snapshot(self, volumes, attached, i):
        volume = volumes[(attached + i) % len(volumes)]
        snap = self.conn.block_storage.create_snapshot(
            volume_id=volume.id, name=f'snap-{i}', force=True
        )
        topology.wait_status(
            lambda: self.conn.block_storage.get_snapshot(snap.id),
            'available',
            f'snapshot {i}',
        )
        self.add('block_storage.snapshot', snap.id)

    def _backup(self, volume):
        backup = self.conn.block_storage.create_backup(
            volume_id=volume.id, name=f'backup-{volume.name}', force=True
        )
        topology.wait_status(
            lambda: self.conn.block_storage.get_backup(backup.id),
            'available',
            f'backup of {volume.name}',
            timeout=900,
        )
        self.add('block_storage.backup', backup.id)

    def _floating_ip(self, public, servers, i):
        kw = {}
        if i % 2 == 0 and i // 2 < len(servers):
            port = next(self.conn.network.ports(device_id=servers[i // 2].id))
            kw['port_id'] = port.id
        fip = self.conn.network.create_ip(floating_network_id=public.id, **kw)
        self.add('network.floating_ip', fip.id)


# -- what a project owns, independently of the plugin ------------------------


def owned(
    admin: Any,
    project_id: str,
    *,
    auditor: Any | None = None,
    stacks: Iterable[str] = (),
) -> set[tuple[str, str]]:
    """Every resource of the project, by admin listings with the owner
    checked again: tests/functional/topology.owned, plus load balancers,
    (with ``auditor``, a connection of a Swift reseller admin) containers,
    and of the ``stacks`` (IDs: Heat lists other projects' stacks only to
    a system admin) those that still exist."""
    found = set(topology.owned(admin, project_id))
    if stacks and admin.has_service('orchestration'):
        found.update(
            ('orchestration.stack', s)
            for s in stacks
            if stack_exists(admin, project_id, s)
        )
    if admin.has_service('load-balancer'):
        found.update(
            ('load_balancer.load_balancer', lb.id)
            for lb in admin.load_balancer.load_balancers(project_id=project_id)
            if lb.project_id == project_id
        )
    if auditor is not None and admin.has_service('object-store'):
        found.update(
            ('object_store.container', c)
            for c in swift_containers(auditor, project_id)
        )
    return found


def stack_exists(admin: Any, project_id: str, stack_id: str) -> bool:
    base = admin.orchestration.get_endpoint().rsplit('/', 1)[0]
    resp = admin.session.get(
        f'{base}/{project_id}/stacks/{stack_id}', raise_exc=False
    )
    if resp.status_code == 404:
        return False
    resp.raise_for_status()
    status = resp.json()['stack'].get('stack_status')
    return status != 'DELETE_COMPLETE'


def swift_containers(auditor: Any, project_id: str) -> list[str]:
    """The containers of the project's Swift account (the account of a
    deleted project too: the auditor is a reseller admin)."""
    base = auditor.object_store.get_endpoint()
    account = base.rsplit('/AUTH_', 1)[0] + f'/AUTH_{project_id}'
    resp = auditor.session.get(
        account, params={'format': 'json'}, raise_exc=False
    )
    if resp.status_code in (404, 204):
        return []
    if resp.status_code >= 400:
        raise RuntimeError(
            f'cannot list the Swift account of '
            f'{project_id}: {resp.status_code}'
        )
    return [c['name'] for c in resp.json()]


AUDITOR_USER = 'cascade-bench-auditor'
AUDITOR_PASSWORD = 'cascade-bench-auditor'  # a local test cloud


def auditor(admin: Any) -> Any | None:
    """A user with Swift's reseller admin role, to list the containers of
    any account (a deleted project's too); made once."""
    if not admin.has_service('object-store'):
        return None
    import openstack

    identity = admin.identity
    role = identity.find_role('ResellerAdmin') or identity.create_role(
        name='ResellerAdmin'
    )
    project = identity.find_project(
        AUDITOR_USER, domain_id='default'
    ) or identity.create_project(name=AUDITOR_USER, domain_id='default')
    user = identity.find_user(
        AUDITOR_USER, domain_id='default'
    ) or identity.create_user(
        name=AUDITOR_USER,
        domain_id='default',
        password=AUDITOR_PASSWORD,
        default_project_id=project.id,
    )
    identity.assign_project_role_to_user(project, user, role)
    auth = dict(admin.config.config['auth'])
    auth.update(
        username=AUDITOR_USER,
        password=AUDITOR_PASSWORD,
        project_name=AUDITOR_USER,
        user_domain_name='Default',
        project_domain_name='Default',
    )
    for key in (
        'project_id',
        'user_id',
        'project_domain_id',
        'user_domain_id',
    ):
        auth.pop(key, None)
    return openstack.connect(
        auth=auth,
        region_name=admin.config.get_region_name(),
        interface=admin.config.get_interface(),
        identity_api_version='3',
    )


def build_twins(
    admin: Any,
    n: int,
    prefix: str,
    *,
    twins: int = 2,
    threads: int = 8,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    services = [s for s in set(SERVICE_OF.values()) if admin.has_service(s)]
    for s in sorted(set(SERVICE_OF.values()) - set(services)):
        log(f'note: service {s} is not in the catalog: its kinds are skipped')
    counts = mix(n, services)
    out = []
    for t in range(twins):
        name = f'{prefix}-{chr(ord("a") + t)}'
        started = time.monotonic()
        builder = Builder(admin, name, counts, threads=threads, log=log)
        project = builder.build()
        out.append(
            {
                'name': name,
                'id': project.id,
                'counts': counts,
                'ids': {k: sorted(v) for k, v in builder.ids.items()},
                'created': {k: len(v) for k, v in sorted(builder.ids.items())},
                'seconds': round(time.monotonic() - started, 1),
            }
        )
        log(
            f'project {name} ({project.id}): {sum(counts.values())} '
            f'resources in {time.monotonic() - started:.0f}s'
        )
    return out


def main(argv: list[str] | None = None) -> int:
    import openstack

    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--cloud', default='minicloud-admin')
    parser.add_argument(
        '-n', type=int, required=True, help='resources per project'
    )
    parser.add_argument(
        '--twins',
        type=int,
        default=2,
        help='identical projects to make (default: 2)',
    )
    parser.add_argument('--prefix', required=True)
    parser.add_argument('--threads', type=int, default=8)
    parser.add_argument(
        '--show-mix',
        action='store_true',
        help='print the counts and create nothing',
    )
    args = parser.parse_args(argv)
    if args.show_mix:
        print(json.dumps(mix(args.n), indent=1))
        return 0
    admin = openstack.connect(cloud=args.cloud)
    made = build_twins(
        admin,
        args.n,
        args.prefix,
        twins=args.twins,
        threads=args.threads,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    print(json.dumps(made, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
