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

"""A selective cleanup on the minicloud (issue #34).

A project gets resources made at two times, a few seconds apart, with the
boundary between them as ``--created-before``: the old ones go, the new
ones stay, the project stays (enabled: nothing is drained), and the old
network under a new port is kept with a line naming that port. The tag
filter ``--not-tags keep`` keeps what Neutron and Glance say is tagged
``keep``, on servers and load balancers too. An edited plan file whose router row says ``keep`` keeps the
router and its interface (and so its subnet and network).

On twins made alike, the side by side with ``openstack project cleanup
--created-before`` is printed: what each deleted and left, after one run
and two (osc-cascade's part is asserted).

The runs are printed (``pytest -s``).
"""

from __future__ import annotations

import datetime
import json
import time

import pytest

from tests.functional.conftest import run_openstack
from tests.functional.topology import (
    FLAVOR,
    make_project,
    public_image,
    public_network,
    scoped,
    unique,
    wait_for,
    wait_status,
)

pytestmark = pytest.mark.functional


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')


def network(conn, name, cidr):
    net = conn.network.create_network(name=unique(name))
    subnet = conn.network.create_subnet(
        network_id=net.id, ip_version=4, cidr=cidr, name=unique(name)
    )
    return net, subnet


def image(conn, name, tags=()):
    return conn.image.create_image(
        name=unique(name),
        disk_format='raw',
        container_format='bare',
        visibility='private',
        tags=list(tags),
    )


def cleaned(*args):
    """A selective run of ``project delete --cascade``, printed; it must
    succeed."""
    run = run_openstack('project', 'delete', '--cascade', '--yes', *args)
    print(run.stdout, run.stderr)
    assert run.code == 0, run.stdout + run.stderr
    return run


def plan_rows(result):
    assert result.code == 0, result.stdout + result.stderr
    print(result.stdout, result.stderr)
    return {r['ID']: r for r in json.loads(result.stdout)}


@pytest.fixture
def two_ages(admin):
    """Old: a network with a subnet and a port, a network alone, an
    image; then the boundary; new: a port on the old network, an image."""
    project = make_project(admin, unique('select'))
    conn = scoped(admin, project)
    net, subnet = network(conn, 'old-net', '10.34.1.0/24')
    lone, _ = network(conn, 'lone-net', '10.34.2.0/24')
    old_port = conn.network.create_port(network_id=net.id, name='old-port')
    old_image = image(conn, 'old-image')
    time.sleep(2)
    boundary = now()
    time.sleep(2)
    new_port = conn.network.create_port(network_id=net.id, name='new-port')
    new_image = image(conn, 'new-image')
    return {
        'project': project,
        'conn': conn,
        'boundary': boundary,
        'net': net,
        'subnet': subnet,
        'lone': lone,
        'old_port': old_port,
        'new_port': new_port,
        'old_image': old_image,
        'new_image': new_image,
    }


def test_created_before_deletes_the_old_and_keeps_what_the_new_needs(
    admin, two_ages
):
    w = two_ages
    pid = w['project'].id
    select = ('--created-before', w['boundary'])
    plan = plan_rows(
        run_openstack(
            'project',
            'delete',
            '--cascade',
            '--dry-run',
            *select,
            pid,
            '-f',
            'json',
        )
    )
    assert plan[w['old_port'].id]['Action'] == 'delete'
    assert plan[w['lone'].id]['Action'] == 'delete'
    assert plan[w['old_image'].id]['Action'] == 'delete'
    assert plan[w['new_port'].id]['Action'] == 'keep'
    assert plan[w['new_image'].id]['Action'] == 'keep'
    assert plan[w['net'].id]['Action'] == 'keep'
    assert plan[w['subnet'].id]['Action'] == 'keep'
    assert 'new-port' in json.dumps(plan[w['subnet'].id])

    cleaned(*select, pid)
    net = admin.network
    assert admin.identity.get_project(pid).is_enabled
    assert net.find_port(w['old_port'].id) is None
    assert net.find_network(w['lone'].id) is None
    assert admin.image.find_image(w['old_image'].id) is None
    assert net.find_port(w['new_port'].id) is not None
    assert net.find_network(w['net'].id) is not None
    assert net.find_subnet(w['subnet'].id) is not None
    assert admin.image.find_image(w['new_image'].id) is not None


