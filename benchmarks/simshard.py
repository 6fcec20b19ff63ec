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

"""The simulated cloud's shards (benchmarks.simcloud): each a fake cloud
of the unit tests (tests/unit/fakes) with the services of the simulated
catalog, whose asynchronous deletes take time, and what one block of a
project holds (``fill_block``: 100 resources that refer to each other)."""

from __future__ import annotations

import collections
import time

from benchmarks import generate
from tests.unit import scenarios
from tests.unit.fakes.clouds import UsersCloud
from tests.unit.fakes.common import ADMIN_PROJECT, catalog

SERVICES = (
    'identity',
    'compute',
    'network',
    'block-storage',
    'image',
    'orchestration',
    'load-balancer',
    'object-store',
)
#: seconds a delete goes on before the resource is gone, per collection:
#: the mean seconds of the step on the minicloud at N=100 (both repeats of
#: benchmarks/results/results.json, 'slowest_kinds': the delete call and
#: the polls until it was gone, on a cloud that was not yet queueing);
#: assumptions, which ``--delete-scale`` multiplies
DELETE_SECONDS = {
    'servers': 9.79,
    'volumes': 3.23,
    'snapshots': 0.45,
    'backups': 3.58,
    'stacks': 10.02,
    'loadbalancers': 1.54,
}


class Shard(UsersCloud):
    """The fake cloud with the services of the simulated catalog, whose
    asynchronous deletes take time rather than a number of polls; its
    Keystone has domains, users and groups, its Nova users' keypairs
    (benchmarks.simdomain)."""

    endpoints = catalog(*SERVICES)
    #: collection -> seconds a delete goes on (the simulator's)
    delete_seconds: dict[str, float] = DELETE_SECONDS

    def __init__(self):
        super().__init__()
        # nobody reads the logs of the requests a test would check
        self.requests = collections.deque(maxlen=0)
        self.changes = collections.deque(maxlen=0)

    def _due(self, collection: str) -> float:
        return time.monotonic() + self.delete_seconds.get(collection, 0.0)

    def _start_delete(self, collection, id_):
        self._deleting[(collection, id_)] = self._due(collection)

    def _async_get(self, collection, id_, status_while_deleting):
        obj = self.get(collection, id_)
        if obj is None:
            return None
        due = self._deleting.get((collection, id_))
        if due is not None:
            if time.monotonic() >= due:
                self._finish_delete(collection, id_)
                return None
            obj['status'] = status_while_deleting
        return obj

    def delete_stack(self, stack):
        if stack['stack_status'] != 'DELETE_IN_PROGRESS':
            stack['due'] = self._due('stacks')
        super().delete_stack(stack)

    def _poll_stack(self, id_):
        stack = self.get('stacks', id_)
        if stack is not None and 'due' in stack:
            stack['polls_left'] = int(time.monotonic() < stack['due'])
        return super()._poll_stack(id_)

    def _delete_lb(self, lb, query):
        answer = super()._delete_lb(lb, query)
        lb['due'] = self._due('loadbalancers')
        return answer

    def _poll_lb(self, lb_id):
        lb = self.get('loadbalancers', lb_id)
        if lb is not None and 'due' in lb:
            lb['pending_left'] = int(time.monotonic() < lb['due'])
        return super()._poll_lb(lb_id)

    def _network(self, method, path, query, body):
        if path == '/v2.0/service-providers':
            # no VPNaaS (as on the minicloud): project cleanup asks
            return 200, {'service_providers': []}
        return super()._network(method, path, query, body)

    def _cinder_project(self) -> str:
        # Cinder lists a token's own project's without all_tenants (project
        # cleanup's connection is scoped to the project); the simulator's
        # tokens name their project (SimCloud.token)
        token = self.header('X-Auth-Token') or ''
        if token.startswith('sim-'):
            return token.split('-', 2)[2]
        return ADMIN_PROJECT

    def _block_storage(self, method, path, query, body):
        if method == 'GET' and path in ('/volumes', '/snapshots', '/backups'):
            # the short listing (project cleanup's): the detailed one has
            # every field of it
            path += '/detail'
        return super()._block_storage(method, path, query, body)

    def finish_deletes(self) -> None:
        """Finish every delete the cloud accepted, as it would in the end:
        what is left after that is what the tool did not delete."""
        for collection, id_ in list(self._deleting):
            self._finish_delete(collection, id_)
        for stack in list(self.all('stacks')):
            if stack['stack_status'] == 'DELETE_IN_PROGRESS':
                stack['due'] = 0.0
                self._poll_stack(stack['id'])
        for lb in list(self.all('loadbalancers')):
            if lb['provisioning_status'] == 'PENDING_DELETE':
                lb['due'] = 0.0
                self._poll_lb(lb['id'])

    def owned(self, project_id: str) -> collections.Counter:
        self.finish_deletes()
        kinds: collections.Counter = collections.Counter()
        for collection, _ in self.owned_by(project_id):
            kinds[collection] += 1
        for stack in self.all('stacks'):  # Heat's owner key is 'project'
            if stack['project'] == project_id:
                kinds['stacks'] += 1
        for container in self.all('containers'):
            if container['project_id'] == project_id:
                kinds['objects'] += len(container['objects'])
        return kinds


