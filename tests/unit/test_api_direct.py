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

"""api.direct makes the request openstacksdk's proxy makes (URL, query,
microversion header) and raises what it raises, without its resource
objects; what a GET answered reads as the SDK's resource reads it."""

from openstack import exceptions as sdk_exc
from openstack.block_storage.v3 import volume as sdk_volume
from openstack.compute.v2 import server as sdk_server
from openstack.image.v2 import image as sdk_image
from openstack.network.v2 import port as sdk_port
from openstack.object_store.v1 import obj as sdk_obj
import pytest

from osc_cascade.api import direct
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds import block_storage, compute, image
from osc_cascade.kinds.base import GONE
from osc_cascade.kinds.network import core as network
from tests.unit import scenarios


def sent(cloud, since):
    """(method, URL, microversion header) of each request since
    ``since`` requests were made."""
    return [
        (
            r.method,
            r.url,
            r.headers.get('OpenStack-API-Version')
            or r.headers.get('X-OpenStack-Nova-API-Version'),
        )
        for r in cloud.mocker.request_history[since:]
    ]


def both(cloud, sdk_call, direct_call):
    """What each call sent, and what it raised (class and message)."""
    out = []
    for call in (sdk_call, direct_call):
        start = len(cloud.mocker.request_history)
        try:
            call()
            raised = None
        except Exception as exc:
            raised = (type(exc), str(exc))
        out.append((sent(cloud, start), raised))
    return out


def test_a_volume_delete_is_the_sdks(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    twin = scenarios.volume(cloud, pid)
    proxy = conn.block_storage
    params = {'cascade': False}
    if direct.supports(proxy, '3.23'):
        params['force'] = False
    (sdk_sent, sdk_raised), (own_sent, own_raised) = both(
        cloud,
        lambda: proxy.delete_volume(twin['id'], ignore_missing=False),
        lambda: direct.delete(
            proxy,
            sdk_volume.Volume,
            vol['id'],
            ignore_missing=False,
            params=params,
        ),
    )
    assert sdk_raised is own_raised is None
    # the SDK asks for the version document first; the last is the delete
    assert own_sent[-1] == (
        sdk_sent[-1][0],
        sdk_sent[-1][1].replace(twin['id'], vol['id']),
        sdk_sent[-1][2],
    )
    assert f'/volumes/{vol["id"]}?cascade=False' in own_sent[-1][1]
    # the fake deleted both alike
    assert (
        cloud.get('volumes', vol['id'])['status']
        == cloud.get('volumes', twin['id'])['status']
    )


@pytest.mark.parametrize('ignore_missing', [True, False])
def test_a_missing_resource_is_raised_or_not_as_the_sdk_does(
    cloud, conn, ignore_missing
):
    (_, sdk_raised), (own_sent, own_raised) = both(
        cloud,
        lambda: conn.network.delete_port(
            'nosuch', ignore_missing=ignore_missing
        ),
        lambda: direct.delete(
            conn.network,
            sdk_port.Port,
            'nosuch',
            ignore_missing=ignore_missing,
        ),
    )
    assert own_raised == sdk_raised
    assert (own_raised is None) == ignore_missing
    assert own_sent[0][:2] == (
        'DELETE',
        'http://neutron.test/v2.0/ports/nosuch',
    )


def test_a_refused_delete_raises_the_sdks_exception(cloud, conn, pid):
    server = scenarios.server(cloud, pid, 'vm')
    vol = scenarios.volume(cloud, pid, 'v', attach_to=server)
    (_, sdk_raised), (_, own_raised) = both(
        cloud,
        lambda: conn.block_storage.delete_volume(
            vol['id'], ignore_missing=False
        ),
        lambda: block_storage.Volume().delete(
            conn, ResourceRef(kind='block_storage.volume', id=vol['id'])
        ),
    )
    assert sdk_raised is not None
    assert own_raised == sdk_raised


def test_a_server_delete_sends_the_sdks_microversion(cloud, conn, pid):
    server = scenarios.server(cloud, pid, 'vm')
    twin = scenarios.server(cloud, pid, 'vm2')
    (sdk_sent, _), (own_sent, _) = both(
        cloud,
        lambda: conn.compute.delete_server(twin['id']),
        lambda: direct.delete(conn.compute, sdk_server.Server, server['id']),
    )
    assert own_sent[-1][2] == sdk_sent[-1][2]
    # and the 404 of a server gone is no error, as the SDK's default
    direct.delete(conn.compute, sdk_server.Server, 'nosuch')


def test_found_reads_as_the_sdks_resource(cloud, conn, pid):
    vol = scenarios.volume(cloud, pid)
    theirs = conn.block_storage.get_volume(vol['id'])
    mine = direct.get(conn.block_storage, sdk_volume.Volume, vol['id'])
    for attr in ('id', 'status', 'project_id', 'attachments', 'size', 'name'):
        assert getattr(mine, attr) == getattr(theirs, attr), attr
    # the SDK's name for Cinder's os-vol-tenant-attr:tenant_id
    assert mine.project_id == pid
    img = scenarios.image(cloud, pid, 'img')
    found = direct.get(conn.image, sdk_image.Image, img['id'])
    assert found.owner == conn.image.get_image(img['id']).owner == pid
    with pytest.raises(AttributeError):
        found.no_such_attribute
    assert getattr(found, 'no_such_attribute', 'x') == 'x'


def test_a_missing_get_raises_the_sdks_exception(cloud, conn):
    with pytest.raises(sdk_exc.NotFoundException) as theirs:
        conn.network.get_port('nosuch')
    with pytest.raises(sdk_exc.NotFoundException) as mine:
        direct.get(conn.network, sdk_port.Port, 'nosuch')
    assert str(mine.value) == str(theirs.value)


def test_the_microversion_is_asked_once_per_proxy(conn, monkeypatch):
    asked = []
    real = sdk_server.Server._get_microversion.__func__

    def counted(cls, session):
        asked.append(session)
        return real(cls, session)

    monkeypatch.setattr(
        sdk_server.Server, '_get_microversion', classmethod(counted)
    )
    first = direct.microversion(conn.compute, sdk_server.Server)
    assert direct.microversion(conn.compute, sdk_server.Server) == first
    assert len(asked) == 1


def test_a_path_with_other_parts_than_the_id_is_refused():
    with pytest.raises(ValueError, match='call its proxy'):
        direct.path_of(sdk_obj.Object, 'x')  # /%(container)s
    assert direct.path_of(sdk_port.Port, 'p1') == 'ports/p1'


@pytest.mark.parametrize(
    'kind,make',
    [
        (
            network.Port,
            lambda c, p: scenarios.port(c, p, *scenarios.network(c, p)),
        ),
        (block_storage.Volume, lambda c, p: scenarios.volume(c, p)),
        (image.Image, lambda c, p: scenarios.image(c, p, 'i')),
        (compute.Server, lambda c, p: scenarios.server(c, p, 'vm')),
    ],
)
def test_the_kinds_read_owners_as_before(cloud, conn, pid, kind, make):
    obj = make(cloud, pid)
    ref = ResourceRef(kind=kind.name, id=obj['id'], project_id=pid)
    assert kind().owner(conn, ref) == pid
    gone = ResourceRef(kind=kind.name, id='nosuch', project_id=pid)
    assert kind().read(conn, gone) is GONE
