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

"""Features and actors of issue #29's defects beyond the network ones
(``model``): offers to another project accepted while the tool works
(1), a stack that made another project's network (4), a deleted project's
Swift account (9), a cached token acting after the project's delete (8),
a project re-enabled while the sweep runs (7), a restore refused once
(5, 6) and a cascade without admin that fails after its drain (5), and
what ``cluster force-delete --delete-leftovers`` must
keep (11-13). Registered through ``model``'s decorators; ``model`` imports
this module at its end."""

from __future__ import annotations

from tests.sim.model import _hook, actor, feature
from tests.unit import scenarios
from tests.unit.fakes.orchestration import PHYSICAL
from tests.unit.fakes.quota import (
    CINDER_DEFAULT_QUOTAS,
    NEUTRON_DEFAULT_QUOTAS,
)


def rearming(name, method, pattern, action, when='after'):
    """A hook that fires at every matching request until ``action``
    returns True (a hook fires once: this one arms itself again)."""

    def act(cloud):
        if not action(cloud):
            hook.fired = False

    hook = _hook(name, method, pattern, act, when)
    return hook


# -- 1. offers to O --------------------------------------------------------


@feature('t-volume-offered-to-o')
def _volume_offer(w):
    """T's ``volume transfer request create``: the volume is
    ``awaiting-transfer`` until someone accepts or the offer goes."""
    vol = scenarios.volume(w.cloud, w.t, 't-offered-vol')
    w.made['t-offered-vol'] = vol
    w.made['t-volume-offer'] = w.cloud.offer_volume(vol)


@feature('t-zone-offered-to-o')
def _zone_offer(w):
    zone = w.cloud.zone(w.t, 't-offered.example.')
    w.made['t-offered-zone'] = zone
    w.made['t-zone-offer'] = w.cloud.offer_zone(zone, w.o)


@feature('t-share-offered-to-o')
def _share_offer(w):
    share = w.cloud.share(w.t, 't-offered-share')
    w.made['t-offered-share'] = share
    w.made['t-share-offer'] = w.cloud.offer_share(share)


def _accept_offers(w, cloud):
    """O accepts every offer of T still pending: what was T's is O's."""
    made = w.made
    if 't-volume-offer' in made and cloud.accept_volume_transfer(
        made['t-volume-offer']['id'], w.o
    ):
        w.expect('volumes', made['t-offered-vol'])
    if 't-zone-offer' in made and cloud.accept_zone_transfer(
        made['t-zone-offer']['id'], w.o
    ):
        w.expect('zones', made['t-offered-zone'])
    if 't-share-offer' in made and cloud.accept_share_transfer(
        made['t-share-offer']['id'], w.o
    ):
        w.expect('shares', made['t-offered-share'])


@actor('o-accepts-t-offers-after-listing')
def _accept_after_plan(w):
    """O accepts T's offers right after the tool listed them (between
    the plan and its run: the plan still says they are T's)."""
    return [
        _hook(
            'o-accepts-t-offers-after-listing',
            'GET',
            r'/volume-transfers|/os-volume-transfer|/transfer_requests'
            r'|/share-transfers',
            lambda cloud: _accept_offers(w, cloud),
        )
    ]


@actor('o-accepts-t-offers-at-once')
def _accept_at_once(w):
    """O accepts T's offers as the tool starts, before it lists them:
    a zone's request is then Designate's record of a transfer done
    (COMPLETE), which the tool leaves alone. (Found by a soak of the
    threaded tool, where the orphan purge's listings raced the accept.)"""
    return [
        _hook(
            'o-accepts-t-offers-at-once',
            '*',
            '',
            lambda cloud: _accept_offers(w, cloud),
            when='before',
        )
    ]


@actor('o-accepts-t-offers-on-delete')
def _accept_on_delete(w):
    """O accepts an offer of T when the tool first reads or deletes the
    offered resource (during its retries: Cinder refuses the delete of a
    volume awaiting transfer with a 400 the tool retries)."""
    ids = [
        w.made[k]['id']
        for k in ('t-offered-vol', 't-offered-zone', 't-offered-share')
        if k in w.made
    ]
    if not ids:
        return []
    pattern = '/(' + '|'.join(ids) + r')(\?|/|$)'
    return [
        _hook(
            'o-accepts-t-offers-on-delete',
            method,
            pattern,
            lambda cloud: _accept_offers(w, cloud),
            when='before',
        )
        for method in ('GET', 'DELETE')
    ]


