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

"""Realistic project contents for the fake cloud, shaped like the APIs."""

from __future__ import annotations

from types import SimpleNamespace

from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import ADMIN_PROJECT, new_id


def project(cloud: FakeCloud, name: str, **extra) -> dict:
    fields = dict(
        id=new_id('p'),
        name=name,
        domain_id='default',
        enabled=True,
        is_domain=False,
        options={},
        parent_id='default',
    )
    fields.update(extra)  # any default may be overridden (options, ...)
    return cloud.add('projects', **fields)


def project_with_quotas(cloud) -> str:
    """Project A with Nova and Neutron quotas set and a network: what a
    drain freezes and a finish releases. Its ID."""
    pid = project(cloud, 'A')['id']
    cloud.set_quota('nova', pid, instances=50)
    cloud.set_quota('neutron', pid, network=50)
    network(cloud, pid)
    return pid


def external_network(cloud: FakeCloud) -> tuple[dict, dict]:
    net = cloud.add(
        'networks',
        name='public',
        project_id=ADMIN_PROJECT,
        tenant_id=ADMIN_PROJECT,
        shared=False,
        **{'router:external': True},
    )
    subnet = cloud.add(
        'subnets',
        name='public-subnet',
        network_id=net['id'],
        project_id=ADMIN_PROJECT,
        tenant_id=ADMIN_PROJECT,
        cidr='172.24.4.0/24',
    )
    return net, subnet


def network(cloud, project_id, name='net', cidr='10.0.0.0/24'):
    net = cloud.add(
        'networks',
        name=name,
        project_id=project_id,
        tenant_id=project_id,
        shared=False,
        **{'router:external': False},
    )
    subnet = cloud.add(
        'subnets',
        name=name + '-subnet',
        cidr=cidr,
        network_id=net['id'],
        project_id=project_id,
        tenant_id=project_id,
    )
    cloud.add(
        'ports',
        name='',
        network_id=net['id'],
        project_id=project_id,
        tenant_id=project_id,
        device_owner='network:dhcp',
        device_id='dhcp' + net['id'],
        fixed_ips=[{'subnet_id': subnet['id'], 'ip_address': '10.0.0.2'}],
        security_groups=[],
    )
    return net, subnet


def port(cloud, project_id, net, subnet, name='port', **extra):
    extra.setdefault('device_owner', '')
    extra.setdefault('device_id', '')
    extra.setdefault('security_groups', [])
    return cloud.add(
        'ports',
        name=name,
        network_id=net['id'],
        project_id=project_id,
        tenant_id=project_id,
        fixed_ips=[{'subnet_id': subnet['id'], 'ip_address': '10.0.0.10'}],
        **extra,
    )


def security_group(cloud, project_id, name, rules_to=()):
    group = cloud.add(
        'security_groups',
        name=name,
        project_id=project_id,
        tenant_id=project_id,
        security_group_rules=[],
    )
    for remote in rules_to:
        add_rule(cloud, group, remote)
    return group


def add_rule(cloud, group, remote):
    rule = cloud.add(
        'security_group_rules',
        security_group_id=group['id'],
        remote_group_id=remote['id'],
        project_id=group['project_id'],
        tenant_id=group['project_id'],
        direction='ingress',
    )
    group['security_group_rules'].append(rule)
    return rule


def router(cloud, project_id, subnet, external=None, name='router'):
    r = cloud.add(
        'routers',
        name=name,
        project_id=project_id,
        tenant_id=project_id,
        routes=[],
        external_gateway_info=(
            {'network_id': external['id']} if external else None
        ),
    )
    iface = cloud.add(
        'ports',
        name='',
        network_id=subnet['network_id'],
        project_id=project_id,
        tenant_id=project_id,
        device_owner='network:router_interface',
        device_id=r['id'],
        security_groups=[],
        fixed_ips=[{'subnet_id': subnet['id'], 'ip_address': '10.0.0.1'}],
    )
    return r, iface


def floating_ip(cloud, project_id, external, router_=None, port_=None):
    return cloud.add(
        'floatingips',
        project_id=project_id,
        tenant_id=project_id,
        floating_network_id=external['id'],
        floating_ip_address='172.24.4.10',
        router_id=router_['id'] if router_ else None,
        port_id=port_['id'] if port_ else None,
    )


