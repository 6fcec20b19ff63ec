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

"""What the simulation builds and does: the topology (a target project T,
its child C, another project O, an admin's external network, RegionTwo),
the cross-project references between them (features) and what other
actors do while the tool works (actors).

Each feature and each actor is a small function registered by name beside
what it means, so that a scenario is a list of names a person can read and
replay, and a new hole is one more function here.
"""

from __future__ import annotations

from collections.abc import Callable
import copy
import dataclasses
from typing import Any

from tests.unit import scenarios

#: name -> function(world) that adds one cross-project reference
FEATURES: dict[str, Callable[[World], None]] = {}
#: name -> function(world) -> [Hook ...]: what another actor does, when
ACTORS: dict[str, Callable[[World], list]] = {}
#: name of a feature or actor -> (the open defect it finds, the command
#: that shows it): the scenarios drawn leave these out until the defect is
#: fixed (the simulation found them; ``python -m tests.sim replay`` shows
#: each)
OPEN: dict[str, tuple[str, str]] = {}


def feature(name, finds='', seen_by='cascade'):
    def register(fn):
        FEATURES[name] = fn
        if finds:
            OPEN[name] = (finds, seen_by)
        return fn

    return register


def actor(name, finds='', seen_by='cascade'):
    def register(fn):
        ACTORS[name] = fn
        if finds:
            OPEN[name] = (finds, seen_by)
        return fn

    return register


@dataclasses.dataclass
class World:
    """The cloud and the handles of what was built in it."""

    cloud: Any
    region_two: Any
    t: str = ''
    child: str = ''
    o: str = ''
    external: dict = dataclasses.field(default_factory=dict)
    #: name -> resource dict, of what the features refer to
    made: dict[str, dict] = dataclasses.field(default_factory=dict)
    #: another project's resources as its own actors left them:
    #: (region, collection, id) -> a copy (invariant 3 compares with it)
    expected: dict[tuple[str, str, str], dict] = dataclasses.field(
        default_factory=dict
    )
    #: (collection, id) -> why no run may delete it (a stack's Retain)
    keep: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    #: (collection, id) -> why no run (none passes --delete-shared) may
    #: delete it: T's, but others use it or may
    shared: dict[tuple[str, str], str] = dataclasses.field(
        default_factory=dict
    )
    #: the verb of the command running now ('delete', 'sweep', ...)
    running: str = ''
    #: the projects an actor re-enabled (no run may delete them)
    re_enabled: set[str] = dataclasses.field(default_factory=set)
    #: what a cached token of T made after T's delete: collection -> id
    window: dict[str, str] = dataclasses.field(default_factory=dict)
    #: all it made (a network's subnet and port too): (collection, id)
    window_made: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    #: whether that token still works (closed before a later purge)
    window_open: bool = True
    #: what T's stack t-app leaves behind: (region, collection, id)
    leftovers: list[tuple[str, str, str]] = dataclasses.field(
        default_factory=list
    )

    def expect(self, collection: str, obj: dict, cloud=None) -> None:
        """An actor changed ``obj`` of another project: that is now how
        it must stay."""
        region = (cloud or self.cloud).region
        self.expected[(region, collection, obj['id'])] = copy.deepcopy(obj)

    def targets(self, scenario) -> set[str]:
        """The projects the run may empty: the child too where the
        cascade recurses, and where an orphan purge names it."""
        if scenario.command.startswith('cascade-without-admin'):
            return {self.t}  # C is its sibling there
        if scenario.recursive or scenario.command in (
            'orphan-purge',
            'cascade-then-purge',
            'sweep',
            'drain-restore-again',
        ):
            return {self.t, self.child}
        return {self.t}


