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

"""The invariants every run must hold, whatever the world did meanwhile.

1. Nothing the tool made leave the cloud (by its DELETE, or by a service's
   own cascade behind one) had, at that moment, an owner that was not a
   target of the run, or a user that was not (``world.users``: a server
   it served, a port on it, a rule naming it, traffic it routed).
2. A deleted project left nothing in any kind and region; exit 0 of a
   cascade means the project is gone and nothing of it is left; exit 0 of
   an orphan purge means nothing of the project is left.
3. What another project owns is as it was (or as its own actors made it).
4. A drain then a restore leave the project (and its child) exactly as
   before: enabled, tags, options, role assignments, every quota the
   services keep, per-user ones included, as their APIs answer them; so
   does a cascade without admin that drained (took the role assignments)
   and failed, then a restore.
5. A run from a plan file deletes (by a DELETE of its own) nothing its dry
   run did not show.
6. Every run that did not finish says why; a purge that ends 0 with
   something left names each (its kept row, with the reason).
7. A project someone re-enabled while the tool worked is not deleted.
8. What a stack retains (deletion_policy Retain) or only adopted
   (external_id) is not deleted by its force delete.
9. The freeze outlives a project the tool deleted: a token issued before
   the drain creates nothing in it afterwards (the quotas stay at 0 until
   the later purge releases them). Without admin nothing is frozen (the
   run's note says so): what such a token made is no break of 2. either.
10. A force delete that ends 0 left nothing of what its stack left
    behind but what it must keep (8.).
11. What other projects use or may use (a public cluster template, one
    another project's cluster is made from) is not deleted: no run here
    passes --delete-shared.

Without admin, 2. spares what the project had and the tool says it may
not delete (its default security group: Neutron's admins' alone), never
what the tool made.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

from tests.sim.world import owner_of
from tests.unit.fakes.load_balancer import OCTAVIA_DEFAULT_QUOTAS
from tests.unit.fakes.quota import (
    CINDER_DEFAULT_QUOTAS,
    NEUTRON_DEFAULT_QUOTAS,
    NOVA_DEFAULT_QUOTAS,
)
from tests.unit.fakes.shared_file_system import MANILA_DEFAULT_QUOTAS

#: fields a service changes by itself, or a read changes (polls)
VOLATILE = frozenset({'status', 'updated_at', 'task_state'})
#: Keystone's collections of a project's own record (invariant 4)
PROJECT_STATE = ('projects', 'role_assignments', 'quota_sets')
#: what a role assignment is, as Keystone's listing answers it
ASSIGNMENT = ('user', 'group', 'role', 'scope')


def _others(world, targets) -> dict[tuple[str, str, str], dict]:
    """Every resource of the cloud whose owner is not a target, by
    (region, collection, id)."""
    out = {}
    for cloud in world.cloud.regions():
        for collection, items in cloud.db.items():
            for id_, obj in items.items():
                owner = owner_of(collection, obj)
                if owner is not None and owner not in targets:
                    out[(cloud.region, collection, id_)] = obj
    return out


#: the quota sets' defaults, by the fake's service name: a project's
#: value equal to its default reads as the default through every quota
#: API (a row of it, or none: Nova's and Manila's restore, by PUT alone,
#: puts a value that was the default back as the default)
QUOTA_DEFAULTS = {
    'nova': NOVA_DEFAULT_QUOTAS,
    'cinder': CINDER_DEFAULT_QUOTAS,
    'neutron': NEUTRON_DEFAULT_QUOTAS,
    'manila': MANILA_DEFAULT_QUOTAS,
    'octavia': OCTAVIA_DEFAULT_QUOTAS,
}


def _quota_read(row: dict[str, Any]) -> dict[str, Any]:
    """A quota row as its API tells it: the project's values that differ
    from the defaults (a per-user row's: all of them)."""
    if row.get('user'):
        return row['values']
    defaults = QUOTA_DEFAULTS.get(row['service'], {})
    return {k: v for k, v in row['values'].items() if defaults.get(k) != v}


def _project_state(world) -> dict[str, Any]:
    """T's and its child's own state, as the APIs answer it: the project
    (an extra property set to null reads as none: Keystone has no call
    that removes one), the role assignments on it, and every quota value
    of its own (per-user and per-share-type rows too)."""
    cloud = world.cloud
    state: dict[str, Any] = {}
    for pid in (world.t, world.child):
        project = cloud.get('projects', pid) or {}
        state[pid] = {
            'project': {k: v for k, v in project.items() if v is not None},
            # who has which role how, as Keystone lists it: a grant put
            # back is the same assignment (the fake's row ID and time are
            # no part of what the API answers)
            'role_assignments': sorted(
                json.dumps(
                    {k: v for k, v in a.items() if k in ASSIGNMENT},
                    sort_keys=True,
                )
                for a in cloud.all('role_assignments')
                if a.get('scope', {}).get('project', {}).get('id') == pid
            ),
            'quota_sets': sorted(
                json.dumps([q['id'], read], sort_keys=True)
                for q in cloud.all('quota_sets')
                if q.get('project') == pid and (read := _quota_read(q))
            ),
        }
    return copy.deepcopy(state)


@dataclasses.dataclass
class Before:
    """What the invariants compare with, taken before the tool runs."""

    others: dict[tuple[str, str, str], dict]
    project: dict[str, Any]
    #: T's own resources: (region, collection, id)
    own: frozenset[tuple[str, str, str]] = frozenset()

    @classmethod
    def take(cls, world) -> Before:
        targets = {world.t, world.child}
        return cls(
            copy.deepcopy(_others(world, targets)),
            _project_state(world),
            frozenset(
                (c.region, coll, id_)
                for c in world.cloud.regions()
                for coll, id_ in c.owned_by(world.t)
            ),
        )


def _history(cloud, collection: str, id_: str) -> bool:
    """Whether the item is the record of a transfer done."""
    item = cloud.get(collection, id_) or {}
    return (
        collection == 'zone_transfer_requests'
        and item.get('status') == 'COMPLETE'
    )


def _same(a: dict, b: dict) -> bool:
    def strip(d):
        return {k: v for k, v in d.items() if k not in VOLATILE}

    return strip(a) == strip(b)


def check(scenario, world, before: Before, runs) -> list[str]:
    cloud = world.cloud
    targets = world.targets(scenario)
    broken = []
    acted = {r.id for r in cloud.removals() if r.by != 'tool'}
    for removal in cloud.removals():
        if removal.by != 'tool' or removal.owner is None:
            continue
        if removal.owner not in targets:
            broken.append(
                f'1: deleted {removal.collection} {removal.id} of '
                f'{removal.owner} in {removal.region} ({removal.request})'
            )
        elif set(removal.users) - targets:
            broken.append(
                f'1: deleted {removal.collection} {removal.id}, which '
                f'{sorted(set(removal.users) - targets)} used, in '
                f'{removal.region} ({removal.request})'
            )
    left = {
        (c.region, coll, id_)
        for c in cloud.regions()
        for t in targets
        for coll, id_ in c.owned_by(t)
    }
    last = runs[-1]
    said = ''.join(run.stdout + run.stderr for run in runs)
    scoped = scenario.command.startswith('cascade-without-admin')
    if scoped:
        # without admin the tool may leave what it had and says it may
        # not delete (a default group: Neutron's admins' alone), or what
        # the service made of itself when it was read (neutron-fwaas's
        # default firewall group, made by any listing of the project's);
        # never what the tool made
        regions = {c.region: c for c in cloud.regions()}
        left = {
            k
            for k in left
            if k[2] not in said
            or not (
                k in before.own
                or k[1:] in getattr(regions[k[0]], 'made_on_read', ())
            )
        }
        # nor does it freeze quotas (an admin's call; its note says so)
        left = {k for k in left if k[1:] not in world.window_made}
        # nor are the services whose fakes know no scoped token there
        left = {k for k in left if k[1] not in cloud.UNSERVED}
    gone = not cloud.exists('projects', world.t)
    cascade = scenario.command.startswith('cascade')
    said_done = last
    # the restores after a cascade without admin: the cascade says
    # whether T is gone and whether its job is done
    restored = scenario.command == 'cascade-without-admin-restore'
    if restored:
        said_done = last = runs[0]
    if scenario.command == 'cascade-then-purge':
        # the cascade says whether T is gone, the purge then whether
        # nothing of the deleted projects is left (a live one's is none
        # of its business)
        said_done = runs[0]
        left = {
            (c.region, coll, id_)
            for c in cloud.regions()
            for t in targets
            if not cloud.exists('projects', t)
            for coll, id_ in c.owned_by(t)
        }
    # an accepted zone transfer request is Designate's record of a
    # transfer done (COMPLETE), no longer anything of the project's to
    # delete: the tool leaves it alone (kinds.dns)
    regions = {c.region: c for c in cloud.regions()}
    left = {k for k in left if not _history(regions[k[0]], k[1], k[2])}
    if cascade and gone and left:
        broken.append(f'2: project deleted with {sorted(left)} left')
    if cascade and said_done.code == 0 and not gone:
        broken.append('2: exit 0 but the project is not deleted')
    unsaid = sorted(key for key in left if key[2] not in said)
    if last.code == 0 and cascade and left:
        broken.append(f'2: exit 0 with {sorted(left)} left')
    if last.code == 0 and scenario.command == 'orphan-purge' and unsaid:
        broken.append(f'6: exit 0 with {unsaid} left, and not a word why')
    now = _others(world, targets)
    for key, was in {**before.others, **world.expected}.items():
        if key[2] in acted:
            continue
        if key not in now:
            if not any(
                b.startswith(f'1: deleted {key[1]} {key[2]}') for b in broken
            ):
                broken.append(f'3: {key} of another project is gone')
        elif not _same(was, now[key]):
            broken.append(f'3: {key} of another project changed')
    # a restore run twice gives back exactly, whatever the first answered
    # (after a cascade without admin: where it left the project)
    again = scenario.command == 'drain-restore-again' or (
        restored and not gone
    )
    if again or (scenario.command == 'drain-restore' and last.code == 0):
        after = _project_state(world)
        if after != before.project:
            broken.append(
                f'4: restore left {after} where the drain found '
                f'{before.project}'
            )
    if scenario.command == 'cascade-plan-file' and runs[0].code == 0:
        planned = {row['ID'] for row in json.loads(runs[0].stdout or '[]')}
        for removal in cloud.removals():
            direct = removal.request.split('?')[0].endswith('/' + removal.id)
            # the fake keys a container by its account (``AUTH_<p>/name``),
            # the plan by its project and name (``<p>/name``)
            shown = removal.id in planned or (
                removal.collection == 'containers'
                and removal.id.removeprefix('AUTH_') in planned
            )
            if removal.by == 'tool' and direct and not shown:
                broken.append(
                    f'5: deleted {removal.collection} {removal.id}, '
                    'which the dry run did not show'
                )
    for pid in sorted(world.re_enabled):
        if not cloud.exists('projects', pid):
            broken.append(f'7: deleted project {pid}, which was re-enabled')
    for removal in cloud.removals():
        why = world.keep.get((removal.collection, removal.id))
        # (a cascade or a purge deletes the stack and all of T with it)
        if why and removal.by == 'tool' and scenario.command == 'force-delete':
            broken.append(
                f'8: deleted {removal.collection} {removal.id}: {why} '
                f'({removal.request})'
            )
        shared = world.shared.get((removal.collection, removal.id))
        if shared and removal.by == 'tool':
            broken.append(
                f'11: deleted {removal.collection} {removal.id}: {shared} '
                f'({removal.request})'
            )
    if scenario.command == 'force-delete' and last.code == 0:
        regions = {c.region: c for c in cloud.regions()}
        for region, collection, id_ in world.leftovers:
            there = regions[region].exists(collection, id_)
            if there and (collection, id_) not in world.keep:
                broken.append(
                    f'10: exit 0 with the leftover {collection} {id_} '
                    f'still in {region}'
                )
    frozen = not scoped
    for collection, id_ in sorted(world.window.items() if frozen else ()):
        broken.append(
            f'9: a token of the deleted project made {collection} {id_} '
            'in it: its quotas were not kept frozen'
        )
    for run in runs:
        if run.code not in (0, 130, 143) and not run.stderr.strip():
            broken.append(f'6: {" ".join(run.argv)} exit {run.code} silently')
    return broken