@actor('o-takes-t-port-as-nic-after-plan')
def _attach_port_after_plan(w):
    """An admin attaches T's spare port to O's server once the tool has
    listed everything: right before its first delete of anything."""

    def attach(cloud):
        w.made['t-spare'].update(
            device_id=w.made['o-vm']['id'], device_owner='compute:nova'
        )

    return [
        _hook(
            'o-takes-t-port-as-nic-after-plan', 'DELETE', '', attach, 'before'
        )
    ]


# -- 4. a stack of T that made O's network -----------------------------------


@feature('t-stack-made-o-network')
def _stack_made_others(w):
    """An admin's stack in T that made a network with O's ``tenant_id``:
    Heat's delete of the stack deletes O's network."""
    net, _ = scenarios.network(w.cloud, w.o, 'o-net-by-t-stack', '10.5.0.0/24')
    stack = w.cloud.stack('t-made-o-net', w.t)
    w.cloud.resource(stack, 'net', 'OS::Neutron::Net', net['id'])


# -- 9. Swift -------------------------------------------------------------


@feature('t-container-with-objects')
def _container(w):
    """A container of T's account (``AUTH_<T>``) with objects."""
    w.made['t-container'] = w.cloud.container(w.t, 't-bucket', objects=3)


# -- 8. a cached token after the project's delete ---------------------------

#: what a cached token of T makes where T's quota lets it: collection,
#: (fake's quota service, key, default), the owner key, a maker
WINDOW_MAKES = (
    (
        'networks',
        ('neutron', 'network', NEUTRON_DEFAULT_QUOTAS['network']),
        'project_id',
        lambda cloud, pid: scenarios.network(
            cloud, pid, 't-window-net', '10.9.0.0/24'
        )[0],
    ),
    (
        'volumes',
        ('cinder', 'volumes', CINDER_DEFAULT_QUOTAS['volumes']),
        'os-vol-tenant-attr:tenant_id',
        lambda cloud, pid: scenarios.volume(cloud, pid, 't-window-vol'),
    ),
)


def _room(cloud, service, key, default, collection, owner_key, pid):
    """Whether T's quota lets one more in, as the service checks it: the
    project's own value, else the default; -1 is no limit."""
    limit = cloud.quota_of(service, pid).get(key, default)
    used = sum(1 for o in cloud.all(collection) if o.get(owner_key) == pid)
    return limit == -1 or used < limit


def _deleted_by_tool(cloud, pid):
    """Whether the tool deleted the project (after its drain's freeze;
    not Keystone alone, as before an orphan purge)."""
    return not cloud.exists('projects', pid) and any(
        r.collection == 'projects' and r.id == pid and r.by == 'tool'
        for r in cloud.removals()
    )


@actor('cached-token-after-delete')
def _cached_token(w):
    """A user of T whose token was issued before the drain (Keystone's
    revocation does not reach every service's cache at once) creates a
    network and a volume in T at every request after T's delete, until
    the window closes (``w.window_open``: the operator's later purge runs
    after it) and wherever T's quota lets it: what a service does with a
    project's quota row, never asking Keystone whether it exists."""

    def attempt(cloud):
        if not w.window_open:
            return True
        if _deleted_by_tool(cloud, w.t):
            for coll, (svc, key, dflt), owner_key, make in WINDOW_MAKES:
                if coll not in w.window and _room(
                    cloud, svc, key, dflt, coll, owner_key, w.t
                ):
                    had = set(cloud.owned_by(w.t))
                    w.window[coll] = make(cloud, w.t)['id']
                    w.window_made.update(set(cloud.owned_by(w.t)) - had)
        return False

    return [rearming('cached-token-after-delete', '*', '', attempt)]


# -- 7. re-enabled while the sweep runs --------------------------------------


@actor(
    're-enables-c-during-sweep',
)
def _re_enable(w):
    """Someone re-enables T's child C (a restore by hand, or a user's plea
    to the operator) right after the sweep listed the drained projects. C,
    not T: a sweep without --recursive refuses T for its child before it
    reads T again, so a re-enabled T proved nothing."""

    def enable(cloud):
        if w.running != 'sweep':
            return False
        cloud.get('projects', w.child)['enabled'] = True
        w.re_enabled.add(w.child)
        return True

    return [
        rearming('re-enables-c-during-sweep', 'GET', r'/v3/projects', enable)
    ]