def server(
    cloud,
    project_id,
    name='vm',
    net=None,
    subnet=None,
    sg=None,
    status='ACTIVE',
    **extra,
):
    s = cloud.add(
        'servers',
        name=name,
        project_id=project_id,
        status=status,
        volumes=[],
        locked=False,
        **extra,
    )
    if net is not None:
        port(
            cloud,
            project_id,
            net,
            subnet,
            name='',
            device_id=s['id'],
            device_owner='compute:nova',
            created_by_nova=True,
            security_groups=[sg['id']] if sg else [],
        )
    return s


def volume(cloud, project_id, name='vol', attach_to=None, **extra):
    v = cloud.add(
        'volumes',
        name=name,
        status='available',
        attachments=[],
        **{'os-vol-tenant-attr:tenant_id': project_id},
        **extra,
    )
    if attach_to is not None:
        attach(cloud, v, attach_to)
    return v


def attach(cloud, vol, server_):
    vol['status'] = 'in-use'
    vol['attachments'].append(
        {
            'server_id': server_['id'],
            'attachment_id': new_id('att'),
            'volume_id': vol['id'],
        }
    )
    server_['volumes'].append(vol['id'])


def snapshot(cloud, project_id, vol, name='snap'):
    return cloud.add(
        'snapshots',
        name=name,
        volume_id=vol['id'],
        status='available',
        **{'os-extended-snapshot-attributes:project_id': project_id},
    )


_clock = iter(range(10**6))


def backup(cloud, project_id, vol, name='backup', incremental=False):
    """Cinder's API does not show an incremental's parent: it is the
    volume's latest backup when the incremental was taken."""
    taken = f'2026-11-01T00:{next(_clock) // 60:02d}:{next(_clock) % 60:02d}'
    return cloud.add(
        'backups',
        name=name,
        volume_id=vol['id'],
        status='available',
        is_incremental=incremental,
        created_at=taken,
        data_timestamp=taken,
        **{'os-backup-project-attr:project_id': project_id},
    )


def image(cloud, project_id, name='image', visibility='private', **extra):
    return cloud.add(
        'images',
        name=name,
        owner=project_id,
        visibility=visibility,
        status='active',
        protected=extra.pop('protected', False),
        **extra,
    )


def full_project(cloud, name, external):
    """The topology of the issue: servers, volumes with snapshots and
    incremental backups, a routed network with floating IPs."""
    p = project(cloud, name)
    pid = p['id']
    net, subnet = network(cloud, pid)
    default_sg = security_group(cloud, pid, 'default')
    web_sg = security_group(cloud, pid, 'web', rules_to=[default_sg])
    r, _iface = router(cloud, pid, subnet, external)
    vm = server(cloud, pid, 'vm1', net, subnet, web_sg)
    vm2 = server(cloud, pid, 'vm2', net, subnet, default_sg, status='ERROR')
    user_port = port(
        cloud,
        pid,
        net,
        subnet,
        'user-port',
        security_groups=[default_sg['id']],
    )
    vm_port = next(
        pt for pt in cloud.all('ports') if pt.get('device_id') == vm['id']
    )
    floating_ip(cloud, pid, external, r, vm_port)
    floating_ip(cloud, pid, external, r, user_port)
    floating_ip(cloud, pid, external)  # allocated, not associated
    data = volume(cloud, pid, 'data', attach_to=vm)
    snap = snapshot(cloud, pid, data, 'data-snap')
    volume(cloud, pid, 'from-snap', snapshot_id=snap['id'])
    full = backup(cloud, pid, data, 'full')
    incr = backup(cloud, pid, data, 'incr', incremental=True)
    backup(cloud, pid, data, 'incr2', incremental=True)
    image(cloud, pid, 'private-image')
    cloud.add(
        'role_assignments',
        user={'id': 'user-' + name},
        role={'id': 'member'},
        scope={'project': {'id': pid}},
    )
    cloud.add(
        'application_credentials',
        name='ci',
        user_id='user-' + name,
        project_id=pid,
    )
    return {
        'project': p,
        'network': net,
        'subnet': subnet,
        'router': r,
        'server': vm,
        'error_server': vm2,
        'volume': data,
        'snapshot': snap,
        'full_backup': full,
        'incremental': incr,
        'web_sg': web_sg,
        'default_sg': default_sg,
    }


def evacuation(cloud):
    """Scenario A of the notes: vm1 evacuated from compute-a (stopped and
    forced down) to compute-b, its allocation on compute-a left behind."""
    a = cloud.compute('compute-a')
    b = cloud.compute('compute-b', state='up', forced_down=False)
    vm = cloud.server('vm1', 'compute-b')
    rp_a, rp_b = cloud.node_of('compute-a'), cloud.node_of('compute-b')
    cloud.allocate(vm['id'], {rp_a: {'VCPU': 1, 'MEMORY_MB': 512}})
    moved = cloud.migration(vm, 'compute-a', 'compute-b')
    return SimpleNamespace(
        a=a, b=b, vm=vm, rp_a=rp_a, rp_b=rp_b, evacuation=moved
    )


