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

"""Identity data, shared resources and readiness checks for minicloud.

Runs inside the service venv, in one process per phase, because every
``openstack`` CLI call costs seconds of start-up:

    python -m minicloud_extras.setup_cloud identity  HOME/etc/minicloud.json
    python -m minicloud_extras.setup_cloud resources HOME/etc/minicloud.json
    python -m minicloud_extras.setup_cloud region-two HOME/etc/minicloud.json

Both phases are idempotent.
"""

import json
import sys
import time
import urllib.parse

import openstack

from minicloud_extras import more_services

T0 = time.monotonic()


def say(msg):
    sys.stderr.write(f'      {msg:<46} [{time.monotonic() - T0:5.1f}s]\n')
    sys.stderr.flush()


def connect(cfg, **over):
    kw = dict(
        auth_url=cfg['auth_url'],
        username='admin',
        password=cfg['passwords']['admin'],
        project_name='admin',
        user_domain_name='Default',
        project_domain_name='Default',
        region_name=cfg['region'],
        interface='public',
    )
    kw.update(over)
    return openstack.connect(load_yaml_config=False, load_envvars=False, **kw)


def wait(what, check, timeout=240, interval=1.0):
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            result = check()
            if result:
                return result
        except Exception as exc:  # services still starting
            last = exc
        if time.monotonic() > deadline:
            raise SystemExit(
                f'timed out waiting for {what} (last error: {last!r})'
            )
        time.sleep(interval)


# --------------------------------------------------------------- identity

SERVICE_USERS = (
    'placement',
    'nova',
    'glance',
    'neutron',
    'cinder',
    'heat',
    'octavia',
    'swift',
    *more_services.SERVICES,
)


def catalog(cfg):
    """(service name, type, URL, region) of every endpoint."""
    p = cfg['ports']
    url = 'http://127.0.0.1:%d'
    g = set(cfg['groups'])
    out = []
    if 'placement' in g:
        out.append(('placement', 'placement', url % p['placement']))
    if 'nova' in g:
        out.append(('nova', 'compute', url % p['nova'] + '/v2.1'))
    if 'glance' in g:
        out.append(('glance', 'image', url % p['glance']))
    if 'neutron' in g:
        out.append(('neutron', 'network', url % p['neutron']))
    if 'cinder' in g:
        out.append(('cinderv3', 'volumev3', url % p['cinder'] + '/v3'))
        out.append(('cinder', 'block-storage', url % p['cinder'] + '/v3'))
    if 'heat' in g:
        out.append(
            ('heat', 'orchestration', url % p['heat'] + '/v1/%(tenant_id)s')
        )
    if 'octavia' in g:
        out.append(('octavia', 'load-balancer', url % p['octavia']))
    if 'swift' in g:
        out.append(
            (
                'swift',
                'object-store',
                url % p['swift'] + '/v1/AUTH_%(tenant_id)s',
            )
        )
    out += more_services.catalog(cfg)
    out = [(*entry, cfg['region']) for entry in out]
    if 'region-two' in g:
        r2 = cfg['region_two']
        # the same services, with endpoints in one more region; Keystone
        # is one for both (keystone-manage bootstrap registered it in
        # RegionOne): a client pointed at RegionTwo finds it there too
        out += [
            ('keystone', 'identity', cfg['auth_url'], r2),
            ('glance', 'image', url % p['glance_r2'], r2),
            ('neutron', 'network', url % p['neutron_r2'], r2),
        ]
    return out


