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

"""Issue #29's defects, each the smallest scenario that showed it with its
fix reverted (issue #30): every invariant holds now, and what the
scenario is about did happen (the actor acted, the run went where it
must), so that a scenario that stops reaching its defect fails here
rather than passing empty."""

import pytest

from tests.sim.play import Scenario, played
from tests.sim.test_simulation import replay_line
from tests.sim.world import owner_of

#: defect -> (scenario, what must be seen after it: world, runs -> bool)
REGRESSIONS = {
    '1 volume, zone, share accepted by O after the listing': (
        Scenario(
            'cascade',
            features=(
                't-share-offered-to-o',
                't-volume-offered-to-o',
                't-zone-offered-to-o',
            ),
            actors=('o-accepts-t-offers-after-listing',),
            recursive=True,
        ),
        lambda w, runs: all(
            owner_of(coll, w.cloud.get(coll, w.made[name]['id'])) == w.o
            for coll, name in (
                ('volumes', 't-offered-vol'),
                ('zones', 't-offered-zone'),
                ('shares', 't-offered-share'),
            )
        ),
    ),
    '1 volume, zone, share accepted by O when the tool comes to them': (
        Scenario(
            'cascade',
            features=(
                't-share-offered-to-o',
                't-volume-offered-to-o',
                't-zone-offered-to-o',
            ),
            actors=('o-accepts-t-offers-on-delete',),
            recursive=True,
        ),
        lambda w, runs: runs[-1].code in (0, 1),
    ),
    '1 volume accepted by O after the orphan purge listed it': (
        # the soak (seed 2901, its 50th scenario) with the re-read of the
        # owner undone: no project is left to withdraw the offer for, the
        # re-read alone keeps what is now O's
        Scenario(
            'orphan-purge',
            features=('t-volume-offered-to-o',),
            actors=('o-accepts-t-offers-after-listing',),
        ),
        lambda w, runs: (
            owner_of(
                'volumes',
                w.cloud.get('volumes', w.made['t-offered-vol']['id']),
            )
            == w.o
        ),
    ),
    'soak: zone accepted before the orphan purge lists it': (
        Scenario(
            'orphan-purge',
            features=('t-volume-offered-to-o', 't-zone-offered-to-o'),
            actors=('o-accepts-t-offers-at-once',),
        ),
        lambda w, runs: (
            owner_of(
                'zones', w.cloud.get('zones', w.made['t-offered-zone']['id'])
            )
            == w.o
            and w.cloud.get(
                'zone_transfer_requests', w.made['t-zone-offer']['id']
            )['status']
            == 'COMPLETE'
        ),
    ),
    '2 T port that is O server NIC': (
        Scenario(
            'cascade', features=('t-port-is-o-server-nic',), recursive=True
        ),
        lambda w, runs: w.cloud.exists('ports', w.made['t-spare']['id']),
    ),
    '3 T shared network O is on': (
        Scenario(
            'cascade',
            features=('t-network-shared-o-port-on-it',),
            recursive=True,
        ),
        lambda w, runs: w.cloud.exists('networks', w.made['t-net']['id']),
    ),
    '4 T stack that made O network (cascade)': (
        Scenario(
            'cascade', features=('t-stack-made-o-network',), recursive=True
        ),
        lambda w, runs: (
            runs[-1].code == 1
            and 'stack t-made-o-net made network' in runs[-1].stderr
        ),
    ),
    '4 T stack that made O network (orphan purge)': (
        Scenario('orphan-purge', features=('t-stack-made-o-network',)),
        lambda w, runs: 'stack t-made-o-net made network' in runs[-1].stderr,
    ),
    '5 6 restore refused once, run again': (
        Scenario(
            'drain-restore-again',
            features=('t-per-user-quotas',),
            actors=('restore-refused-once',),
        ),
        lambda w, runs: [r.code for r in runs] == [0, 1, 0],
    ),
    '5 restore after a cascade without admin, refused once, run again': (
        Scenario(
            'cascade-without-admin-restore',
            actors=('restore-refused-once',),
        ),
        lambda w, runs: (
            [r.code for r in runs] == [1, 1, 0]
            and 'putting back the role assignment' in runs[1].stderr
        ),
    ),
    '7 C re-enabled while the sweep runs': (
        Scenario('sweep', actors=('re-enables-c-during-sweep',)),
        lambda w, runs: (
            w.re_enabled == {w.child}
            and w.cloud.exists('projects', w.child)
            and w.cloud.exists('projects', w.t)
        ),
    ),
    '8 cached token after the delete, purge after the window': (
        Scenario('cascade-then-purge', actors=('cached-token-after-delete',)),
        lambda w, runs: (
            [r.code for r in runs] == [0, 0]
            and 'frozen quotas are released' in runs[-1].stderr
        ),
    ),
    '9 deleted project Swift container': (
        Scenario('orphan-purge', features=('t-container-with-objects',)),
        lambda w, runs: any(
            r.collection == 'containers'
            and r.id == w.made['t-container']['id']
            and r.by == 'tool'
            for r in w.cloud.removals()
        ),
    ),
    '10 cascade without admin': (
        Scenario('cascade-without-admin'),
        lambda w, runs: (
            runs[-1].code == 0 and not w.cloud.exists('projects', w.t)
        ),
    ),
    '11 12 force delete: Retain volume, adopted network': (
        Scenario(
            'force-delete',
            features=('t-stack-adopted-network', 't-stack-retains-volume'),
        ),
        lambda w, runs: runs[-1].code == 0 and len(w.keep) == 2,
    ),
    '13 force delete: leftover of O': (
        Scenario('force-delete', features=('t-stack-holds-o-network',)),
        lambda w, runs: (
            runs[-1].code == 1 and 'belongs to project' in runs[-1].stderr
        ),
    ),
    '14 Magnum templates others use or may use': (
        Scenario(
            'cascade-then-purge',
            features=('t-public-template', 'o-cluster-on-t-template'),
        ),
        lambda w, runs: (
            all(w.cloud.exists(*kept) for kept in w.shared)
            and len(w.shared) == 2
            and all(
                reason in runs[0].stdout + runs[0].stderr
                for reason in (
                    'public cluster template: other projects may use it',
                    'Magnum refuses its delete',
                )
            )
        ),
    ),
    '13 force delete: leftover in RegionTwo': (
        Scenario(
            'force-delete', features=('t-stack-holds-region-two-network',)
        ),
        lambda w, runs: runs[-1].code == 1,
    ),
}