def test_not_tags_keep_keeps_what_is_tagged(admin):
    project = make_project(admin, unique('select-tags'))
    conn = scoped(admin, project)
    tagged_net, _ = network(conn, 'tagged-net', '10.34.3.0/24')
    conn.network.set_tags(tagged_net, ['keep'])
    plain_net, _ = network(conn, 'plain-net', '10.34.4.0/24')
    tagged_port = conn.network.create_port(network_id=plain_net.id)
    conn.network.set_tags(tagged_port, ['keep', 'ci'])
    tagged_image = image(conn, 'tagged-image', ['keep'])
    plain_image = image(conn, 'plain-image')
    cleaned(project.id, '--not-tags', 'keep')
    assert admin.network.find_network(tagged_net.id) is not None
    assert admin.network.find_port(tagged_port.id) is not None
    # the plain network holds the tagged port: it stays with it
    assert admin.network.find_network(plain_net.id) is not None
    assert admin.image.find_image(tagged_image.id) is not None
    assert admin.image.find_image(plain_image.id) is None
    assert admin.identity.get_project(project.id) is not None


def test_an_edited_plan_keeps_the_router_and_its_interface(admin, tmp_path):
    project = make_project(admin, unique('select-edit'))
    conn = scoped(admin, project)
    net, subnet = network(conn, 'routed-net', '10.34.5.0/24')
    router = conn.network.create_router(name=unique('router'))
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    lone, _ = network(conn, 'lone-net', '10.34.6.0/24')
    saved = tmp_path / 'plan.json'
    dry = run_openstack(
        'project',
        'delete',
        '--cascade',
        '--dry-run',
        '--created-before',
        '0s',
        '--plan-file',
        str(saved),
        project.id,
    )
    assert dry.code == 0, dry.stdout + dry.stderr
    data = json.loads(saved.read_text())
    (row,) = [k for k in data['selected'] if router.id in k]
    data['selected'][row] = 'keep' + data['selected'][row][len('delete') :]
    saved.write_text(json.dumps(data, indent=2))
    cleaned('--plan-file', str(saved), project.id)
    assert admin.network.find_router(router.id) is not None
    interfaces = list(
        admin.network.ports(
            device_id=router.id, device_owner='network:router_interface'
        )
    )
    assert [p.fixed_ips[0]['subnet_id'] for p in interfaces] == [subnet.id]
    assert admin.network.find_network(net.id) is not None
    assert admin.network.find_network(lone.id) is None


def test_not_tags_on_servers_and_load_balancers(admin):
    """Nova's and Octavia's tags: a server and a load balancer tagged keep
    stay (and the server's port with it); their untagged twins go."""
    project = make_project(admin, unique('select-tags2'))
    conn = scoped(admin, project)
    net, subnet = network(conn, 'net', '10.34.7.0/24')
    flavor = conn.compute.find_flavor(FLAVOR, ignore_missing=False)
    booted = {
        name: conn.compute.create_server(
            name=unique(name),
            flavor_id=flavor.id,
            image_id=public_image(admin).id,
            networks=[{'uuid': net.id}],
            tags=tags,
        )
        for name, tags in (('tagged-vm', ['keep']), ('plain-vm', []))
    }
    for server in booted.values():
        wait_status(
            lambda s=server: conn.compute.get_server(s.id), 'active', 'vm'
        )
    lbaas = conn.load_balancer
    lbs = {
        name: lbaas.create_load_balancer(
            name=unique(name), vip_subnet_id=subnet.id, tags=tags
        )
        for name, tags in (('tagged-lb', ['keep']), ('plain-lb', []))
    }
    for lb in lbs.values():
        wait_for(
            lambda lb=lb: (
                lbaas.get_load_balancer(lb.id).provisioning_status == 'ACTIVE'
            ),
            timeout=180,
            what='the load balancer to settle',
        )
    cleaned(project.id, '--not-tags', 'keep')
    assert (
        admin.compute.find_server(booted['tagged-vm'].id, all_projects=True)
        is not None
    )
    assert (
        admin.compute.find_server(booted['plain-vm'].id, all_projects=True)
        is None
    )
    nics = list(admin.network.ports(device_id=booted['tagged-vm'].id))
    assert len(nics) == 1
    assert (
        admin.load_balancer.find_load_balancer(lbs['tagged-lb'].id) is not None
    )
    assert admin.load_balancer.find_load_balancer(lbs['plain-lb'].id) is None
    assert admin.network.find_network(net.id) is not None


