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

"""The fakes list as the services do (read from their source), so that the
unit tests and the simulation inherit it: Cinder's ``all_tenants``,
Glance's visibility and its pages of 25, Neutron's and Cinder's
``limit``/``marker`` pages; and the kinds find everything of a project
through them."""

import requests

from osc_cascade.api.http import request
from osc_cascade.kinds import block_storage, image
from osc_cascade.kinds.network import core
from tests.unit import scenarios
from tests.unit.fakes.common import ADMIN_PROJECT, ENDPOINTS
from tests.unit.fakes.scoped import ScopedCloud

CINDER = ENDPOINTS['block-storage']
GLANCE = ENDPOINTS['image'] + '/v2/images'
NEUTRON = ENDPOINTS['network'] + '/v2.0'


def ids(items):
    return sorted(i['id'] for i in items)


def get(url, **params):
    answer = requests.get(url, params=params, timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()


# -- Cinder: all_tenants (cinder.volume.api.API.get_all) ---------------------


def test_cinder_lists_the_tokens_project_alone_without_all_tenants(cloud, pid):
    theirs = scenarios.volume(cloud, pid, 'theirs')
    mine = scenarios.volume(cloud, ADMIN_PROJECT, 'mine')
    url = CINDER + '/volumes/detail'
    assert ids(get(url)['volumes']) == [mine['id']]
    # a project_id of another project, without all_tenants: nothing
    assert get(url, project_id=pid)['volumes'] == []
    assert ids(get(url, all_tenants=1)['volumes']) == ids([mine, theirs])
    assert ids(get(url, all_tenants=1, project_id=pid)['volumes']) == [
        theirs['id']
    ]


def test_cinder_pages_at_its_max_limit_and_links_the_next(cloud, pid):
    cloud.cinder_max_limit = 2
    made = [scenarios.volume(cloud, pid, f'v{n}') for n in range(5)]
    url = CINDER + '/volumes/detail'
    first = get(url, all_tenants=1, project_id=pid)
    assert len(first['volumes']) == 2
    [link] = first['volumes_links']
    assert link['rel'] == 'next' and f'project_id={pid}' in link['href']
    assert 'marker=' in link['href']
    seen, answer = [], first
    while True:
        seen += answer['volumes']
        if not answer.get('volumes_links'):
            break
        answer = requests.get(answer['volumes_links'][0]['href']).json()
    assert ids(seen) == ids(made)


def test_the_volume_kinds_find_every_page(cloud, conn, pid):
    cloud.cinder_max_limit = 2
    vols = [scenarios.volume(cloud, pid, f'v{n}') for n in range(5)]
    snaps = [
        scenarios.snapshot(cloud, pid, v, f's{n}') for n, v in enumerate(vols)
    ]
    scenarios.volume(cloud, ADMIN_PROJECT, 'the-admins')
    found = block_storage.Volume().list(conn, pid)
    assert sorted(r.id for r in found) == ids(vols)
    found = block_storage.Snapshot().list(conn, pid)
    assert sorted(r.id for r in found) == ids(snaps)


# -- Glance: visibility and pages (glance.db.sqlalchemy.api) -----------------


def test_glance_default_listing_leaves_out_others_community_images(cloud, pid):
    community = scenarios.image(cloud, pid, 'c', visibility='community')
    private = scenarios.image(cloud, pid, 'p')
    own = scenarios.image(cloud, ADMIN_PROJECT, 'o', visibility='community')
    # an admin sees every image but another project's community ones
    assert ids(get(GLANCE)['images']) == ids([private, own])
    assert ids(get(GLANCE, visibility='all')['images']) == ids(
        [community, private, own]
    )
    assert ids(get(GLANCE, visibility='community')['images']) == ids(
        [community, own]
    )
    assert ids(get(GLANCE, owner=pid)['images']) == [private['id']]


def test_glance_shows_a_regular_user_what_it_may_see():
    with ScopedCloud() as cloud:
        a = scenarios.project(cloud, 'A')['id']
        b = scenarios.project(cloud, 'B')['id']
        user = cloud.add_user('member')
        cloud.assign(user, 'member', project={'id': a})
        mine = scenarios.image(cloud, a, 'mine')
        public = scenarios.image(cloud, b, 'pub', visibility='public')
        community = scenarios.image(cloud, b, 'c', visibility='community')
        shared = scenarios.image(
            cloud, b, 's', visibility='shared', members=[a]
        )
        scenarios.image(cloud, b, 'not-shared', visibility='shared')
        scenarios.image(cloud, b, 'private')
        conn = cloud.connection_as(user, project_id=a)
        listed = request(conn.image, 'GET', '/images').json()['images']
        assert ids(listed) == ids([mine, public, shared])
        listed = request(
            conn.image, 'GET', '/images', params={'visibility': 'all'}
        ).json()['images']
        assert ids(listed) == ids([mine, public, community, shared])


def test_glance_pages_at_25_and_links_next_with_the_same_query(cloud, pid):
    made = [scenarios.image(cloud, pid, f'i{n}') for n in range(30)]
    first = get(GLANCE, owner=pid)
    assert len(first['images']) == 25
    assert first['next'].startswith('/v2/images?')
    assert f'owner={pid}' in first['next'] and 'marker=' in first['next']
    rest = requests.get(ENDPOINTS['image'] + first['next']).json()
    assert 'next' not in rest
    assert ids(first['images'] + rest['images']) == ids(made)
    assert len(get(GLANCE, owner=pid, limit=1000)['images']) == 30


def test_the_image_kind_finds_every_page_and_visibility(cloud, conn, pid):
    made = [scenarios.image(cloud, pid, f'i{n}') for n in range(27)]
    made.append(scenarios.image(cloud, pid, 'c', visibility='community'))
    made.append(scenarios.image(cloud, pid, 'h', os_hidden=True))
    found = image.Image().list(conn, pid)
    assert sorted(r.id for r in found) == ids(made)


# -- Neutron: limit/marker pages ---------------------------------------------


def test_neutron_pages_when_asked_or_at_its_max_limit(cloud, pid):
    net, subnet = scenarios.network(cloud, pid)
    ports = [
        scenarios.port(cloud, pid, net, subnet, f'p{n}') for n in range(5)
    ]
    # whole unless asked (pagination_max_limit -1 by default)
    answer = get(NEUTRON + '/ports', project_id=pid)
    assert set(ids(ports)) <= set(ids(answer['ports']))  # and the DHCP's
    answer = get(NEUTRON + '/ports', project_id=pid, limit=2)
    assert len(answer['ports']) == 2
    [link] = answer['ports_links']
    assert f'project_id={pid}' in link['href'] and 'marker=' in link['href']
    cloud.neutron_max_limit = 3
    assert len(get(NEUTRON + '/ports', project_id=pid)['ports']) == 3


def test_the_port_kind_finds_every_page(cloud, conn, pid):
    cloud.neutron_max_limit = 2
    net, subnet = scenarios.network(cloud, pid)
    ports = [
        scenarios.port(cloud, pid, net, subnet, f'p{n}') for n in range(5)
    ]
    found = core.Port().list(conn, pid)
    assert {p['id'] for p in ports} <= {r.id for r in found}


def test_neutron_links_repeat_a_filter_given_several_times(cloud, pid):
    one, _ = scenarios.network(cloud, pid, 'one', '10.0.1.0/24')
    two, _ = scenarios.network(cloud, pid, 'two', '10.0.2.0/24')
    url = f'{NEUTRON}/ports?network_id={one["id"]}&network_id={two["id"]}'
    answer = requests.get(url + '&limit=1', timeout=5).json()
    [link] = answer['ports_links']
    assert f'network_id={one["id"]}' in link['href']
    assert f'network_id={two["id"]}' in link['href']


def test_a_network_whose_other_user_is_on_a_later_page_is_kept(cloud, conn):
    """Another project's port on the project's network, on the second
    page of a list asked for several networks at once: the network is
    kept (its users were read from the first page alone, for the last
    network, before kinds.paging kept a repeated filter)."""
    cloud.neutron_max_limit = 1
    t = scenarios.project(cloud, 'T')['id']
    o = scenarios.project(cloud, 'O')['id']
    first, subnet = scenarios.network(cloud, t, 'first', '10.0.1.0/24')
    scenarios.network(cloud, t, 'second', '10.0.2.0/24')
    first['shared'] = True
    scenarios.port(cloud, o, first, subnet, 'theirs')
    [ref] = [r for r in core.Network().list(conn, t) if r.id == first['id']]
    assert ref.attrs['used_by'][0][1] == o
