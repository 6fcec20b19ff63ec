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

"""Heat: the stacks of a project.

``Stack`` deletes a stack and waits for it to go; ``ProjectStack`` (below)
is the kind that lists a project's stacks for a cascade, and deletes the
child stack of an ``OS::Heat::Stack`` resource that ``cluster force-delete``
leaves behind (a stack of its own, which survives its parent's abandon).
The calls themselves are in ``api.heat``.
"""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api import heat
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out, retried
from osc_cascade.kinds.registry import register


class Stack(ResourceKind):
    name = 'orchestration.stack'
    service_type = 'orchestration'
    error_statuses = frozenset({'DELETE_FAILED'})

    def delete(self, conn, ref):
        heat.call(conn, 'DELETE', heat.stack_path(ref.name, ref.id))

    def status(self, conn, ref):
        stack = heat.get_stack(conn, ref.name, ref.id)
        return GONE if stack is None else stack['stack_status']


# -- in a project cascade ---------------------------------------------------
#
# A stack deletes what it created: each resource a stack made (matched by its
# physical id) waits for the stack's delete, and is deleted directly only if
# that fails (its own delete then finds it gone). Nested stacks go with their
# root and have no step of their own.
#
# Heat deletes some resources in the scope of whoever deletes the stack, not
# of the stack's owner: on the minicloud an admin's delete of a project's
# stack deleted the OS::Swift::Container of that name in the admin's own
# account and left the project's. The project's own are deleted directly
# after the stack; a stack whose delete would hit a namesake of the caller's
# is kept, which stops the cascade before anything changes.
#
# A stack made by an admin may also hold what no project owns (a flavor, a
# volume type, a Keystone user...): its delete would delete that too, so
# such a stack is kept as well. Both checks read the stack's resources,
# nested stacks' included, in one GET a root stack, in a cascade and in the
# orphan search alike (at N=300 root stacks: 300 GETs; the namesake check
# adds one GET a caller-scoped resource).


#: Heat types whose delete acts, by name, in the scope of the caller
CALLER_SCOPED = {
    'OS::Swift::Container': 'container',
    'OS::Nova::KeyPair': 'keypair',
}

#: Heat types whose physical resource no project owns, or that act on a
#: project named in the template (Heat's policy lets only admins create
#: them: resource_types:* in heat/policies/resource_types.py, less the QoS
#: objects, which belong to the stack's project like any network object)
NOT_THE_PROJECTS = frozenset(
    {
        'OS::Blazar::Host',
        'OS::Cinder::EncryptedVolumeType',
        'OS::Cinder::QoSAssociation',
        'OS::Cinder::QoSSpecs',
        'OS::Cinder::Quota',
        'OS::Cinder::VolumeType',
        'OS::Manila::ShareType',
        'OS::Neutron::ProviderNet',
        'OS::Neutron::Quota',
        'OS::Neutron::Segment',
        'OS::Nova::Flavor',
        'OS::Nova::HostAggregate',
        'OS::Nova::Quota',
        'OS::Octavia::Flavor',
        'OS::Octavia::FlavorProfile',
        'OS::Octavia::Quota',
    }
)


def not_the_projects(made: list[dict[str, Any]]) -> list[str]:
    """What the stack's delete would delete that is not its project's."""
    return [
        f'{res["resource_type"]} {res["physical_resource_id"]}'
        for res in made
        if res.get('physical_resource_id')
        and (
            res['resource_type'] in NOT_THE_PROJECTS
            or res['resource_type'].startswith('OS::Keystone::')
        )
    ]


def listed(items: list[str], most: int = 3) -> str:
    """The first few of ``items``, and how many more."""
    more = len(items) - most
    return ', '.join(items[:most]) + (f' and {more} more' if more > 0 else '')


#: a stack delete that failed, with the way out
STUCK = (
    'DELETE_FAILED: Heat cannot delete the stack; abandon it and '
    'delete what it leaves with `openstack cluster force-delete '
    '--stack --delete-leftovers <stack id>`'
)


def physical_id(ref: ResourceRef) -> str:
    """How Heat names a resource: its id, unless the kind says otherwise
    (a Swift container is named, not numbered)."""
    return ref.attrs.get('physical_id', ref.id)