# -- 5./6. a restore refused once -------------------------------------------


@actor('restore-refused-once')
def _restore_refused(w):
    """The restore's first write of a quota set (Nova's, Manila's: put
    back by PUT) and of a grant are refused once (403: a 5xx the tool
    retries past): the re-run of the restore must still give back
    exactly what the drain took."""

    def arm(cloud):
        if w.running != 'restore':
            return False
        cloud.faults.extend(
            [
                ('PUT', r'/os-quota-sets/', 403),
                (
                    'PUT',
                    r'/v3/projects/[^/]+/(users|groups)/[^/]+/roles/',
                    403,
                ),
            ]
        )
        return True

    return [rearming('restore-refused-once', '*', '', arm, 'before')]


# -- 5. a restore after a cascade without admin ----------------------------


def fails_after_scoped_drain(w):
    """What the command ``cascade-without-admin-restore`` starts from:
    T's members (a user's role, a group's, one inherited by T's subtree),
    which the drain without admin takes away and records, and T's server,
    which an admin locked: Nova refuses its delete to T's token (409), so
    the cascade fails after its drain and the restore must give back
    every role (the record is the only copy)."""
    project = w.cloud.get('projects', w.t)
    member = w.cloud.add_user('t-member', 'default')
    w.cloud.assign(member, 'member', project=project)
    heir = w.cloud.add_user('t-heir', 'default')
    w.cloud.assign(heir, 'member', project=project, inherited=True)
    w.cloud.assign(
        {'id': 'g-t-team', 'group': True}, 'reader', project=project
    )
    w.made['t-vm']['locked'] = True


# -- 11.-13. what a force delete keeps --------------------------------------


def bare_network(cloud, pid, name):
    """A network without subnet or DHCP port: the fake Heat's delete of a
    stack removes its network alone, where Neutron would take the DHCP
    port along."""
    return cloud.add(
        'networks',
        name=name,
        project_id=pid,
        tenant_id=pid,
        shared=False,
        **{'router:external': False},
    )


def t_stack(w):
    """T's stack ``t-app``, with a network of T's own: the one the
    ``force-delete`` command works on (it hangs there, as a stuck one)."""
    if 't-app' not in w.made:
        net = bare_network(w.cloud, w.t, 't-app-net')
        stack = w.cloud.stack('t-app', w.t)
        w.made['t-app'] = stack
        _leftover(w, 'net', 'OS::Neutron::Net', net)
    return w.made['t-app']


def _leftover(w, name, type_, obj, cloud=None, **definition):
    """A resource of T's stack, which its force delete leaves behind."""
    w.cloud.resource(t_stack(w), name, type_, obj['id'], **definition)
    region = (cloud or w.cloud).region
    w.leftovers.append((region, PHYSICAL[type_], obj['id']))


@feature('t-stack-retains-volume')
def _retained(w):
    vol = scenarios.volume(w.cloud, w.t, 't-app-data')
    _leftover(w, 'data', 'OS::Cinder::Volume', vol, deletion_policy='Retain')
    w.keep[('volumes', vol['id'])] = 'the stack retains it'


@feature('t-stack-adopted-network')
def _adopted(w):
    net = bare_network(w.cloud, w.t, 't-adopted')
    _leftover(w, 'adopted', 'OS::Neutron::Net', net, external_id=net['id'])
    w.keep[('networks', net['id'])] = 'the stack only adopted it'


@feature('t-stack-holds-o-network')
def _others_leftover(w):
    """A resource of T's stack that is O's (made for O by an admin, or
    given to O since): a leftover the force delete must not delete."""
    net = bare_network(w.cloud, w.o, 'o-in-t-app')
    _leftover(w, 'o-net', 'OS::Neutron::Net', net)


@feature('t-stack-holds-region-two-network')
def _other_regions_leftover(w):
    """A resource of T's stack in RegionTwo (a stack whose template names
    a region): the force delete's lookup in RegionOne alone finds no such
    network, which is no proof that it is gone."""
    net = w.made['t-r2-net']
    _leftover(w, 'r2-net', 'OS::Neutron::Net', net, w.region_two)
