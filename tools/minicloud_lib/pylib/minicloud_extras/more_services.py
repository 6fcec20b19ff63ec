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

#: service user -> (service name, type, URL path after the port), by group
SERVICES = {
    'barbican': ('barbican', 'key-manager', ''),
    'designate': ('designate', 'dns', ''),
    'magnum': ('magnum', 'container-infra', '/v1'),
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
