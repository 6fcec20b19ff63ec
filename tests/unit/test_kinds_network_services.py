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

"""Neutron's newer extensions: address groups, FWaaS v2, metering labels,
network logs and BGP VPNs: listed page by page where the extension is
loaded, deleted in the order Neutron accepts, kept where another project
uses them."""

from openstack import exceptions as sdk_exc
import pytest

from osc_cascade import kinds as kinds_mod
from osc_cascade.kinds.network import (
    address_group,
    bgpvpn,
    core,
    fwaas,
    log,
    metering,
)
from tests.unit import scenarios
from tests.unit.fakes.clouds import ServicesCloud
from tests.unit.fakes.common import step_id
from tests.unit.fakes.network_services import MORE
from tests.unit.fakes.run import cascade_for

#: kind -> the fake's collection (URL path)
COLLECTION = {
    address_group.AddressGroup: 'address-groups',
    fwaas.FirewallGroup: 'fwaas/firewall_groups',
    fwaas.FirewallPolicy: 'fwaas/firewall_policies',
    fwaas.FirewallRule: 'fwaas/firewall_rules',
    metering.MeteringLabel: 'metering/metering-labels',
    log.NetworkLog: 'log/logs',
    bgpvpn.BgpVpn: 'bgpvpn/bgpvpns',
}


FIREWALL = (fwaas.FirewallGroup, fwaas.FirewallPolicy, fwaas.FirewallRule)


@pytest.fixture
def cloud():
    with ServicesCloud() as c:
        yield c


def build_everything(cloud, external):
    """Project A of full_project with what these extensions add; ids."""
    p = scenarios.full_project(cloud, 'A', external)
    return {
        **scenarios.network_services(cloud, p),
        'project': p['project']['id'],
        'web_sg': p['web_sg']['id'],
        'network': p['network']['id'],
        'router': p['router']['id'],
    }


def d(kind, id_):
    return step_id('delete', kind.name, id_)


@pytest.mark.parametrize('kind_class', list(COLLECTION), ids=lambda k: k.name)
def test_each_lists_the_projects_own_page_by_page(cloud, kind_class):
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    coll = COLLECTION[kind_class]
    mine = sorted(
        cloud.neutron_more(coll, a, name=f'a{n}')['id'] for n in range(5)
    )
    theirs = cloud.neutron_more(coll, b, name='b')['id']
    conn = cloud.connection()
    kind = kinds_mod.build()[kind_class.name]

    assert sorted(r.id for r in kind.list(conn, a)) == mine
    lists = [
        p
        for m, p in cloud.requests
        if m == 'GET' and p.split('?')[0].endswith(f'/v2.0/{coll}')
    ]
    assert len(lists) >= 3  # two a page
    # networking-bgpvpn refuses a project filter, and neutron-fwaas makes
    # the default group of the project a list names (tests below)
    filtered = kind_class not in (bgpvpn.BgpVpn, *FIREWALL)
    assert all((f'project_id={a}' in p) is filtered for p in lists)
    # the orphan search: every project's (and the admin's project's
    # default firewall objects, which its unfiltered lists made)
    assert sorted(
        r.id for r in kind.list(conn, None) if r.project_id in (a, b)
    ) == sorted([*mine, theirs])


