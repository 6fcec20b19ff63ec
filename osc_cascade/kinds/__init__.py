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

"""The registry of resource kinds the cascade knows."""

from __future__ import annotations

from typing import Any

from osc_cascade.kinds import (
    block_storage,
    compute,
    container_infra,
    dns,
    identity,
    image,
    key_manager,
    load_balancer,
    network,
    object_store,
    orchestration,
    quota,
    shared_file_system,
)
from osc_cascade.kinds.base import ResourceKind

KIND_CLASSES: tuple[type[ResourceKind], ...] = (
    *compute.KINDS,
    *block_storage.KINDS,
    *network.KINDS,
    *image.KINDS,
    *orchestration.KINDS,
    *load_balancer.KINDS,
    *object_store.KINDS,
    *dns.KINDS,
    *key_manager.KINDS,
    *shared_file_system.KINDS,
    *container_infra.KINDS,
    *quota.KINDS,
    *identity.KINDS,
)

#: kinds that discovery lists for a project (the project kind is added by
#: the cascade itself)
PROJECT_KIND = identity.Project.name


def build(**options: Any) -> dict[str, ResourceKind]:
    """Instantiate every kind; options such as ``delete_shared_images``
    go to the kinds that take them."""
    return {cls.name: cls(**options) for cls in KIND_CLASSES}
