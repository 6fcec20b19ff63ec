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

"""The fake clouds of the tests: the core (cloud.py) with the fake services
each needs, one mixin a service."""

from __future__ import annotations

from tests.unit.fakes.block_storage import BlockStorage
from tests.unit.fakes.cloud import Cloud
from tests.unit.fakes.common import catalog
from tests.unit.fakes.compute import CallerKeypairs, Compute
from tests.unit.fakes.compute_hosts import ComputeHosts
from tests.unit.fakes.container_infra import ContainerInfra
from tests.unit.fakes.data_processing import DataProcessing
from tests.unit.fakes.identity import Identity
from tests.unit.fakes.image import Image
from tests.unit.fakes.network import Network
from tests.unit.fakes.orchestration import Orchestration
from tests.unit.fakes.placement import Placement


class FakeCloud(Identity, Compute, BlockStorage, Image, Network, Cloud):
    """Keystone, Nova, Cinder, Glance and Neutron. Use as ``with
    FakeCloud() as cloud: conn = cloud.connection()``."""

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
                query = {}
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