@pytest.mark.parametrize('defect', sorted(REGRESSIONS))
def test_the_defect_stays_fixed(defect):
    scenario, seen = REGRESSIONS[defect]
    broken, world, runs = played(scenario)
    assert not broken, '\n'.join([replay_line(scenario), *broken])
    assert seen(world, runs), (
        f'{replay_line(scenario)} no longer reaches defect {defect}: '
        + ' / '.join(f'{r.code}: {r.stderr[-300:]}' for r in runs)
    )


def test_the_new_invariants_see_what_they_claim():
    """The harness's own check of invariants 7 to 10, with no run: a
    re-enabled project deleted, a token's network after the delete, a
    Retain'd volume deleted by a force delete that ends 0 with a
    leftover still there."""
    from tests.sim import invariants, model
    from tests.sim.play import Run, isolated
    from tests.sim.world import SimCloud

    with isolated(), SimCloud() as cloud:
        two = cloud.add_region('RegionTwo', ['network'], shared=['image'])
        world = model.build(cloud, two)
        model.FEATURES['t-stack-retains-volume'](world)
        before = invariants.Before.take(world)
        [(_, vol)] = world.keep
        cloud._remove('volumes', vol)
        cloud._remove('projects', world.t)
        world.re_enabled.add(world.t)
        world.window['networks'] = 'n-late'
        done = Run(('cluster', 'force-delete'), 0, '', '')
        broken = invariants.check(
            Scenario('force-delete'), world, before, [done]
        )
    numbers = [b.split(':')[0] for b in broken]
    # 10: the stack's own network (t-app-net) is still there
    assert [n for n in numbers if n in ('7', '8', '9', '10')] == [
        '7',
        '8',
        '10',
        '9',
    ], broken