def own_things(cloud, world, pid, prefix, external, cidr):
    """What every project has: a routed network, a server with a volume
    and a floating IP, a snapshot, a private image, two security groups."""
    net, subnet = scenarios.network(cloud, pid, prefix + '-net', cidr)
    sg = scenarios.security_group(cloud, pid, 'default')
    web = scenarios.security_group(cloud, pid, prefix + '-web', [sg])
    router, _ = scenarios.router(cloud, pid, subnet, external, prefix + '-r')
    vm = scenarios.server(cloud, pid, prefix + '-vm', net, subnet, web)
    vm_port = next(
        p for p in cloud.all('ports') if p.get('device_id') == vm['id']
    )
    scenarios.floating_ip(cloud, pid, external, router, vm_port)
    vol = scenarios.volume(cloud, pid, prefix + '-vol', attach_to=vm)
    scenarios.snapshot(cloud, pid, vol, prefix + '-snap')
    image = scenarios.image(cloud, pid, prefix + '-image')
    spare = scenarios.port(cloud, pid, net, subnet, prefix + '-spare')
    world.made.update(
        {
            prefix + '-net': net,
            prefix + '-subnet': subnet,
            prefix + '-sg': sg,
            prefix + '-web': web,
            prefix + '-router': router,
            prefix + '-vm': vm,
            prefix + '-vol': vol,
            prefix + '-image': image,
            prefix + '-spare': spare,
        }
    )


def build(cloud, region_two) -> World:
    """The topology every scenario starts from."""
    world = World(cloud, region_two)
    world.external, _ = scenarios.external_network(cloud)
    t = scenarios.project(cloud, 'T')
    world.t = t['id']
    world.child = scenarios.project(cloud, 'C', parent_id=t['id'])['id']
    world.o = scenarios.project(cloud, 'O')['id']
    own_things(cloud, world, world.t, 't', world.external, '10.1.0.0/24')
    own_things(cloud, world, world.o, 'o', world.external, '10.2.0.0/24')
    net, _ = scenarios.network(cloud, world.child, 'c-net', '10.3.0.0/24')
    world.made['c-net'] = net
    # RegionTwo: T has a network there too
    r2net, _ = scenarios.network(region_two, world.t, 't-r2', '10.4.0.0/24')
    world.made['t-r2-net'] = r2net
    return world


# -- features: what ties T's resources to O's ----------------------------


@feature('t-volume-attached-to-o-server')
def _volume_on_others_server(w):
    vol = scenarios.volume(w.cloud, w.t, 't-lent-vol')
    scenarios.attach(w.cloud, vol, w.made['o-vm'])


@feature('t-port-is-o-server-nic')
def _port_on_others_server(w):
    w.made['t-spare'].update(
        device_id=w.made['o-vm']['id'], device_owner='compute:nova'
    )


@feature('t-network-shared-o-port-on-it')
def _shared_network_in_use(w):
    net = w.made['t-net']
    net['shared'] = True
    scenarios.port(w.cloud, w.o, net, w.made['t-subnet'], 'o-port-on-t-net')


@feature('o-rule-names-t-group')
def _others_rule(w):
    scenarios.add_rule(w.cloud, w.made['o-web'], w.made['t-web'])


@feature('t-image-shared-with-o')
def _shared_image(w):
    w.made['t-image'].update(visibility='shared', members=[w.o])


@feature('o-server-on-t-shared-network')
def _others_server_on_shared(w):
    net = w.made['t-net']
    net['shared'] = True
    scenarios.server(w.cloud, w.o, 'o-vm-on-t-net', net, w.made['t-subnet'])


@feature('t-per-user-quotas')
def _per_user_quotas(w):
    """T's quotas of its own, and per-user ones (Nova's; Manila's, and a
    share type's) of T's user U, who has a role on T: a reset of Nova's
    or Manila's quota set of T takes U's too."""
    user = 'user-t-dev'
    # the cloud's role member (a Keystone of the scoped fakes has its roles)
    role = next(
        (r for r in w.cloud.all('roles') if r.get('name') == 'member'),
        {'id': 'member', 'name': 'member'},
    )
    w.cloud.add(
        'role_assignments',
        user={'id': user},
        role={'id': role['id'], 'name': 'member'},
        scope={'project': {'id': w.t}},
    )
    w.cloud.set_quota('nova', w.t, instances=40)
    w.cloud.set_user_quota('nova', w.t, user, instances=4, cores=8)
    w.cloud.set_quota('manila', w.t, shares=20)
    w.cloud.set_user_quota('manila', w.t, user, shares=2)
    w.cloud.set_user_quota('manila', w.t, 'share_type:gold', shares=5)