def identity(cfg):
    conn = connect(cfg)
    idn = conn.identity
    pw = cfg['passwords']
    groups = set(cfg['groups'])

    # each by name: keystone.conf's list_limit cuts a listing of them all
    projects = {
        name: found
        for name in ('admin', 'service', 'demo', 'alt')
        if (found := idn.find_project(name, domain_id='default'))
    }
    for name, desc in (
        ('service', 'OpenStack services'),
        ('demo', 'minicloud demo project'),
        ('alt', 'minicloud alternate project'),
    ):
        if name not in projects:
            projects[name] = idn.create_project(
                name=name, domain_id='default', description=desc
            )

    roles = {r.name: r for r in idn.roles()}
    wanted = ['admin', 'member', 'reader', 'service']
    if 'swift' in groups:
        wanted.append('ResellerAdmin')
    if 'heat' in groups:
        wanted += ['heat_stack_owner', 'heat_stack_user']
    if 'octavia' in groups:
        wanted.append('load-balancer_member')
    for name in wanted:
        if name not in roles:
            roles[name] = idn.create_role(name=name)
    say('projects and roles')

    users = {u.name: u for u in idn.users(domain_id='default')}

    def user(name, password, project):
        if name not in users:
            users[name] = idn.create_user(
                name=name,
                password=password,
                domain_id='default',
                default_project_id=project.id,
            )
        return users[name]

    def grant(u, project, *role_names):
        for r in role_names:
            idn.assign_project_role_to_user(project, u, roles[r])

    # RegionTwo's Neutron and Glance run as RegionOne's users
    with_users = set(groups)
    if 'region-two' in groups:
        with_users |= {'neutron', 'glance'}
    for name in SERVICE_USERS:
        if name in with_users:
            grant(
                user(name, pw['service'] % name, projects['service']),
                projects['service'],
                'admin',
                'service',
            )
    extra = ['heat_stack_owner'] if 'heat' in groups else []
    grant(
        user('demo', pw['demo'], projects['demo']),
        projects['demo'],
        'member',
        *extra,
    )
    grant(
        user('alt', pw['alt'], projects['alt']),
        projects['alt'],
        'member',
        *extra,
    )
    if 'swift' in groups:
        grant(users['admin'], projects['admin'], 'ResellerAdmin')
    if 'heat' in groups:
        domain = idn.find_domain('heat')
        if domain is None:
            domain = idn.create_domain(
                name='heat',
                description='Owns users and projects created by heat',
            )
        dadmin = idn.find_user('heat_domain_admin', domain_id=domain.id)
        if dadmin is None:
            dadmin = idn.create_user(
                name='heat_domain_admin',
                password=pw['heat_domain_admin'],
                domain_id=domain.id,
            )
        idn.assign_domain_role_to_user(domain, dadmin, roles['admin'])
    say('users and role assignments')
    domain_managers(idn, pw)

    entries = catalog(cfg)
    regions = list(dict.fromkeys(e[3] for e in entries))
    have_regions = {r.id for r in idn.regions()}
    for region in regions:
        if region not in have_regions:
            idn.create_region(id=region)
    services = {(s.name, s.type): s for s in idn.services()}
    endpoints = {}
    for e in idn.endpoints():
        endpoints.setdefault(e.service_id, {})[e.region_id, e.interface] = e
    for name, stype, url, region in entries:
        svc = services.get((name, stype))
        if svc is None:
            svc = services[name, stype] = idn.create_service(
                name=name, type=stype
            )
        have = endpoints.get(svc.id, {})
        # public only, as DevStack does: every service here is configured
        # to use public endpoints, and each extra endpoint costs a call
        for iface in ('public',):
            if (region, iface) not in have:
                idn.create_endpoint(
                    service_id=svc.id,
                    interface=iface,
                    url=url,
                    region_id=region,
                )
            elif have[region, iface].url != url:
                idn.update_endpoint(have[region, iface], url=url)
    say(f'services and endpoints ({", ".join(regions)})')


#: domain -> its manager: Keystone's manager persona (its default policies
#: since 2024.2: the role manager on a domain may create, disable and delete
#: the domain's projects and grant manager, member and reader in it), no
#: admin anywhere. 'other' is the one whose manager is refused elsewhere.
DOMAIN_MANAGERS = {
    'managed': 'managed-manager',
    'other': 'other-manager',
}


def domain_managers(idn, pw):
    # keystone-manage bootstrap makes the role manager (admin implies it,
    # it implies member) from Keystone 2024.2 on; an older release has no
    # manager persona in its policy and this cloud none to test with
    role = idn.find_role('manager')
    if role is None:
        raise SystemExit(
            "Keystone has no role 'manager': its release predates the "
            'manager persona (2024.2)'
        )
    for name, username in DOMAIN_MANAGERS.items():
        domain = idn.find_domain(name) or idn.create_domain(
            name=name, description=f'minicloud: managed by {username}'
        )
        manager = idn.find_user(username, domain_id=domain.id)
        if manager is None:
            manager = idn.create_user(
                name=username, password=pw['manager'], domain_id=domain.id
            )
        idn.assign_domain_role_to_user(domain, manager, role)
    say('domain managers ({})'.format(', '.join(DOMAIN_MANAGERS)))


