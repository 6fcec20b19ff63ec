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

"""The simulated customer (benchmarks.simdomain): two identical domains of
small projects and users with keypairs, served by the simulator's
Keystone and Nova, and what is left of one."""

import requests

from benchmarks import simcloud, simdomain, simserver, simshard
from tests.unit.test_bench_sim import token


def test_two_identical_domains_and_what_is_left_of_them():
    sc = simcloud.SimCloud(latency=0.0, workers=4)
    servers, state = simserver.serve(sc)
    try:
        one, twin = simdomain.seed(sc, projects=3, size=20, users=2)
        assert len(one['projects']) == 3 and len(one['users']) == 2
        before = simdomain.left(sc, one)
        assert before == simdomain.left(sc, twin)
        assert before['keypairs'] == 2 and before['users'] == 2
        assert before['domain'] == 1 and before['projects'] == 3
        # about 20 resources a project in the generator's mix (and what
        # goes with them: DHCP and router ports), the 8 of Keystone aside
        assert 45 <= sum(before.values()) - 8 <= 90
        # Keystone lists the domain's projects and users; Nova the keypairs
        tok, catalog = token(state)
        projects = requests.get(
            catalog['identity'] + '/projects',
            params={'domain_id': one['id']},
            headers={'X-Auth-Token': tok},
            timeout=10,
        ).json()['projects']
        assert sorted(p['id'] for p in projects) == sorted(one['projects'])
        user = one['users'][0]
        keypairs = requests.get(
            catalog['compute'] + '/os-keypairs',
            params={'user_id': user},
            headers={'X-Auth-Token': tok},
            timeout=10,
        ).json()['keypairs']
        assert [k['keypair']['name'] for k in keypairs] == ['laptop']
        # what one loses, the other keeps
        with sc.lock:
            sc.main.db['keypairs'].pop(f'{user}/laptop')
        assert simdomain.left(sc, one)['keypairs'] == 1
        assert simdomain.left(sc, twin)['keypairs'] == 2
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def _catalog(answer, region):
    return {
        s['type']: e['url']
        for s in answer.json()['token']['catalog']
        for e in s['endpoints']
        if e['region'] == region
    }


def test_two_regions_each_with_its_half_and_its_keypairs():
    sc = simcloud.SimCloud(latency=0.0, workers=4, regions=2)
    servers, state = simserver.serve(sc)
    try:
        one, twin = simdomain.seed(sc, projects=2, size=20, users=2)
        answer = requests.post(
            state['auth_url'] + '/auth/tokens',
            json={'auth': {'identity': {}, 'scope': {}}},
            timeout=10,
        )
        tok = answer.headers['X-Subject-Token']
        first = _catalog(answer, 'RegionOne')
        second = _catalog(answer, 'RegionTwo')
        # every service but Keystone has an endpoint of its own in each
        assert first['identity'] == second['identity']
        assert all(first[s] != second[s] for s in simshard.SERVICES[1:]), (
            first,
            second,
        )
        # a user's keypair in each region; what one loses, the other keeps
        user = one['users'][0]

        def keypairs(catalog):
            return requests.get(
                catalog['compute'] + '/os-keypairs',
                params={'user_id': user},
                headers={'X-Auth-Token': tok},
                timeout=10,
            ).json()['keypairs']

        assert len(keypairs(first)) == len(keypairs(second)) == 1
        assert simdomain.left(sc, one)['keypairs'] == 4
        with sc.lock:
            sc.mains['RegionTwo'].db['keypairs'].pop(f'{user}/laptop')
        assert keypairs(first) and not keypairs(second)
        assert simdomain.left(sc, one)['keypairs'] == 3
        # a project's resources are split: each region lists its own
        # (their IDs apart), and a GET of the other's is a 404
        pid = one['projects'][0]

        def ports(catalog):
            answer = requests.get(
                catalog['network'] + '/v2.0/ports',
                params={'project_id': pid},
                headers={'X-Auth-Token': tok},
                timeout=10,
            )
            return {p['id'] for p in answer.json()['ports']}

        here, there = ports(first), ports(second)
        assert here and there and not here & there
        port = next(iter(there))
        assert [
            requests.get(
                catalog['network'] + f'/v2.0/ports/{port}',
                headers={'X-Auth-Token': tok},
                timeout=10,
            ).status_code
            for catalog in (first, second)
        ] == [404, 200]
        assert simdomain.left(sc, one) == simdomain.left(sc, twin) | {
            'keypairs': 3
        }
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_a_projects_resources_are_split_between_the_regions():
    assert simdomain.split(20, 2) == [10, 10]
    assert simdomain.split(21, 2) == [11, 10]
    assert simdomain.split(20, 1) == [20]
