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

"""Discovery: every kind of every available service, in parallel, with
retries of what may pass and a clear refusal of what may not."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.engine.discovery import Discovery
from osc_cascade.engine.errors import CascadeError, describe
from osc_cascade.engine.regions import Regions
from osc_cascade.engine.retry import RetryPolicy
from osc_cascade.kinds.network import core
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeCloud
from tests.unit.fakes.common import REGION
from tests.unit.fakes.kinds import sdk_error


@pytest.fixture
def clock():
    return FakeClock()


def discovery(conn, clock, **kw):
    return Discovery(conn, kinds_mod.build(), clock=clock, **kw)


def test_finds_everything_a_project_owns_and_nothing_else(
    cloud, external, clock
):
    a = scenarios.full_project(cloud, 'A', external)
    b = scenarios.full_project(cloud, 'B', external)
    refs, notes = discovery(cloud.connection(), clock).run(
        [a['project']['id']]
    )
    # notes only for the services the fake cloud does not have
    for service in FakeCloud.endpoints:
        assert not [n for n in notes if n.startswith(f'service {service} ')]
    assert {r.project_id for r in refs} == {a['project']['id']}
    found = {r.id for r in refs}
    assert {
        a['server']['id'],
        a['volume']['id'],
        a['router']['id'],
        a['incremental']['id'],
        a['web_sg']['id'],
    } <= found
    assert not found & {id_ for _, id_ in cloud.owned_by(b['project']['id'])}
    # DHCP ports and router interfaces are found (the kinds decide)
    assert any(r.attrs.get('device_owner') == 'network:dhcp' for r in refs)
    assert cloud.changes == []
    assert clock.sleeps == []


def test_lists_every_kind_for_every_project(cloud, clock):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    discovery(cloud.connection(), clock).run([a, b])
    for pid in (a, b):
        for path in (
            '/v2.1/servers/detail',
            '/v3/volumes/detail',
            '/v2.0/ports',
            '/v2/images',
            '/v3/role_assignments',
        ):
            assert any(
                p.startswith(path) and pid in p for _, p in cloud.requests
            ), (path, pid)


def test_a_kind_listed_for_every_project_is_listed_once_for_many(
    cloud, external, clock
):
    # Nova's server groups and Neutron's security groups take no project
    # filter: one list serves every project of the plan, and what it
    # finds is exactly what a list per project finds
    a, b, c = (
        scenarios.full_project(cloud, name, external)['project']['id']
        for name in 'ABC'
    )
    for pid in (a, b, c):
        scenarios.security_group(cloud, pid, f'sg-{pid}')
    alone = {
        (r.kind, r.id, r.project_id)
        for pid in (a, b)
        for r in discovery(cloud.connection(), clock).run([pid])[0]
    }
    cloud.requests.clear()

    refs, _ = discovery(cloud.connection(), clock).run([a, b])

    assert {(r.kind, r.id, r.project_id) for r in refs} == alone
    assert {r.project_id for r in refs} == {a, b}
    listed = [p for m, p in cloud.requests if m == 'GET']
    for path in ('/v2.1/os-server-groups', '/v2.0/security-groups'):
        assert len([p for p in listed if p.startswith(path)]) == 1, path
    # a kind with a project filter is still listed per project
    for pid in (a, b):
        assert any(
            p.startswith('/v2.1/servers/detail') and pid in p for p in listed
        )


def test_the_project_kind_is_never_listed(cloud, clock):
    conn = cloud.connection()
    usable, notes = discovery(conn, clock).available_kinds()
    names = {k.name for k in usable}
    assert kinds_mod.PROJECT_KIND not in names
    assert names == {
        k.name
        for k in kinds_mod.build().values()
        if conn.has_service(k.service_type)
    } - {kinds_mod.PROJECT_KIND}
    assert {
        'compute.server',
        'network.port',
        'block_storage.volume',
        'image.image',
        'identity.application_credential',
    } <= names
    assert not [n for n in notes if 'identity' in n or 'compute' in n]


def test_a_service_missing_from_the_catalog_is_skipped_with_a_note(clock):
    with FakeCloud(services=('identity', 'compute', 'network')) as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        refs, notes = discovery(cloud.connection(), clock).run([pid])
    by_service = {n.split()[1]: n for n in notes}
    assert by_service['block-storage'].startswith(
        'service block-storage is not in the catalog: skipped '
        'block_storage.backup, block_storage.snapshot, '
        'block_storage.type_access, block_storage.volume'
    )
    assert by_service['image'].startswith(
        'service image is not in the catalog: skipped image.image'
    )
    assert 'compute' not in by_service and 'network' not in by_service
    assert notes == sorted(notes)
    assert not [p for _, p in cloud.requests if 'volumes' in p]
    assert refs == []


def test_transient_list_errors_are_retried_with_backoff(cloud, clock):
    pid = scenarios.project(cloud, 'A')['id']
    net, _ = scenarios.network(cloud, pid)
    cloud.faults += [
        ('GET', r'/v2\.0/networks', 503),
        ('GET', r'/v2\.0/networks', 502),
    ]
    refs, _ = discovery(cloud.connection(), clock).run([pid])
    assert net['id'] in {r.id for r in refs}
    assert clock.sleeps == [1, 2]
    assert cloud.faults == []


def test_a_service_that_keeps_failing_is_an_error(cloud, clock):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.faults += [('GET', r'/v2\.0/ports', 503)] * 10
    with pytest.raises(CascadeError) as err:
        discovery(
            cloud.connection(), clock, retry=RetryPolicy(max_attempts=3)
        ).run([pid])
    assert str(err.value).startswith(
        f'listing network.port of project {pid} in {REGION} failed, so '
        'nothing was deleted'
    )
    assert (
        len([p for _, p in cloud.requests if p.startswith('/v2.0/ports')]) == 3
    )
    assert clock.sleeps == [1, 2]


def test_a_403_is_not_retried_and_says_admin_is_needed(cloud, clock):
    pid = scenarios.project(cloud, 'A')['id']
    cloud.forbidden.add(r'/v2/images')
    with pytest.raises(CascadeError) as err:
        discovery(cloud.connection(), clock).run([pid])
    message = str(err.value)
    assert (
        f'listing image.image of project {pid} in {REGION} was refused '
        '(HTTP 403)'
    ) in message
    assert 'admin role in the image service' in message
    assert clock.sleeps == []


def test_describe_list_error_variants():
    def describe_list_error(exc):
        return describe(
            'listing network.port of project p1',
            exc,
            outcome='Nothing was deleted',
        )

    assert 'was not authorised (HTTP 401): expired' in describe_list_error(
        sdk_error(sdk_exc.HttpException, 401, 'expired')
    )
    assert describe_list_error(ValueError('a\n  bug')) == (
        'listing network.port of project p1 failed, so nothing was '
        'deleted: a bug'
    )


def test_a_bug_in_a_kind_is_an_error_not_a_partial_picture(cloud, clock):
    pid = scenarios.project(cloud, 'A')['id']

    class Broken(core.Port):
        def list(self, conn, project_id):
            raise KeyError('fixed_ips')

    kinds = kinds_mod.build()
    kinds[core.Port.name] = Broken()
    with pytest.raises(CascadeError, match=r'listing network.port'):
        Discovery(cloud.connection(), kinds, clock=clock).run([pid])
    assert clock.sleeps == []


def test_each_services_proxy_is_made_once_before_its_lists(clock):
    # the SDK makes a service's proxy (a version discovery GET) in every
    # thread that asks before it is cached: discovery makes each one first
    import threading
    import types

    from osc_cascade.kinds.base import ResourceKind

    events = []
    lock = threading.Lock()

    class Catalog:
        """Both the session and the config, for the catalog check: every
        service in one region."""

        def get_endpoints_data(self, service_type=None, interface=None):
            endpoint = types.SimpleNamespace(
                url=f'http://{service_type}.test', region_name=REGION
            )
            return {service_type: [endpoint]}

        def get_interface(self, service_type):
            return 'public'

        @property
        def auth(self):  # the catalog of services: none uncovered
            access = type('Access', (), {'service_catalog': self})
            return type('Auth', (), {'get_access': lambda _s, _x: access})()

        catalog = ()

    class Conn:
        session = config = Catalog()

        def __getattr__(self, name):
            with lock:
                events.append(f'proxy {name}')
            return object()

    class Kind(ResourceKind):
        def __init__(self, name, service_type):
            super().__init__()
            self.name, self.service_type = name, service_type

        def list(self, conn, project_id):
            with lock:
                events.append(f'list {self.name}')
            return []

    kinds = {
        k.name: k
        for k in (
            Kind('a.x', 'block-storage'),
            Kind('a.y', 'block-storage'),
            Kind('b.x', 'compute'),
            Kind('c.x', 'load-balancer'),
        )
    }

    class OneRegion(Regions):
        """The catalog's one region, whose connection is the fake's."""

        def connection(self, region):
            assert region == REGION
            return self.conn

    conn = Conn()
    regions = OneRegion(conn, [REGION])
    Discovery(conn, kinds, regions=regions, clock=clock, parallel=3).run(['p'])
    proxies = [e for e in events if e.startswith('proxy ')]
    assert sorted(proxies) == [
        'proxy block_storage',
        'proxy compute',
        'proxy load_balancer',
    ]
    for name, service in (
        ('a.x', 'block_storage'),
        ('a.y', 'block_storage'),
        ('b.x', 'compute'),
        ('c.x', 'load_balancer'),
    ):
        assert events.index(f'proxy {service}') < events.index(f'list {name}')


def test_a_service_missing_from_the_catalog_is_a_note_not_a_warning():
    # the SDK's has_service logs a warning for each service a cloud does
    # not run; the cascade's own note is enough
    import logging

    class Records(logging.Handler):
        def __init__(self):
            super().__init__(logging.WARNING)
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    records = Records()
    logging.getLogger().addHandler(records)
    try:
        with FakeCloud(services=('identity', 'network')) as cloud:
            _usable, notes = Discovery(
                cloud.connection(), kinds_mod.build()
            ).available_kinds()
    finally:
        logging.getLogger().removeHandler(records)
    assert any('service compute is not in the catalog' in n for n in notes)
    assert not [m for m in records.messages if 'catalog entry not found' in m]


class MoreCatalogCloud(FakeCloud):
    """FakeCloud whose catalog also has services no kind covers (one in
    another region only), and an alias of a covered one."""

    def token(self):
        tok = super().token()
        for service, region in (
            ('messaging', 'RegionOne'),
            ('nfv-orchestration', 'RegionOne'),
            ('clustering', 'RegionTwo'),
            ('volumev3', 'RegionOne'),
        ):
            tok.add_service(service).add_endpoint(
                interface='public',
                url=f'http://{service}.test',
                region=region,
            )
        return tok


def test_one_note_names_the_catalogs_services_no_kind_covers(clock):
    with MoreCatalogCloud() as cloud:
        pid = scenarios.project(cloud, 'A')['id']
        _refs, notes = discovery(cloud.connection(), clock).run([pid])
    [note] = [n for n in notes if n.startswith('no kind')]
    assert note == (
        "no kind for the catalog's messaging, nfv-orchestration: what a "
        'project has there stays behind'
    )
    assert not [n for n in notes if 'volumev3' in n]


def test_no_note_when_every_catalog_service_is_covered(cloud, clock):
    _usable, notes = discovery(cloud.connection(), clock).available_kinds()
    assert not [n for n in notes if n.startswith('no kind')]
