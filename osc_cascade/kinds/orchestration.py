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
from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.errors import Kept
from osc_cascade.engine.planner import Edge
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out, retried
from osc_cascade.kinds.registry import CLASSES, register


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
# adds one GET a caller-scoped resource, the owner check below one GET a
# made resource whose owner is read).


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


# -- what another project owns ----------------------------------------------
#
# A stack's delete deletes what it made whoever owns it now: an admin's
# stack may have made a network with ``tenant_id`` set to another project
# (or ``value_specs``, on most Neutron types), and a volume may have been
# transferred since. Heat deletes with the stack's trust, an admin's for an
# admin's stack, so it deletes that project's network. So the owner of
# each made resource is read (one GET each) where a kind or the table
# below can read it; a stack that made another project's resource is kept,
# and so is one whose resource's owner cannot be read (a 403, an empty
# owner, a 404 to a token scoped to the project, which sees no other
# project's resources). A resource Heat no longer finds either is gone.

#: Heat types whose template may name another project and whose owner no
#: kind reads: (SDK proxy, path of one, its key in the answer, a word)
OWNER_AT = {
    'OS::Neutron::QoSPolicy': ('network', '/qos/policies/', 'policy'),
    'OS::Neutron::AddressScope': (
        'network',
        '/address-scopes/',
        'address_scope',
    ),
    'OS::Neutron::SubnetPool': ('network', '/subnetpools/', 'subnetpool'),
    'OS::Neutron::VPNService': ('network', '/vpn/vpnservices/', 'vpnservice'),
    'OS::Neutron::IPsecSiteConnection': (
        'network',
        '/vpn/ipsec-site-connections/',
        'ipsec_site_connection',
    ),
    'OS::Neutron::IKEPolicy': ('network', '/vpn/ikepolicies/', 'ikepolicy'),
    'OS::Neutron::IPsecPolicy': (
        'network',
        '/vpn/ipsecpolicies/',
        'ipsecpolicy',
    ),
    'OS::Octavia::LoadBalancer': (
        'load_balancer',
        '/lbaas/loadbalancers/',
        'loadbalancer',
    ),
    'OS::Octavia::Listener': (
        'load_balancer',
        '/lbaas/listeners/',
        'listener',
    ),
}


def _owner_reader(heat_type: str) -> tuple[str, Any] | None:
    """(a word for the resource, a call of its owner: None if gone), or
    None where neither a kind nor ``OWNER_AT`` reads it."""
    for name, cls in CLASSES.items():
        if heat_type in cls.heat_types and cls.sdk_get:
            kind = cls()
            word = name.split('.', 1)[1].replace('_', ' ')
            return word, lambda conn, id_: kind.owner(
                conn, ResourceRef(kind=name, id=id_)
            )
    if heat_type in OWNER_AT:
        service, path, key = OWNER_AT[heat_type]

        def read(conn: Any, id_: str) -> str | None:
            try:
                # raw: one table of paths (OWNER_AT) for the types that no
                # kind reads, rather than an SDK get for each
                found = request(getattr(conn, service), 'GET', path + id_)
            except sdk_exc.NotFoundException:
                return None
            item = found.json().get(key) or {}
            return item.get('project_id') or item.get('tenant_id') or ''

        return key.replace('_', ' '), read
    return None


def not_its_projects(
    conn: Any, made: list[dict[str, Any]], project_id: str, scoped: bool
) -> tuple[list[str], list[str]]:
    """What the stack made that another project owns ('network N of
    project Y'), and what of it has an owner that cannot be read."""
    others, in_doubt = [], []
    seen = set()
    for res in made:
        id_ = res.get('physical_resource_id')
        reader = _owner_reader(res['resource_type'])
        if not id_ or not reader or (res['resource_type'], id_) in seen:
            continue
        seen.add((res['resource_type'], id_))
        word, read = reader
        try:
            owner = retried(read, conn, id_)
        except sdk_exc.SDKException as exc:
            why = getattr(exc, 'status_code', None) or type(exc).__name__
            in_doubt.append(f'{word} {id_} ({why})')
            continue
        if owner is None:
            if scoped:
                # a token scoped to the project is told 404 of any other
                # project's resource too
                in_doubt.append(f'{word} {id_} (not found)')
            continue
        if not owner:
            in_doubt.append(f'{word} {id_} (no owner shown)')
        elif owner != project_id:
            others.append(f'{word} {id_} of project {owner}')
    return others, in_doubt


@register
class ProjectStack(Stack):
    heat_types = ('OS::Heat::Stack',)
    """The stack kind of a project cascade (see above)."""

    error_statuses = frozenset({STUCK})
    # heat/engine/service.py delete_stack accepts a delete in any state,
    # DELETE_FAILED too: a stack listed so is deleted again (its resources
    # deleted directly after it, softly); --force-stuck then abandons one
    # that failed again (abandon_stack: Heat forgets it, what it made stays
    # and is deleted as the project's), where heat.conf enables it
    force_action = 'abandon_stack'

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
            attrs['others'], attrs['owner_unread'] = not_its_projects(
                conn, made, heat.project_of(s), self.scoped
            )
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
        others = ref.attrs.get('others')
        if others:
            reasons.append(
                f'stack {ref.name} made {listed(others)}: deleting the '
                f'stack would delete {"it" if len(others) == 1 else "them"}'
            )
        if ref.attrs.get('owner_unread'):
            reasons.append(
                f'stack {ref.name} made {listed(ref.attrs["owner_unread"])}'
                ' whose owner could not be read: deleting the stack might '
                "delete another project's"
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

    def force_edges(self, ref):
        # not the base's: a stack is never 'stuck' before its delete (Heat
        # accepts one in any state); the abandon waits for the delete
        # again, whatever its outcome (soft), and only what the cascade
        # deletes (a kept stack has no delete)
        if (
            self.options.get('force_stuck')
            and ref.attrs.get('status') == 'DELETE_FAILED'
            and not ref.attrs.get('nested')
            and (self.primary_step(ref) or resource.keep(ref, '')).is_delete
        ):
            yield Edge(
                delete_of(self.name, ref.id),
                Step(self.force_action, ref, {'status': 'DELETE_FAILED'}),
                required=False,
            )

    def apply(self, conn, step):
        if step.action == self.force_action:
            return self.force_stuck(conn, step)  # it reads the stack again
        return super().apply(conn, step)

    def force_stuck(self, conn, step):
        """Abandon the stack whose delete failed again (Heat's
        abandon_stack: the stack's records go, what it made stays, and is
        deleted as the project's own). Heat's policy lets the project's
        members abandon, but heat.conf's enable_stack_abandon, off by
        default, only the operator turns on."""
        ref = step.target
        stack = heat.get_stack(conn, ref.name, ref.id)
        if stack is None:
            return  # the delete again did it
        if heat.project_of(stack) != ref.project_id:
            raise Kept(f'not forced: now of project {heat.project_of(stack)}')
        if stack['stack_status'] != 'DELETE_FAILED':
            return  # left to the verification rounds
        try:
            heat.abandon_stack(conn, ref.name, ref.id)
        except sdk_exc.HttpException as exc:
            if heat.error_of(exc).get('type') != 'NotSupported':
                raise
            raise Kept(
                "not forced: Heat's abandon is off (enable_stack_abandon "
                'in heat.conf, which only the operator can turn on); '
                "delete the stack's resources, then the stack again"
            ) from exc

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