@feature('t-public-template')
def _public_template(w):
    """Every project may make clusters from T's public template."""
    template = w.cloud.cluster_template(w.t, 't-public-k8s', public=True)
    w.shared[('cluster_templates', template['id'])] = (
        'public: other projects may use it'
    )


@feature('o-cluster-on-t-template')
def _others_cluster_on_template(w):
    """O's cluster is made from T's private template (an admin of O may):
    Magnum refuses the template's delete while the cluster is."""
    template = w.cloud.cluster_template(w.t, 't-k8s')
    cluster = w.cloud.magnum_cluster('o-k8s', w.o, None)
    cluster['cluster_template_id'] = template['id']
    w.shared[('cluster_templates', template['id'])] = (
        "O's cluster is made from it"
    )


# -- actors: what others do while the tool works --------------------------


def _hook(name, method, pattern, action, when='after', status=None):
    from tests.sim.world import Hook

    return Hook(name, method, pattern, action, when, status)


@actor('o-takes-t-port-as-nic')
def _attach_port_later(w):
    """An admin attaches T's spare port to O's server after the tool
    listed T's ports (a listing filtered by project: an orphan purge's
    unfiltered listings run in parallel, and which came first decided
    whether the purge saw the NIC; ``o-takes-t-port-as-nic-after-plan``
    is that case, played the same way every time)."""

    def attach(cloud):
        w.made['t-spare'].update(
            device_id=w.made['o-vm']['id'], device_owner='compute:nova'
        )

    return [_hook('o-takes-t-port-as-nic', 'GET', r'/v2\.0/ports\?', attach)]


@actor('o-attaches-t-volume')
def _attach_volume_later(w):
    """O's server gets T's volume as its data disk after discovery (an
    admin's attach across projects)."""

    def attach(cloud):
        vol = scenarios.volume(cloud, w.t, 't-late-vol')
        scenarios.attach(cloud, vol, w.made['o-vm'])
        w.expect('servers', w.made['o-vm'])

    return [_hook('o-attaches-t-volume', 'GET', r'/volumes/detail', attach)]


@actor('o-plugs-into-t-network')
def _plug_later(w):
    """O puts a port on T's network (shared by T) while T is drained."""

    def plug(cloud):
        net = w.made['t-net']
        net['shared'] = True
        scenarios.port(cloud, w.o, net, w.made['t-subnet'], 'o-late-port')

    return [_hook('o-plugs-into-t-network', 'GET', r'/v2\.0/ports\b', plug)]


@actor('o-plugs-into-t-network-after-plan')
def _plug_after_plan(w):
    """O puts a port on T's network (shared by T) once the tool has
    listed everything: right before its first change. (A soak of the
    threaded tool met it: O's port came between two listings of one
    discovery.)"""

    def plug(cloud):
        if 'o-late-port' in w.made:
            return
        net = w.made['t-net']
        net['shared'] = True
        w.made['o-late-port'] = scenarios.port(
            cloud, w.o, net, w.made['t-subnet'], 'o-late-port'
        )

    # the first change the tool asks of Neutron, whichever it is
    return [
        _hook(
            'o-plugs-into-t-network-after-plan',
            method,
            r'^/v2\.0/',
            plug,
            when='before',
        )
        for method in ('DELETE', 'PUT')
    ]


@actor('o-names-t-group-later')
def _rule_later(w):
    def rule(cloud):
        scenarios.add_rule(cloud, w.made['o-web'], w.made['t-web'])
        w.expect('security_groups', w.made['o-web'])

    return [
        _hook(
            'o-names-t-group-later',
            'GET',
            r'/v2\.0/security-groups\b',
            rule,
        )
    ]


# the features and actors of more holes, in modules of their own
from tests.sim import holes  # noqa: E402,F401
