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

"""CI's share of the simulation: a bounded number of scenarios, the same
ones every run (derandomized), each checked against every invariant; and
the harness itself shown to see what it claims to."""

import os

from hypothesis import HealthCheck, Phase, find, given, settings

from tests.sim import invariants, model, strategies
from tests.sim.play import Run, Scenario, isolated, play, played
from tests.sim.world import SimCloud

#: scenarios CI plays (``SIM_EXAMPLES`` for more)
EXAMPLES = int(os.environ.get('SIM_EXAMPLES', '120'))
#: plays of one scenario the replay test compares (20 proved it once)
REPLAYS = int(os.environ.get('SIM_REPLAYS', '3'))


def replay_line(scenario):
    return f"python -m tests.sim replay '{scenario.to_json()}'"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    # a scenario takes a second or more: CI reports the first failure as
    # drawn, ``python -m tests.sim soak`` shrinks it
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=list(HealthCheck),
)
@given(strategies.scenarios)
def test_no_scenario_breaks_an_invariant(scenario):
    broken = play(scenario)
    assert not broken, '\n'.join([replay_line(scenario), *broken])


def test_open_defects_are_still_seen_and_the_rest_drawn():
    """A feature or actor left out of the draws for an open defect still
    breaks an invariant (when its fix lands this fails, and the name
    leaves ``model.OPEN`` to be drawn again); every other one is drawn."""
    for name, (_, command) in sorted(model.OPEN.items()):
        kind = 'features' if name in model.FEATURES else 'actors'
        scenario = Scenario(command, recursive=True, **{kind: (name,)})
        assert play(scenario), (
            f'{name} no longer breaks anything: {replay_line(scenario)}'
        )
    # and every name that is not open is drawn
    for name in sorted(set(model.FEATURES) | set(model.ACTORS)):
        if name in model.OPEN:
            continue
        found = find(
            strategies.scenarios,
            lambda s, n=name: n in s.features + s.actors,
            settings=settings(max_examples=5000, database=None),
        )
        assert name in found.features + found.actors


def test_the_invariants_see_a_foreign_delete():
    """The harness's own check: a DELETE of another project's port, sent
    as the tool (outside any actor), breaks invariant 1, and the run's
    silent failure breaks invariant 6."""
    with isolated(), SimCloud() as cloud:
        two = cloud.add_region('RegionTwo', ['network'], shared=['image'])
        world = model.build(cloud, two)
        before = invariants.Before.take(world)
        port = world.made['o-spare']['id']
        cloud.connection().network.delete_port(port)
        silent = Run(('project', 'delete'), 1, '', '')
        broken = invariants.check(Scenario('cascade'), world, before, [silent])
    assert broken == [
        f'1: deleted ports {port} of {world.o} in RegionOne '
        f'(DELETE /v2.0/ports/{port})',
        '6: project delete exit 1 silently',
    ]


def test_a_scenario_with_a_kill_replays_the_same():
    """A seed replays: the same requests in the same order, with the same
    answers, the kill on the same change, each fault on the same request,
    the same removals (the tool runs on one thread: ``serial``)."""
    scenario = Scenario(
        'cascade',
        actors=('cached-token-after-delete',),
        faults=(('DELETE', r'/v2\.0/ports', 503), ('GET', r'/volumes', 500)),
        kill_at=12,
        recursive=True,
    )
    histories = set()
    for _ in range(REPLAYS):
        broken, world, runs = played(scenario)
        assert [run.code for run in runs] == [1, 0]  # killed, then done
        assert not broken
        histories.add((tuple(world.cloud.history()), tuple(broken)))
    assert len(histories) == 1
    ((history, _),) = histories
    assert any(' DELETE /v2.0/ports/' in line for line in history)
    assert any(line.startswith('tool removed projects') for line in history)
