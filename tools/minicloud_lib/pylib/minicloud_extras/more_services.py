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

"""setup_cloud's part for the services added after the first nine
(Barbican, ...): their catalog entries and their readiness checks."""

import openstack

#: service user -> (service name, type, URL path after the port), by group
SERVICES = {
    'barbican': ('barbican', 'key-manager', ''),
    'designate': ('designate', 'dns', ''),
    'magnum': ('magnum', 'container-infra', '/v1'),
    'manila': ('manila', 'shared-file-system', '/v2'),
    'ironic': ('ironic', 'baremetal', ''),
    'aodh': ('aodh', 'alarming', ''),
    'mistral': ('mistral', 'workflowv2', '/v2'),
}


def catalog(cfg):
    """(service name, type, URL) of each chosen one."""
    groups = set(cfg['groups'])
    return [
        (name, stype, f'http://127.0.0.1:{cfg["ports"][group]}{path}')
        for group, (name, stype, path) in SERVICES.items()
        if group in groups
    ]


def resources(cfg, conn, wait, say):
    """Wait until each chosen one answers the admin."""
    groups = set(cfg['groups'])
    if 'barbican' in groups:

        def barbican_up():
            r = conn.key_manager.get('/secrets', params={'limit': 1})
            return r.status_code == 200

        wait('barbican API', barbican_up, timeout=120)
        say('barbican API')

    if 'designate' in groups:

        def designate_up():
            # the API answers, and each of its other services reports
            # itself UP (the API, under gunicorn, reports nothing)
            r = conn.dns.get('/service_statuses')
            up = {
                s['service_name']
                for s in r.json()['service_statuses']
                if s['status'] == 'UP'
            }
            return {'central', 'worker', 'producer', 'mdns'} <= up

        wait('designate services up', designate_up, timeout=180)
        say('designate services up')

    if 'magnum' in groups:

        def magnum_up():
            # the API answers, and its conductor reports itself up
            r = conn.container_infrastructure_management.get('/mservices')
            return r.status_code == 200 and any(
                s['binary'] == 'magnum-conductor' and s['state'] == 'up'
                for s in r.json()['mservices']
            )

        wait('magnum conductor up', magnum_up, timeout=180)
        say('magnum conductor up')

    if 'manila' in groups:
        manila(conn, wait, say)
    if 'ironic' in groups:
        ironic(cfg, wait, say)
    for group, proxy, path in (
        ('aodh', 'alarming', '/alarms'),
        ('mistral', 'workflow', '/workflows'),
    ):
        if group in groups:
            api_up(conn, wait, say, group, proxy, path)


def api_up(conn, wait, say, group, proxy, path):
    """Wait until the API lists the admin's own (an API with nothing
    behind it: Aodh, Mistral)."""

    def up():
        return getattr(conn, proxy).get(path).status_code == 200

    wait(group + ' API', up, timeout=120)
    say(group + ' API')


#: Manila's microversion for what is made here (share group types: 2.55)
MANILA_VERSION = '2.56'
#: share type -> its extra specs: 'default' and 'replicated' handle share
#: servers (DHSS=True: a share needs a share network), take snapshots and
#: shares made of them; 'replicated' shares also have replicas on the
#: other backend; 'plain' shares (backend gamma) have no share network,
#: which a share transfer needs
SHARE_TYPES = {
    'default': {
        'driver_handles_share_servers': 'True',
        'snapshot_support': 'True',
        'create_share_from_snapshot_support': 'True',
    },
    'replicated': {
        'driver_handles_share_servers': 'True',
        'snapshot_support': 'True',
        'replication_type': 'readable',
    },
    'plain': {
        'driver_handles_share_servers': 'False',
        'snapshot_support': 'True',
    },
}


def manila(conn, wait, say):
    """The scheduler and the three share backends up, the public share
    types and the share group type 'default' (of both)."""
    sfs = conn.shared_file_system
    mv = {'microversion': MANILA_VERSION}

    def manila_up():
        found = sfs.get('/services', **mv).json()['services']
        up = {s['host'] for s in found if s['state'] == 'up'}
        return {
            'minicloud',
            'minicloud@alpha',
            'minicloud@beta',
            'minicloud@gamma',
        } <= up

    wait('manila services up', manila_up, timeout=180)
    types = {
        t['name']: t for t in sfs.get('/types', **mv).json()['share_types']
    }
    for name, specs in SHARE_TYPES.items():
        if name not in types:
            types[name] = sfs.post(
                '/types',
                json={
                    'share_type': {
                        'name': name,
                        'share_type_access:is_public': True,
                        'extra_specs': specs,
                    }
                },
                **mv,
            ).json()['share_type']
    groups = sfs.get('/share-group-types', **mv).json()['share_group_types']
    if not any(g['name'] == 'default' for g in groups):
        sfs.post(
            '/share-group-types',
            json={
                'share_group_type': {
                    'name': 'default',
                    'is_public': True,
                    'share_types': [types['default']['id']],
                }
            },
            **mv,
        )
    say('manila services up, share types ' + ', '.join(SHARE_TYPES))


def ironic(cfg, wait, say):
    """The API answers and its conductor offers fake-hardware (a driver
    list is a system reader's: Ironic refuses a project-scoped admin)."""
    system = openstack.connect(
        auth_url=cfg['auth_url'],
        username='admin',
        password=cfg['passwords']['admin'],
        user_domain_name='Default',
        system_scope='all',
        region_name=cfg['region'],
        interface='public',
        load_yaml_config=False,
        load_envvars=False,
    )

    def ironic_up():
        drivers = system.baremetal.get('/drivers', microversion='1.65')
        return 'fake-hardware' in {
            d['name'] for d in drivers.json()['drivers']
        }

    wait('ironic conductor with fake-hardware', ironic_up, timeout=180)
    say('ironic conductor with fake-hardware')