def fill_block(
    shard: Shard, project_id: str, external: dict, tag: str, size: int = 100
):
    """One block of ``size`` (at most 100) resources of
    benchmarks.generate's mix (``generate.mix(size)``), built with the unit
    tests' scenarios."""
    # a kind the mix has none of at this size is absent from it
    counts = collections.Counter(generate.mix(size))
    pid = project_id
    nets = [
        scenarios.network(shard, pid, f'net-{i}', f'10.{i}.0.0/24')
        for i in range(counts['network.network'])
    ]
    groups: list[dict] = []
    rules = counts['network.security_group_rule']
    for i in range(counts['network.security_group']):
        group = scenarios.security_group(shard, pid, f'sg-{i}')
        groups.append(group)
    for i in range(rules):
        # a third of the rules name another group
        remote = groups[(i + 1) % len(groups)] if i % 3 == 0 else None
        rule = shard.add(
            'security_group_rules',
            security_group_id=groups[i % len(groups)]['id'],
            remote_group_id=remote['id'] if remote else None,
            project_id=pid,
            tenant_id=pid,
            direction='ingress',
        )
        groups[i % len(groups)]['security_group_rules'].append(rule)
    routers = []
    for i in range(counts['network.router']):
        router, _iface = scenarios.router(
            shard, pid, nets[i][1], external, f'router-{i}'
        )
        routers.append(router)
    servers = []
    for i in range(counts['compute.server']):
        # behind a router where there is one
        net, subnet = nets[i % (len(routers) or len(nets))]
        servers.append(
            scenarios.server(
                shard, pid, f'vm-{i}', net, subnet, groups[i % len(groups)]
            )
        )
    ports = []
    for i in range(counts['network.port']):
        net, subnet = nets[i % len(nets)]
        ports.append(
            scenarios.port(
                shard,
                pid,
                net,
                subnet,
                f'port-{i}',
                security_groups=[groups[i % len(groups)]['id']],
            )
        )
    for i in range(counts['network.floating_ip']):
        # half on servers' ports (behind a router), half only allocated
        if i % 2 == 0:
            server = servers[i % len(servers)]
            port = next(
                p
                for p in shard.all('ports')
                if p.get('device_id') == server['id']
            )
            router = routers[(i % len(servers)) % len(routers)]
            scenarios.floating_ip(shard, pid, external, router, port)
        else:
            scenarios.floating_ip(shard, pid, external)
    volumes = []
    for i in range(counts['block_storage.volume']):
        # one volume at least stays free, for the snapshots
        attach = (
            servers[i]
            if i % 4 == 0
            and i < len(servers)
            and counts['block_storage.volume'] > 1
            else None
        )
        volumes.append(
            scenarios.volume(shard, pid, f'vol-{i}', attach_to=attach)
        )
    free = [v for v in volumes if v['status'] == 'available']
    for i in range(counts['block_storage.snapshot']):
        scenarios.snapshot(shard, pid, free[i % len(free)], f'snap-{i}')
    for i in range(counts['block_storage.backup']):
        scenarios.backup(shard, pid, free[-1 - i], f'backup-{i}')
    for i in range(counts['image.image']):
        scenarios.image(shard, pid, f'image-{i}')
    for i in range(counts['orchestration.stack']):
        stack = shard.stack(f'stack-{tag}-{i}', pid)
        # the stack's network alone, as generate.STACK_TEMPLATE makes it
        net = shard.add(
            'networks',
            name=f'stack-net-{i}',
            project_id=pid,
            tenant_id=pid,
            shared=False,
            **{'router:external': False},
        )
        shard.resource(stack, 'net', 'OS::Neutron::Net', net['id'])
    for _ in range(counts['load_balancer.load_balancer']):
        shard.load_balancer(pid, nets[-1][1])
    containers = counts['object_store.container']
    objects = counts['object_store.object']
    for i in range(containers):
        shard.container(
            pid,
            f'c-{tag}-{i}',
            objects=objects // containers + (i < objects % containers),
        )