def all_services_project(cloud, name, external):
    """A project that owns something of every kind the cascade knows, on
    top of the topology of full_project. Returns the ids."""
    p = full_project(cloud, name, external)
    pid = p['project']['id']
    user = 'user-' + name
    ids = {
        'project': pid,
        'user': user,
        **{k: v['id'] for k, v in p.items() if isinstance(v, dict)},
    }
    cloud.keypair(user, 'laptop')
    # users are not the project's: shown, never deleted
    ids['home_user'] = cloud.add(
        'users', name='home-' + name, default_project_id=pid
    )['id']
    stack_project = cloud.add(
        'projects',
        name=f'{pid}-{"5" * 32}'[:64],
        description='Heat stack user project',
        domain_id='heat-stack-users',
    )
    ids['stack_user'] = cloud.add(
        'users',
        name='wait-handle-' + name,
        domain_id='heat-stack-users',
        default_project_id=stack_project['id'],
    )['id']
    # what full_project lacks of the base services' kinds
    ids['server_group'] = cloud.add(
        'server_groups', name='group', project_id=pid, members=[]
    )['id']
    trunk_port = port(cloud, pid, p['network'], p['subnet'], 'trunk-parent')
    ids['trunk'] = cloud.add(
        'trunks',
        name='trunk',
        project_id=pid,
        tenant_id=pid,
        port_id=trunk_port['id'],
        sub_ports=[],
    )['id']
    ids['rbac'] = cloud.add(
        'rbac_policies',
        project_id=pid,
        tenant_id=pid,
        object_type='network',
        object_id=p['network']['id'],
        action='access_as_shared',
        target_tenant=ADMIN_PROJECT,
    )['id']

    # Heat: a stack that made a network and a container, a nested stack
    stack = cloud.stack('app', pid)
    stack_net = cloud.add(
        'networks',
        name='stack-net',
        project_id=pid,
        tenant_id=pid,
        shared=False,
    )
    cloud.resource(stack, 'net', 'OS::Neutron::Net', stack_net['id'])
    cloud.container(pid, 'stack-cont')
    cloud.resource(stack, 'cont', 'OS::Swift::Container', 'stack-cont')
    nested = cloud.nested(stack, 'group')
    ids.update(
        stack=stack['id'], nested_stack=nested['id'], stack_net=stack_net['id']
    )

    # Octavia: on the project's subnet, a floating IP on its VIP
    fip = floating_ip(cloud, pid, external, p['router'])
    lb = cloud.load_balancer(
        pid, p['subnet'], members=[p['subnet']], vip_fip=fip
    )
    ids.update(lb=lb['id'], vip_port=lb['vip_port_id'], vip_fip=fip['id'])

    # Swift: plenty of objects, legacy versions, object versioning
    data = cloud.container(pid, 'data', objects=250)
    cloud.container(pid, 'docs-versions')
    docs = cloud.container(pid, 'docs', versions='docs-versions')
    cloud.put_object(docs, 'readme', versions=2)
    notes = cloud.container(pid, 'notes', versioned=True)
    cloud.put_object(notes, 'todo', versions=3)
    ids.update(data=data['id'], docs=docs['id'], notes=notes['id'])

    # Designate: a zone, and the PTR of a floating IP
    ids['zone'] = cloud.zone(pid, f'{name.lower()}.example.')['id']
    # pending transfers: a volume, a zone and a share offered to no one yet
    offered = volume(cloud, pid, 'offered')
    ids['volume_transfer'] = cloud.offer_volume(offered)['id']
    ids['zone_transfer'] = cloud.offer_zone(
        cloud.zone(pid, f'offered.{name.lower()}.example.')
    )['id']
    ids['share_transfer'] = cloud.offer_share(cloud.share(pid, 'offered'))[
        'id'
    ]
    ptr_fip = floating_ip(cloud, pid, external)
    cloud.ptr(ptr_fip, f'www.{name.lower()}.example.')
    ids['ptr_fip'] = ptr_fip['id']

    # Manila: network, group, a share with a snapshot and a share made from
    # it, a replicated share
    share_net = cloud.manila('share_networks', pid)
    group = cloud.manila('share_groups', pid, share_network_id=share_net['id'])
    share = cloud.share(
        pid,
        'files',
        share_network_id=share_net['id'],
        share_group_id=group['id'],
    )
    snap = cloud.manila('share_snapshots', pid, share_id=share['id'])
    clone = cloud.share(
        pid, 'clone', snapshot_id=snap['id'], share_network_id=share_net['id']
    )
    replicated = cloud.share(
        pid,
        'replicated',
        replication_type='dr',
        share_network_id=share_net['id'],
    )
    cloud.manila(
        'share_replicas',
        None,
        share_id=replicated['id'],
        replica_state='active',
        id=replicated['id'],
    )
    replica = cloud.manila(
        'share_replicas',
        None,
        share_id=replicated['id'],
        replica_state='in_sync',
    )
    ids.update(
        share_network=share_net['id'],
        share_group=group['id'],
        share=share['id'],
        share_snapshot=snap['id'],
        clone=clone['id'],
        replica=replica['id'],
    )

    # Magnum: a template and a cluster with its own stack
    template = cloud.cluster_template(pid)
    cluster_stack = cloud.stack('k8s-stack', pid)
    cluster = cloud.magnum_cluster('k8s', pid, cluster_stack)
    cluster['cluster_template_id'] = template['id']
    ids.update(
        template=template['id'],
        cluster=cluster['id'],
        cluster_stack=cluster_stack['id'],
    )

    # Neutron's extensions
    net, subnet = p['network'], p['subnet']
    qos = cloud.neutron('qos/policies', pid, name='gold')
    qos_port = port(
        cloud, pid, net, subnet, 'qos-port', qos_policy_id=qos['id']
    )
    scope = cloud.neutron('address-scopes', pid, ip_version=4)
    pool = cloud.neutron(
        'subnetpools',
        pid,
        address_scope_id=scope['id'],
        prefixes=['10.8.0.0/16'],
    )
    pool_net, pool_subnet = network(cloud, pid, 'pool-net', '10.8.1.0/24')
    pool_subnet['subnetpool_id'] = pool['id']
    ike = cloud.neutron('vpn/ikepolicies', pid)
    ipsec = cloud.neutron('vpn/ipsecpolicies', pid)
    vpn = cloud.neutron(
        'vpn/vpnservices', pid, router_id=p['router']['id'], subnet_id=None
    )
    local_group = cloud.neutron(
        'vpn/endpoint-groups', pid, type='subnet', endpoints=[subnet['id']]
    )
    peer_group = cloud.neutron(
        'vpn/endpoint-groups', pid, type='cidr', endpoints=['192.168.0.0/24']
    )
    site = cloud.neutron(
        'vpn/ipsec-site-connections',
        pid,
        vpnservice_id=vpn['id'],
        ikepolicy_id=ike['id'],
        ipsecpolicy_id=ipsec['id'],
        local_ep_group_id=local_group['id'],
        peer_ep_group_id=peer_group['id'],
    )
    pf_fip = floating_ip(cloud, pid, external, p['router'])
    pf_port = port(cloud, pid, net, subnet, 'pf-port')
    pf = cloud.add(
        'port_forwardings',
        floatingip_id=pf_fip['id'],
        internal_port_id=pf_port['id'],
        internal_port=22,
        external_port=2222,
        protocol='tcp',
        internal_ip_address='10.0.0.10',
    )
    seg = cloud.neutron(
        'network_segment_ranges',
        pid,
        network_type='vxlan',
        minimum=100,
        maximum=200,
        shared=False,
    )
    net['segment_range_id'] = seg['id']
    local_port = port(
        cloud, pid, net, subnet, '', device_owner='network:local_ip'
    )
    local_ip = cloud.neutron(
        'local_ips', pid, local_port_id=local_port['id'], network_id=net['id']
    )
    ids.update(
        qos=qos['id'],
        qos_port=qos_port['id'],
        scope=scope['id'],
        pool=pool['id'],
        pool_subnet=pool_subnet['id'],
        pool_net=pool_net['id'],
        ike=ike['id'],
        ipsec=ipsec['id'],
        vpn=vpn['id'],
        local_group=local_group['id'],
        peer_group=peer_group['id'],
        site=site['id'],
        pf_fip=pf_fip['id'],
        pf=pf['id'],
        pf_port=pf_port['id'],
        segment_range=seg['id'],
        local_ip=local_ip['id'],
    )

    # quotas of its own in every service that has them
    for service in (
        'nova',
        'cinder',
        'neutron',
        'octavia',
        'manila',
        'barbican',
        'magnum',
    ):
        cloud.set_quota(
            service,
            pid,
            **{
                'nova': {'instances': 50},
                'cinder': {'volumes': 50},
                'neutron': {'network': 50},
                'octavia': {'load_balancer': 5},
                'manila': {'shares': 5},
                'barbican': {'secrets': 5},
                'magnum': {'Cluster': 3},
            }[service],
        )
    ids.update(network_services(cloud, p))
    # Trove (a replica and its source), Aodh, Mistral, and an Ironic node
    # it leases and runs its server on (one it owned would keep it)
    db = cloud.trove_instance(pid, 'db')
    ids['trove'] = db['id']
    ids['trove_replica'] = cloud.trove_instance(pid, 'db-r', db)['id']
    ids['alarm'] = cloud.alarm(pid)['id']
    wf = cloud.mistral('workflows', pid, scope='private')
    ids['workflow'] = wf['id']
    for trigger in ('cron_triggers', 'event_triggers'):
        ids[trigger] = cloud.mistral(trigger, pid, workflow_id=wf['id'])['id']
    ids['node'] = cloud.node(
        f'node-{name}', lessee=pid, instance_uuid=p['server']['id']
    )['id']
    # its access to private flavors and types of the admin's
    for service in ('nova', 'cinder', 'manila'):
        ids[f'{service}_type'] = cloud.private_type(
            service, f'private-{name}', [pid]
        )['id']
    return ids