def test_a_bgpvpn_list_names_no_project_which_neutron_refuses(cloud):
    """networking-bgpvpn (25.0.0) marks neither ``project_id`` nor
    ``tenant_id`` a filter: Neutron answers a list naming one with 400
    (seen on the minicloud), which failed the whole discovery; the list
    asks for every VPN the token sees and keeps the project's."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    mine = cloud.neutron_more('bgpvpn/bgpvpns', a)['id']
    cloud.neutron_more('bgpvpn/bgpvpns', b)
    conn = cloud.connection()
    with pytest.raises(sdk_exc.BadRequestException, match='filtering'):
        list(conn.network.bgpvpns(project_id=a))
    assert [r.id for r in bgpvpn.BgpVpn().list(conn, a)] == [mine]


def test_a_bgpvpns_port_associations_only_with_routes_control(cloud):
    """networking-bgpvpn answers a VPN's port associations with 404 where
    its ``bgpvpn-routes-control`` extension is not loaded (its Dummy
    driver's, on the minicloud), which failed the discovery; and only the
    project's VPNs are asked for their associations, now that the list
    names no project."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    mine = cloud.neutron_more('bgpvpn/bgpvpns', a, networks=['n1'])['id']
    theirs = cloud.neutron_more('bgpvpn/bgpvpns', b)['id']
    cloud.without_extensions = frozenset({'bgpvpn-routes-control'})
    [ref] = bgpvpn.BgpVpn().list(cloud.connection(), a)
    assert (ref.id, ref.attrs['associated']) == (
        mine,
        [[core.Network.name, 'n1']],
    )
    assert not [p for _, p in cloud.requests if theirs in p]
    assert not [p for _, p in cloud.requests if 'port_associations' in p]


def test_without_their_extensions_nothing_is_asked(cloud):
    a = scenarios.project(cloud, 'A')['id']
    for coll in COLLECTION.values():
        cloud.neutron_more(coll, a)
    cloud.without_extensions = frozenset(ext for _, ext in MORE.values())
    conn = cloud.connection()
    for kind_class in COLLECTION:
        assert kinds_mod.build()[kind_class.name].list(conn, a) == []
    assert not [p for _, p in cloud.requests if any(c in p for c in MORE)]


def test_the_order_neutron_needs_and_accepts(cloud, external):
    e = build_everything(cloud, external)
    pc, targets, plan = cascade_for(cloud, e['project'])
    detach = step_id(
        'detach_firewall_group_ports',
        fwaas.FirewallGroup.name,
        e['fw_group'],
    )
    assert {
        (
            d(core.SecurityGroup, e['web_sg']),
            d(address_group.AddressGroup, e['address_group']),
        ),
        (detach, d(fwaas.FirewallGroup, e['fw_group'])),
        (detach, d(core.Port, e['fw_port'])),
        (
            d(fwaas.FirewallGroup, e['fw_group']),
            d(fwaas.FirewallPolicy, e['fw_policy']),
        ),
        *(
            (
                d(fwaas.FirewallPolicy, e['fw_policy']),
                d(fwaas.FirewallRule, r),
            )
            for r in e['fw_rules']
        ),
        (
            d(log.NetworkLog, e['sg_log']),
            d(core.SecurityGroup, e['web_sg']),
        ),
        (d(log.NetworkLog, e['port_log']), d(core.Port, e['log_port'])),
        (d(bgpvpn.BgpVpn, e['bgpvpn']), d(core.Network, e['network'])),
        (d(bgpvpn.BgpVpn, e['bgpvpn']), d(core.Router, e['router'])),
        (d(bgpvpn.BgpVpn, e['bgpvpn']), d(core.Port, e['vpn_port'])),
    } <= plan.edges
    assert d(metering.MeteringLabel, e['metering_label']) in plan.steps
    # and Neutron takes it: no ...InUse, nothing left for a second round
    pc.execute(plan, targets)
    assert len(pc.runs) == 1
    left = {k: cloud.all(k) for k, _ext in MORE.values()}
    assert not [
        o for k in left for o in left[k] if o['project_id'] == e['project']
    ]


def test_the_fake_refuses_what_neutron_refuses(cloud, external):
    conn = cloud.connection()
    e = build_everything(cloud, external)
    for call, id_ in (
        (conn.network.delete_firewall_group, e['fw_group']),
        (conn.network.delete_firewall_policy, e['fw_policy']),
        (conn.network.delete_firewall_rule, e['fw_rules'][0]),
        (conn.network.delete_address_group, e['address_group']),
    ):
        with pytest.raises(sdk_exc.ConflictException, match=r'in use'):
            call(id_)


def test_what_another_project_uses_is_kept(cloud, external):
    e = build_everything(cloud, external)
    b = scenarios.project(cloud, 'B')['id']
    other_sg = scenarios.security_group(cloud, b, 'b-web')
    rule = scenarios.add_rule(cloud, other_sg, other_sg)
    rule.update(
        remote_group_id=None, remote_address_group_id=e['address_group']
    )
    other_fwg = cloud.neutron_more(
        'fwaas/firewall_groups',
        b,
        ports=[],
        ingress_firewall_policy_id=e['fw_policy'],
        egress_firewall_policy_id=None,
    )
    other_policy = cloud.neutron_more(
        'fwaas/firewall_policies', b, firewall_rules=[e['fw_rules'][1]]
    )
    _pc, _t, plan = cascade_for(cloud, e['project'])
    kept = {
        key: plan.steps[
            step_id(
                'keep',
                kind.name,
                e[key] if key != 'rule' else e['fw_rules'][1],
            )
        ]
        for key, kind in (
            ('address_group', address_group.AddressGroup),
            ('fw_policy', fwaas.FirewallPolicy),
            ('rule', fwaas.FirewallRule),
        )
    }
    assert other_sg['id'] in kept['address_group'].params['reason']
    assert other_fwg['id'] in kept['fw_policy'].params['reason']
    assert other_policy['id'] in kept['rule'].params['reason']
    assert d(fwaas.FirewallRule, e['fw_rules'][0]) in plan.steps


def project_firewall(cloud, project_id):
    """The project's firewall objects in the fake, by collection."""
    return {
        key: sorted(
            o['name'] for o in cloud.all(key) if o['project_id'] == project_id
        )
        for key in ('firewall_groups', 'firewall_policies', 'firewall_rules')
    }


DEFAULTS = {
    'firewall_groups': ['default'],
    'firewall_policies': ['default egress', 'default ingress'],
    'firewall_rules': sorted(
        f'default {w} ipv{v}' for w in ('ingress', 'egress') for v in (4, 6)
    ),
}


def test_the_fake_makes_a_default_firewall_group_as_neutron_fwaas(cloud):
    """neutron-fwaas 25.0.0 (read and seen on the minicloud): a list
    naming the project, or the quota details, make its default group,
    policies and rules; an unfiltered admin list makes none of it."""
    a = scenarios.project(cloud, 'A')['id']
    b = scenarios.project(cloud, 'B')['id']
    conn = cloud.connection()
    list(conn.network.firewall_groups())
    list(conn.network.firewall_rules())
    assert project_firewall(cloud, a) == {key: [] for key in DEFAULTS}
    list(conn.network.firewall_policies(project_id=a))
    assert project_firewall(cloud, a) == DEFAULTS
    conn.network.get_quota(b, details=True)
    assert project_firewall(cloud, b) == DEFAULTS


def test_a_cascade_deletes_the_default_firewall_group_and_ends(
    cloud, external
):
    """A list naming the project made its default group again at every
    discovery: the verification rounds found a new one each time and the
    cascade failed with leftovers (seen on the minicloud). Listed
    unfiltered, the project's default group, policies and rules go once,
    after its other groups, and nothing is made again."""
    e = build_everything(cloud, external)
    conn = cloud.connection()
    list(conn.network.firewall_groups(project_id=e['project']))
    [default] = [
        g['id']
        for g in cloud.all('firewall_groups')
        if g['project_id'] == e['project'] and g['name'] == 'default'
    ]
    cloud.requests.clear()
    pc, targets, plan = cascade_for(cloud, e['project'])
    assert (
        d(fwaas.FirewallGroup, e['fw_group']),
        d(fwaas.FirewallGroup, default),
    ) in plan.edges
    pc.execute(plan, targets)
    assert len(pc.runs) == 1
    assert project_firewall(cloud, e['project']) == {
        key: [] for key in DEFAULTS
    }
    assert not [
        p
        for m, p in cloud.requests
        if m == 'GET' and 'fwaas' in p and f'project_id={e["project"]}' in p
    ]