def twin(admin, tag):
    """The old half of a twin: a routed network with a port and a server,
    a security group, an image."""
    project = make_project(admin, unique(f'twin-{tag}'))
    conn = scoped(admin, project)
    net, subnet = network(conn, 'net-a', '10.35.1.0/24')
    router = conn.network.create_router(
        name='router',
        external_gateway_info={'network_id': public_network(admin).id},
    )
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    web = conn.network.create_security_group(name='web')
    ids = dict(
        net=net.id,
        subnet=subnet.id,
        router=router.id,
        web=web.id,
        old_port=conn.network.create_port(
            network_id=net.id, name='old-port', security_group_ids=[web.id]
        ).id,
        old_image=image(conn, 'old-image').id,
        vm=conn.compute.create_server(
            name='old-vm',
            flavor_id=conn.compute.find_flavor(
                FLAVOR, ignore_missing=False
            ).id,
            image_id=public_image(admin).id,
            networks=[{'uuid': net.id}],
        ).id,
    )
    return project, conn, ids


def twin_grows(conn, ids):
    """The new half: a port on the old network, a network on a new
    interface of the old router, a group whose rule names the old one."""
    ids['new_port'] = conn.network.create_port(
        network_id=ids['net'], name='new-port'
    ).id
    net_b, sub_b = network(conn, 'net-b', '10.35.2.0/24')
    conn.network.add_interface_to_router(ids['router'], subnet=sub_b.id)
    new_sg = conn.network.create_security_group(name='new-sg')
    conn.network.create_security_group_rule(
        security_group_id=new_sg.id,
        direction='ingress',
        remote_group_id=ids['web'],
        ethertype='IPv4',
    )
    ids.update(net_b=net_b.id, new_sg=new_sg.id)


def left(admin, project_id):
    """What the project owns now, by ID: a short description each."""
    net = admin.network
    found = {
        s.id: f'server {s.name}'
        for s in admin.compute.servers(
            all_projects=True, project_id=project_id
        )
    }
    for what, items in (
        ('port', net.ports(project_id=project_id)),
        ('network', net.networks(project_id=project_id)),
        ('subnet', net.subnets(project_id=project_id)),
        ('router', net.routers(project_id=project_id)),
        ('security group', net.security_groups(project_id=project_id)),
        ('image', admin.image.images(owner=project_id)),
    ):
        found.update({i.id: f'{what} {i.name or ""}' for i in items})
    return found


def test_side_by_side_with_openstack_project_cleanup(admin):
    """Twins, cleaned up to the same boundary: osc-cascade deletes only
    what can go without touching the new (asserted); what `openstack
    project cleanup --created-before` does to the other twin is printed,
    each run's exit status and what each left after one run and two."""
    twins = {tag: twin(admin, tag) for tag in ('cascade', 'osc')}
    for _project, conn, ids in twins.values():
        wait_status(
            lambda c=conn, i=ids: c.compute.get_server(i['vm']),
            'active',
            'old-vm',
        )
    time.sleep(2)
    boundary = now()
    time.sleep(2)
    for _project, conn, ids in twins.values():
        twin_grows(conn, ids)
    ours, theirs = (twins[t][0].id for t in ('cascade', 'osc'))
    before = {ours: left(admin, ours), theirs: left(admin, theirs)}
    runs = {
        'osc-cascade': lambda: run_openstack(
            'project',
            'delete',
            '--cascade',
            '--yes',
            '--created-before',
            boundary,
            ours,
        ),
        'project cleanup': lambda: run_openstack(
            'project',
            'cleanup',
            '--auto-approve',
            '--project',
            theirs,
            '--created-before',
            boundary,
        ),
    }
    after = {}
    for round_ in (1, 2):
        for name, run in runs.items():
            result = run()
            print(f'{name}, run {round_}: exit {result.code}')
            assert name != 'osc-cascade' or result.code == 0, result.stderr
        after[round_] = {p: left(admin, p) for p in (ours, theirs)}
    for name, pid in (('osc-cascade', ours), ('project cleanup', theirs)):
        print(f'{name}: before / after run 1 / after run 2')
        for rid, what in sorted(before[pid].items(), key=lambda i: i[1]):
            marks = [
                'left' if rid in after[r][pid] else 'DELETED' for r in (1, 2)
            ]
            print(f'  {what:40} {marks[0]:8} {marks[1]}')
    ids = twins['cascade'][2]
    gone = set(before[ours]) - set(after[2][ours])
    assert {ids['vm'], ids['old_port'], ids['old_image']} <= gone
    for stays in ('new_port', 'net', 'subnet', 'router', 'web', 'new_sg'):
        assert ids[stays] in after[2][ours], stays
    # the second run has nothing more to do: the state is stable
    assert after[1][ours] == after[2][ours]
