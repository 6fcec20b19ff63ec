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

"""The resource kinds: one small class each, registered beside it.

A kind knows everything about one resource type: how to list it, what it
depends on, how to delete it and wait for it to go. Kinds may import the
API layer and the engine's model (``engine.resource``, ``errors``,
``planner``, ``retry``), never the engine's runtime, the workflows or the
commands.
"""

from __future__ import annotations

from typing import Any

# imported for their @register
from osc_cascade.kinds import (  # noqa: F401
    alarming,
    baremetal,
    block_storage,
    compute,
    container_infra,
    database,
    dns,
    identity,
    image,
    key_manager,
    load_balancer,
    network,
    object_store,
    orchestration,
    placement,
    quota,
    shared_file_system,
    user,
    workflow,
)
from osc_cascade.kinds.base import PROJECT, ResourceKind
from osc_cascade.kinds.facts import Facts
from osc_cascade.kinds.registry import CLASSES

#: the kind of the projects themselves (the cascade adds their steps)
PROJECT_KIND = identity.Project.name
#: the kind of the users themselves (``user delete --cascade`` adds them)
USER_KIND = user.User.name


def build(scope: str = PROJECT, **options: Any) -> dict[str, ResourceKind]:
    """An instance of every kind of ``scope``; options such as
    ``delete_shared`` go to the kinds that take them."""
    facts = Facts()
    return {
        name: cls(facts=facts, **options)
        for name, cls in CLASSES.items()
        if cls.scope == scope
    }


def for_heat_type(heat_type: str) -> str:
    """The kind that deletes what a Heat resource of this type made, or
    ''."""
    for name, cls in CLASSES.items():
        if heat_type in cls.heat_types:
            return name
    return ''
