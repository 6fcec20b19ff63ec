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

"""The raw listings of the big kinds (``kinds.paging.pages``): the pages
followed as openstacksdk follows them, the caller's filters on every page,
Nova's max_limit, and an error answer raised as the SDK raises it."""

import json

from openstack import exceptions as sdk_exc
import pytest
import requests

from osc_cascade.kinds import block_storage, compute
from osc_cascade.kinds.network import core
from osc_cascade.kinds.paging import pages
from tests.unit import scenarios
from tests.unit.fakes.clouds import FakeCloud, ServicesCloud


def answer(status=200, body=None, link=''):
    response = requests.Response()
    response.status_code = status
    response._content = json.dumps(body or {}).encode()
    response.headers['Content-Type'] = 'application/json'
    if link:
        response.headers['Link'] = f'<{link}>; rel="next"'
    return response


class Proxy:
    """A service's SDK proxy that answers the pages given, in order, and
    keeps what each request asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    def request(self, path, method, **kwargs):
        self.asked.append((method, path, kwargs))
        return self.answers.pop(0)


def items(*ids):
    return [{'id': i} for i in ids]


@pytest.mark.parametrize(
    'first',
    [
        # Nova, Cinder, Octavia: <key>_links
        answer(
            body={
                'servers': items('a', 'b'),
                'servers_links': [
                    {'rel': 'next', 'href': 'http://x/servers?marker=b'}
                ],
            }
        ),
        # the api-wg's links
        answer(
            body={
                'servers': items('a', 'b'),
                'links': [
                    {'rel': 'self', 'href': 'http://x/servers'},
                    {'rel': 'next', 'href': 'http://x/servers?marker=b'},
                ],
            }
        ),
        # Glance: next in the body, a path
        answer(
            body={'servers': items('a', 'b'), 'next': '/v2/servers?marker=b'}
        ),
        # an RFC 5988 Link header, which the SDK follows too
        answer(
            body={'servers': items('a', 'b')},
            link='http://x/servers?marker=b',
        ),
    ],
    ids=['key_links', 'links', 'next', 'link-header'],
)
def test_each_next_link_is_followed_with_the_callers_filters(first):
    proxy = Proxy(first, answer(body={'servers': items('c')}))
    found = list(
        pages(
            proxy,
            '/servers/detail',
            'servers',
            {'all_tenants': True, 'project_id': 'p'},
            microversion='2.96',
        )
    )
    assert [i['id'] for i in found] == ['a', 'b', 'c']
    # the filters on every page, the marker on the second, the host of
    # the link never asked (the path is the caller's)
    assert [(m, p, k['params']) for m, p, k in proxy.asked] == [
        ('GET', '/servers/detail', {'all_tenants': True, 'project_id': 'p'}),
        (
            'GET',
            '/servers/detail',
            {'all_tenants': True, 'project_id': 'p', 'marker': 'b'},
        ),
    ]
    assert {k['microversion'] for _m, _p, k in proxy.asked} == {'2.96'}


def test_a_filter_of_several_values_keeps_them_all_on_every_page():
    """Neutron's next link repeats a filter given several times
    (``?network_id=a&network_id=b&limit=2&marker=p2``): read as one
    value, the next pages asked for the last network alone, and another
    project's port on the first network was never seen (its network was
    not kept, the router interface serving it was deleted: the
    simulation found it once the fake Neutron paged)."""
    link = 'http://x/v2.0/ports?network_id=n1&network_id=n2&limit=2&marker=p2'
    proxy = Proxy(
        answer(
            body={
                'ports': items('p1', 'p2'),
                'ports_links': [{'rel': 'next', 'href': link}],
            }
        ),
        answer(body={'ports': items('p3')}),
    )
    found = list(pages(proxy, '/ports', 'ports', {'network_id': ['n1', 'n2']}))
    assert [i['id'] for i in found] == ['p1', 'p2', 'p3']
    assert proxy.asked[1][2]['params'] == {
        'network_id': ['n1', 'n2'],
        'limit': '2',
        'marker': 'p2',
    }


def test_a_filter_of_none_is_not_asked():
    # the orphan search lists every project's: project_id None
    proxy = Proxy(answer(body={'ports': items('a')}))
    found = list(pages(proxy, '/ports', 'ports', {'project_id': None, 'x': 0}))
    assert [i['id'] for i in found] == ['a']
    assert [k['params'] for _m, _p, k in proxy.asked] == [{'x': 0}]


def test_a_marker_that_does_not_move_ends_the_list():
    stuck = {
        'ports': items('a'),
        'ports_links': [{'rel': 'next', 'href': 'http://x/ports?marker=a'}],
    }
    proxy = Proxy(answer(body=stuck), answer(body=stuck), answer(body=stuck))
    assert [i['id'] for i in pages(proxy, '/ports', 'ports')] == ['a']
    # the second page brought nothing new: no third is asked
    assert len(proxy.asked) == 2


@pytest.mark.parametrize(
    'status, error',
    [
        (403, sdk_exc.ForbiddenException),
        (404, sdk_exc.NotFoundException),
        (503, sdk_exc.HttpException),
    ],
)
def test_an_error_answer_on_any_page_raises_the_sdks_exception(status, error):
    proxy = Proxy(
        answer(
            body={
                'ports': items('a'),
                'ports_links': [
                    {'rel': 'next', 'href': 'http://x/ports?marker=a'}
                ],
            }
        ),
        answer(status, {'NeutronError': {'message': 'no'}}),
    )
    # a listing cut short is never taken for a whole one
    with pytest.raises(error):
        list(pages(proxy, '/ports', 'ports', {'project_id': 'p'}))


def test_servers_beyond_novas_max_limit_are_all_listed_the_projects_alone():
    with FakeCloud(nova_max_limit=2) as cloud:
        a = scenarios.project(cloud, 'A')['id']
        b = scenarios.project(cloud, 'B')['id']
        mine = {scenarios.server(cloud, a, f'vm-{i}')['id'] for i in range(5)}
        scenarios.server(cloud, b, 'theirs')
        refs = compute.Server().list(cloud.connection(), a)
        details = [
            p for _m, p in cloud.requests if p.startswith('/v2.1/servers/')
        ]
    assert {r.id for r in refs} == mine
    assert {r.project_id for r in refs} == {a}
    # 2 + 2 + 1, each page with the project filter, as admin
    assert len(details) == 3
    assert all(
        'all_tenants=True' in p and f'project_id={a}' in p for p in details
    )


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def test_the_raw_lists_read_what_the_sdk_resources_read(cloud, external):
    """The fields the kinds take from the raw JSON are those the SDK's
    resources map (a floating IP's name is its address, a server's project
    its tenant_id, a volume's Cinder's tenant attribute)."""
    p = scenarios.full_project(cloud, 'A', external)
    pid = p['project']['id']
    conn = cloud.connection()
    sdk = {
        core.FloatingIP: {
            (f.id, f.floating_ip_address, f.project_id)
            for f in conn.network.ips(project_id=pid)
        },
        core.Port: {
            (x.id, x.name, x.project_id)
            for x in conn.network.ports(project_id=pid)
        },
        compute.Server: {
            (s.id, s.name, s.project_id)
            for s in conn.compute.servers(
                details=True, all_projects=True, project_id=pid
            )
        },
        block_storage.Volume: {
            (v.id, v.name, v.project_id)
            for v in conn.block_storage.volumes(
                details=True, all_projects=True, project_id=pid
            )
        },
    }
    for kind_class, expected in sdk.items():
        refs = kind_class().list(conn, pid)
        assert expected
        assert {(r.id, r.name, r.project_id) for r in refs} == expected
