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

"""What each consumer of a compute host's resource providers is, by what
nova says of it, and whether it blocks the purge (``classify``: pure, nova's
answers are given).
"""

from __future__ import annotations

from collections.abc import Iterable
import dataclasses
from typing import Any

#: statuses in which nova no longer counts a migration as in progress
#: (``migration_get_in_progress_by_host_and_node`` in nova's DB API)
ENDED = frozenset(
    {
        'confirmed',
        'reverted',
        'error',
        'failed',
        'completed',
        'cancelled',
        'done',
    }
)
#: a resize or cold migration waiting for confirmation (VERIFY_RESIZE)
UNCONFIRMED = 'finished'
#: what a successful evacuation leaves (``completed`` once the source host
#: cleaned up, which a dead host never does)
EVACUATION_DONE = frozenset({'done', 'completed'})

# consumer classes, as the plan shows them
ON_HOST = 'instance on host'
MIGRATING = 'migration in progress'
NOT_CONFIRMED = 'migration not confirmed'
EVACUATED = 'evacuated instance'
ELSEWHERE = 'instance on another host'
DELETED_INSTANCE = 'deleted instance'
MIGRATION_ENDED = 'ended migration'
UNKNOWN = 'unknown consumer'


@dataclasses.dataclass(frozen=True)
class Verdict:
    cls: str
    detail: str
    blocks: bool
    #: the instance's name, when the consumer is one nova has
    name: str = ''


@dataclasses.dataclass
class HostFacts:
    """What nova says of one compute host."""

    host: str
    #: the instances on the host, by ID
    servers: dict[str, Any]
    #: the migrations from or to the host
    migrations: list[Any]

    def migration(self, uuid: str) -> Any:
        return next((m for m in self.migrations if m.uuid == uuid), None)


@dataclasses.dataclass(frozen=True)
class Found:
    """What nova says of a consumer that is neither an instance on the host
    nor one of its migrations: the instance, if it exists elsewhere, or
    whether nova remembers deleting it."""

    server: Any = None
    deleted: bool = False


def classify(
    consumer: str, facts: HostFacts, found: Found | None, force: bool
) -> Verdict:
    """The class of one consumer of the host's providers, and whether it
    blocks the purge."""
    found = found or Found()
    server = facts.servers.get(consumer)
    if (
        server is None
        and found.server is not None
        and found.server.compute_host == facts.host
    ):
        server = found.server
    if server is not None:
        return Verdict(
            ON_HOST,
            f'instance {_label(server)} is on '
            f'{facts.host}: migrate or delete it first',
            True,
            server.name,
        )
    migration = facts.migration(consumer)
    if migration is not None:
        return migration_verdict(migration, force)
    if found.server is not None:
        return _elsewhere(consumer, found.server, facts, force)
    if found.deleted:
        return Verdict(
            DELETED_INSTANCE, f'instance {consumer} was deleted', False
        )
    return _unless_forced(
        UNKNOWN,
        f'nova knows no instance or migration {consumer} (a '
        f'consumer of another service, or a leak)',
        force,
    )


def _elsewhere(
    consumer: str, server: Any, facts: HostFacts, force: bool
) -> Verdict:
    mine = [m for m in facts.migrations if m.server_id == consumer]
    active = [m for m in mine if m.status not in ENDED]
    if active:
        return dataclasses.replace(
            migration_verdict(active[0], force), name=server.name
        )
    host = server.compute_host or 'no host'
    for m in mine:
        if (
            m.migration_type == 'evacuation'
            and m.status in EVACUATION_DONE
            and m.source_compute == facts.host
        ):
            return Verdict(
                EVACUATED,
                f'evacuated to {host} (migration '
                f'{m.uuid}); its allocations there stay',
                False,
                server.name,
            )
    return dataclasses.replace(
        _unless_forced(
            ELSEWHERE,
            f'instance {_label(server)} is on {host}, and no '
            f'evacuation or migration from {facts.host} explains its '
            f'allocations here',
            force,
        ),
        name=server.name,
    )


def migration_verdict(m: Any, force: bool) -> Verdict:
    what = (
        f'{m.migration_type} {m.uuid} of instance {m.server_id} '
        f'({m.source_compute} -> {m.dest_compute})'
    )
    if m.status in ENDED:
        return Verdict(MIGRATION_ENDED, f'{what} is {m.status}', False)
    if m.status == UNCONFIRMED:
        return _unless_forced(
            NOT_CONFIRMED,
            f'{what} is finished but not confirmed: run '
            f'`openstack server resize confirm {m.server_id}` or '
            f'`openstack server resize revert {m.server_id}`',
            force,
        )
    if m.migration_type == 'live-migration':
        hint = (
            f'`openstack --os-compute-api-version 2.59 server migration '
            f'abort {m.server_id} {m.uuid}`'
        )
    else:
        hint = f'`openstack server migration list --server {m.server_id}`'
    return _unless_forced(
        MIGRATING,
        f'{what} is {m.status}: let it end (or abort it) first: {hint}',
        force,
    )


def _unless_forced(cls: str, detail: str, force: bool) -> Verdict:
    if force:
        return Verdict(cls, detail + ' (removed: --force)', False)
    return Verdict(
        cls, detail + '; or pass --force to remove its allocations here', True
    )


def _label(server: Any) -> str:
    return f'{server.name} ({server.id})' if server.name else server.id


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """A consumer on the trees of several services: the verdict that
    blocks, if any."""
    verdicts = list(verdicts)
    return next((v for v in verdicts if v.blocks), verdicts[0])