def network_services(cloud, p):
    """What Neutron's newer extensions add to full_project's ``p``: an
    address group a rule of the web group names, a firewall group on the
    user port with a policy of two rules, a metering label with a rule, a
    log of the web group and one of a port, a BGP VPN associated with the
    network, the router and a port. Returns the ids."""
    pid = p['project']['id']
    net, subnet = p['network'], p['subnet']
    ag = cloud.neutron_more('address-groups', pid, name='ag', addresses=[])
    rule = add_rule(cloud, p['web_sg'], p['web_sg'])
    rule.update(remote_group_id=None, remote_address_group_id=ag['id'])
    fw_port = port(cloud, pid, net, subnet, 'fw-port')
    rules = [
        cloud.neutron_more('fwaas/firewall_rules', pid, name=f'r{n}')
        for n in range(2)
    ]
    policy = cloud.neutron_more(
        'fwaas/firewall_policies',
        pid,
        name='policy',
        firewall_rules=[r['id'] for r in rules],
    )
    fwg = cloud.neutron_more(
        'fwaas/firewall_groups',
        pid,
        name='fwg',
        ports=[fw_port['id']],
        ingress_firewall_policy_id=policy['id'],
        egress_firewall_policy_id=None,
    )
    label = cloud.neutron_more('metering/metering-labels', pid, name='m')
    log_port = port(cloud, pid, net, subnet, 'logged-port')
    sg_log = cloud.neutron_more(
        'log/logs',
        pid,
        name='sg-log',
        resource_type='security_group',
        resource_id=p['web_sg']['id'],
        target_id=None,
    )
    port_log = cloud.neutron_more(
        'log/logs',
        pid,
        name='port-log',
        resource_type='security_group',
        resource_id=None,
        target_id=log_port['id'],
    )
    vpn_port = port(cloud, pid, net, subnet, 'vpn-port')
    bgpvpn = cloud.neutron_more(
        'bgpvpn/bgpvpns',
        pid,
        name='bgpvpn',
        networks=[net['id']],
        routers=[p['router']['id']],
        ports=[vpn_port['id']],
    )
    return {
        'address_group': ag['id'],
        'fw_port': fw_port['id'],
        'fw_rules': [r['id'] for r in rules],
        'fw_policy': policy['id'],
        'fw_group': fwg['id'],
        'metering_label': label['id'],
        'sg_log': sg_log['id'],
        'port_log': port_log['id'],
        'log_port': log_port['id'],
        'bgpvpn': bgpvpn['id'],
        'vpn_port': vpn_port['id'],
    }


def share_image_with(cloud, owner_id, member_id, name='golden'):
    """An image of ``owner_id`` shared with ``member_id``."""
    return image(
        cloud, owner_id, name, visibility='shared', members=[member_id]
    )


def occm_load_balancer(cloud, project_id, subnet, cluster, svc='web', **kw):
    """A Service's load balancer as the OpenStack cloud controller manager
    makes it for ``cluster`` (name, description, tag: cloud-provider-
    openstack's pkg/openstack/loadbalancer.go)."""
    lb = cloud.load_balancer(project_id, subnet, **kw)
    name = f'kube_service_{cluster}_default_{svc}'
    lb.update(
        name=name,
        description=f'Kubernetes external service default/{svc} from '
        f'cluster {cluster}',
        tags=[name],
    )
    return lb