# -------------------------------------------------------------- resources


def project_networks_allocate(conn, region):
    """A project network gets a VXLAN ID: else every test that makes one
    fails alike, long after the cause (Neutron skipped its allocations'
    sync at start)."""
    try:
        net = conn.network.create_network(name='minicloud-probe')
    except openstack.exceptions.HttpException as e:
        raise SystemExit(
            f'{region} neutron cannot make a project network ({e}); its '
            'log says whether it synced its segment allocations at start'
        ) from None
    conn.network.delete_network(net)


def resources(cfg):
    groups = set(cfg['groups'])
    conn = connect(cfg)

    if 'neutron' in groups:
        # Neutron 29 + SQLAlchemy 2.1: the first query after start can fail
        # with "type object 'Port' has no attribute ..." until the ORM
        # mappers are configured; one warm-up request settles it.
        def warm():
            list(conn.network.networks(limit=1))
            list(conn.network.ports(limit=1))
            return True

        wait('neutron API', warm, timeout=120)
        project_networks_allocate(conn, cfg['region'])
        net = conn.network.find_network('public')
        if net is None:
            net = conn.network.create_network(
                name='public',
                is_router_external=True,
                is_shared=True,
                provider_network_type='flat',
                provider_physical_network='public',
            )
        if not list(conn.network.subnets(network_id=net.id)):
            conn.network.create_subnet(
                name='public-subnet',
                network_id=net.id,
                ip_version=4,
                cidr='203.0.113.0/24',
                gateway_ip='203.0.113.1',
                allocation_pools=[
                    {'start': '203.0.113.10', 'end': '203.0.113.250'}
                ],
                is_dhcp_enabled=False,
            )
        say('network public (external, shared)')

    if 'glance' in groups:
        wait(
            'glance API',
            lambda: list(conn.image.images(limit=1)) or True,
            timeout=120,
        )
        if conn.image.find_image('cirros') is None:
            with open(cfg['image_file'], 'rb') as f:
                data = f.read()
            conn.image.create_image(
                name='cirros',
                data=data,
                disk_format='raw',
                container_format='bare',
                visibility='public',
            )
        say('image cirros')

    if 'nova' in groups:
        wait(
            'nova API',
            lambda: list(conn.compute.flavors()) is not None,
            timeout=120,
        )
        have = {f.name for f in conn.compute.flavors()}
        for name, ram, disk in (('m1.tiny', 128, 1), ('m1.small', 256, 2)):
            if name not in have:
                conn.compute.create_flavor(
                    name=name, ram=ram, vcpus=1, disk=disk, is_public=True
                )
        say('flavors m1.tiny, m1.small')
        wait_computes(cfg, conn)

    if 'cinder' in groups:

        def volume_services():
            svcs = list(conn.block_storage.services())
            binaries = {s.binary for s in svcs if s.state == 'up'}
            return {
                'cinder-scheduler',
                'cinder-volume',
                'cinder-backup',
            } <= binaries

        wait('cinder services up', volume_services)
        say('cinder services up')

        # A volume created before the scheduler has the backend's first
        # capacity report fails with NoValidBackend (seen in CI): wait
        # until the scheduler knows a pool.
        def scheduler_pools():
            return (
                conn.block_storage.get('/scheduler-stats/get_pools')
                .json()
                .get('pools')
            )

        wait('cinder scheduler knows a pool', scheduler_pools)
        say('cinder scheduler knows a pool')

    if 'heat' in groups:

        def engine_up():
            r = conn.orchestration.get('/services')
            r.raise_for_status()
            return any(
                s['status'] == 'up' for s in r.json().get('services', [])
            )

        wait('heat-engine up', engine_up)
        say('heat-engine up')

    if 'octavia' in groups:
        wait(
            'octavia API',
            lambda: conn.load_balancer.get('/').status_code == 200,
            timeout=120,
        )
        say('octavia API')

    if 'swift' in groups:

        def swift_up():
            r = conn.object_store.get(
                '/info',
                endpoint_override=(
                    f"http://127.0.0.1:{cfg['ports']['swift']}"
                ),
            )
            return r.status_code == 200

        wait('swift proxy', swift_up, timeout=60)
        say('swift proxy')

    more_services.resources(cfg, conn, wait, say)


