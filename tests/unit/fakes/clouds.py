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

"""The fake clouds of the tests: the core (cloud.py) with the fake
services each needs, a mixin a service, and the services in its catalog.

A mixin that adds to a service another has (Keypairs to Compute,
NetworkExtensions to Network, ...) comes before it: it answers what it
knows and passes the rest on with ``super()``."""

from __future__ import annotations

from tests.unit.fakes.alarming import Alarming
from tests.unit.fakes.baremetal import Baremetal
from tests.unit.fakes.block_storage import BlockStorage
from tests.unit.fakes.cloud import Cloud
from tests.unit.fakes.common import catalog
from tests.unit.fakes.compute import CallerKeypairs, Compute, Keypairs
from tests.unit.fakes.compute_hosts import ComputeHosts
from tests.unit.fakes.container_infra import ClusterTemplates, ContainerInfra
from tests.unit.fakes.data_processing import DataProcessing
from tests.unit.fakes.database import Database
from tests.unit.fakes.dns import Dns
from tests.unit.fakes.identity import Identity
from tests.unit.fakes.identity_users import UserKeypairs, Users
from tests.unit.fakes.image import Image, ImageMembers
from tests.unit.fakes.key_manager import KeyManager
from tests.unit.fakes.load_balancer import LoadBalancer
from tests.unit.fakes.network import Network
from tests.unit.fakes.network_extensions import NetworkExtensions
from tests.unit.fakes.network_services import NetworkServices
from tests.unit.fakes.object_store import ObjectStore
from tests.unit.fakes.orchestration import Orchestration
from tests.unit.fakes.placement import Placement
from tests.unit.fakes.quota import Quotas
from tests.unit.fakes.shared_file_system import SharedFileSystem
from tests.unit.fakes.type_access import ShareTypeAccess, TypeAccess
from tests.unit.fakes.workflow import Workflow


class FakeCloud(
    TypeAccess, Identity, Compute, BlockStorage, Image, Network, Cloud
):
    """Keystone, Nova, Cinder, Glance and Neutron (with flavors and volume
    types). Use as ``with FakeCloud() as cloud: conn =
    cloud.connection()``."""

    endpoints = catalog(
        'identity', 'compute', 'network', 'block-storage', 'image'
    )


class FakeHeatCloud(
    CallerKeypairs, Orchestration, ContainerInfra, DataProcessing, FakeCloud
):
    """FakeCloud with Heat, and Magnum and Sahara, whose clusters are Heat
    stacks."""

    endpoints = catalog(
        *FakeCloud.endpoints,
        'orchestration',
        'container-infra',
        'data-processing',
    )


ENDPOINTS_WITH_HEAT = FakeHeatCloud.endpoints


class ServicesCloud(
    ShareTypeAccess,
    Database,
    Alarming,
    Workflow,
    Baremetal,
    Keypairs,
    Quotas,
    ImageMembers,
    NetworkServices,
    NetworkExtensions,
    ClusterTemplates,
    LoadBalancer,
    ObjectStore,
    Dns,
    KeyManager,
    SharedFileSystem,
    Orchestration,
    ContainerInfra,
    DataProcessing,
    FakeCloud,
):
    """Every service a project can own things in: FakeHeatCloud's with
    Octavia, Swift, Designate, Barbican (its quotas), Manila, Trove, Aodh,
    Mistral and Ironic, and the
    base services with what the cascade's other kinds list: the users'
    keypairs, quota sets, Neutron's extensions (NetworkServices: the
    newer ones), Glance's memberships, the
    access lists of private share types."""

    endpoints = catalog(
        *ENDPOINTS_WITH_HEAT,
        'load-balancer',
        'object-store',
        'dns',
        'key-manager',
        'shared-file-system',
        'database',
        'alarming',
        'workflow',
        'baremetal',
    )


class UsersCloud(UserKeypairs, Users, ServicesCloud):
    """ServicesCloud with Keystone's users, credentials, trusts, groups
    and domains as the user's and the domain's cascades use them."""

    endpoints = ServicesCloud.endpoints


class FakePlacementCloud(ComputeHosts, Placement, FakeCloud):
    """FakeCloud with Placement and Nova's compute hosts, for the purge of
    compute services."""

    endpoints = catalog(*FakeCloud.endpoints, 'placement')


def ignoring_filters(cloud_cls):
    """A FakeCloud subclass whose list calls ignore every query filter, as
    a service with a broken or missing filter would: only the kinds'
    client-side owner check stands between another project's resources
    and the plan."""

    def ignore(handler):
        def wrapped(self, method, path, query, body):
            if method == 'GET':
                # what is no filter stays: Cinder's all_tenants, paging
                query = {
                    k: v
                    for k, v in query.items()
                    if k in ('all_tenants', 'limit', 'marker')
                }
            return handler(self, method, path, query, body)

        return wrapped

    return type(
        'FilterIgnoring' + cloud_cls.__name__,
        (cloud_cls,),
        {
            name: ignore(getattr(cloud_cls, name))
            for name in ('_compute', '_block_storage', '_network', '_image')
        },
    )