def namesakes(conn: Any, made: list[dict[str, Any]]) -> list[str]:
    """The caller's own things that Heat would delete with the stack."""
    found = []
    for res in made:
        what = CALLER_SCOPED.get(res['resource_type'])
        name = res.get('physical_resource_id')
        if not what or not name:
            continue
        try:
            if what == 'container':
                if not conn.has_service('object-store'):
                    continue
                retried(conn.object_store.get_container_metadata, name)
            else:
                retried(conn.compute.get_keypair, name)
        except sdk_exc.NotFoundException:
            continue
        found.append(f'{what} {name}')
    return found


@register
class ProjectStack(Stack):
    heat_types = ('OS::Heat::Stack',)
    """The stack kind of a project cascade (see above)."""

    error_statuses = frozenset({STUCK})

    def list(self, conn, project_id):
        found = {
            s['id']: s
            for s in heat.stacks(conn, tenant=project_id, show_nested='True')
        }

        def attrs_of(s) -> dict[str, Any] | None:
            """None for a stack deleted meanwhile."""
            attrs: dict[str, Any] = {'status': s['stack_status']}
            if s.get('parent') in found:
                attrs['nested'] = True
                return attrs
            # what its delete removes: shown in the plan, checked, and
            # ordering a cascade; in the orphan search too, which a purge
            # plans with
            try:
                made = retried(heat.resources, conn, s['stack_name'], s['id'])
            except sdk_exc.NotFoundException:
                return None
            attrs['made'] = sorted(
                (
                    {
                        'type': r['resource_type'],
                        'id': r.get('physical_resource_id') or '',
                        'name': r.get('resource_name') or '',
                    }
                    for r in made
                ),
                key=lambda r: (r['type'], r['name'], r['id']),
            )
            attrs['not_the_projects'] = not_the_projects(made)
            attrs['endangers'] = namesakes(conn, made)
            return attrs

        stacks = list(found.values())
        # one listing of resources per stack, made at once (kinds.calls)
        refs = [
            ResourceRef(
                kind=self.name,
                id=s['id'],
                name=s['stack_name'],
                project_id=heat.project_of(s),
                attrs={k: v for k, v in attrs.items() if v},
            )
            for s, attrs in zip(
                stacks,
                fan_out(attrs_of, stacks, service=self.service_type),
                strict=True,
            )
            if attrs is not None
        ]
        return owned(refs, project_id)

    def primary_step(self, ref):
        if ref.attrs.get('nested'):
            return None
        reasons = []
        if ref.attrs.get('not_the_projects'):
            reasons.append(
                'deleting it would make Heat delete what is not the '
                "project's (global or admin-scoped): "
                + listed(ref.attrs['not_the_projects'])
            )
        if ref.attrs.get('endangers'):
            reasons.append(
                'deleting it would make Heat delete your own '
                + ', '.join(ref.attrs['endangers'])
                + ' (Heat deletes these in the scope of whoever deletes the '
                'stack); rename yours, or cascade as another user'
            )
        if reasons:
            return resource.keep(ref, '; '.join(reasons))
        return super().primary_step(ref)

    def relations(self, ref, inventory):
        made = {r['id'] for r in ref.attrs.get('made', []) if r['id']}
        me = delete_of(self.name, ref.id)
        # by Heat's name of each resource: a scan of the inventory per
        # stack was quadratic (2,000 stacks among 100,000 resources)
        named = inventory.grouped(physical_id)
        for other in (o for id_ in sorted(made) for o in named.get(id_, ())):
            if other.key != ref.key and other.project_id == ref.project_id:
                yield Edge(me, delete_of(other.kind, other.id), required=False)

    def status(self, conn, ref):
        return self._status(super().status(conn, ref))

    def list_statuses(self, conn, project_id):
        # one listing for the project's stacks being deleted (at N=10,000
        # a GET per stack and poll was 1,000 of the cascade's requests)
        return {
            s['id']: self._status(s['stack_status'])
            for s in heat.stacks(conn, tenant=project_id)
        }

    @staticmethod
    def _status(status):
        return STUCK if status == 'DELETE_FAILED' else status