def region_two(cfg):
    """RegionTwo's Neutron and Glance answer, as the admin, through the
    endpoints of region RegionTwo (and Keystone is found there too)."""
    region = cfg['region_two']
    conn = connect(cfg, region_name=region)
    ports = cfg['ports']
    for proxy, port in (
        (conn.network, ports['neutron_r2']),
        (conn.image, ports['glance_r2']),
    ):
        url = proxy.get_endpoint()
        if urllib.parse.urlsplit(url).port != port:
            raise SystemExit(
                f'{region} {proxy.service_type} endpoint is {url}, '
                f'not port {port}'
            )

    # Neutron 29 + SQLAlchemy 2.1: as RegionOne's (see resources)
    def warm():
        list(conn.network.networks(limit=1))
        list(conn.network.ports(limit=1))
        return True

    wait(f'{region} neutron API', warm, timeout=120)
    project_networks_allocate(conn, region)
    wait(
        f'{region} glance API',
        lambda: list(conn.image.images(limit=1)) or True,
        timeout=120,
    )
    wait(
        f'{region} identity endpoint',
        lambda: conn.identity.find_region(region),
        timeout=30,
    )
    say(f'{region}: neutron, glance (and keystone)')


def wait_computes(cfg, conn):
    import pymysql

    hosts = set(cfg['compute_hosts'])

    def services_up():
        up = {
            s.host
            for s in conn.compute.services(binary='nova-compute')
            if s.state == 'up' and s.status == 'enabled'
        }
        return hosts <= up

    wait('nova-compute services up', services_up)

    def providers():
        hyps = {h.name: h.id for h in conn.compute.hypervisors()}
        if not hosts <= set(hyps):
            return False
        rps = {rp.id: rp for rp in conn.placement.resource_providers()}
        for host in hosts:
            if hyps[host] not in rps:
                return False
            inv = list(
                conn.placement.resource_provider_inventories(hyps[host])
            )
            if not inv:
                return False
        return True

    wait('resource providers with inventory', providers)
    say('computes up: {}'.format(', '.join(sorted(hosts))))

    db = cfg['db']

    def mapped():
        c = pymysql.connect(
            host='127.0.0.1',
            port=db['port'],
            user=db['user'],
            password=db['password'],
            database='nova_api',
        )
        try:
            with c.cursor() as cur:
                cur.execute('SELECT host FROM host_mappings')
                return hosts <= {row[0] for row in cur.fetchall()}
        finally:
            c.close()

    wait('computes mapped to cell1 (scheduler discovery)', mapped, timeout=120)
    say('computes mapped to cell1')


def demo(cfg):
    """Sample resources in project demo (``up --demo``), as user demo."""
    groups = set(cfg['groups'])
    conn = connect(
        cfg,
        username='demo',
        password=cfg['passwords']['demo'],
        project_name='demo',
    )
    net = conn.network.find_network('demo-net')
    if net is None:
        net = conn.network.create_network(name='demo-net')
        subnet = conn.network.create_subnet(
            name='demo-subnet',
            network_id=net.id,
            ip_version=4,
            cidr='10.10.0.0/24',
        )
        public = conn.network.find_network('public')
        router = conn.network.create_router(
            name='demo-router', external_gateway_info={'network_id': public.id}
        )
        conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    say('demo-net, demo-subnet, demo-router')
    if 'nova' in groups and conn.compute.find_server('demo-server') is None:
        server = conn.compute.create_server(
            name='demo-server',
            flavor_id=conn.compute.find_flavor('m1.tiny').id,
            image_id=conn.image.find_image('cirros').id,
            networks=[{'uuid': net.id}],
        )
        conn.compute.wait_for_server(server, wait=120)
        say('demo-server ACTIVE')
    if (
        'cinder' in groups
        and conn.block_storage.find_volume('demo-volume') is None
    ):
        vol = conn.block_storage.create_volume(name='demo-volume', size=1)
        conn.block_storage.wait_for_status(vol, 'available', wait=120)
        say('demo-volume available')


if __name__ == '__main__':
    with open(sys.argv[2]) as f:
        config = json.load(f)
    phases = {
        'identity': identity,
        'resources': resources,
        'region-two': region_two,
        'demo': demo,
    }
    phases[sys.argv[1]](config)
