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

"""``python -m tests.sim soak`` plays many scenarios with progress on
stderr; ``python -m tests.sim replay JSON`` plays one again and prints
what it broke."""

from __future__ import annotations

import argparse
import random
import sys
import time

from hypothesis import HealthCheck, given, seed, settings


def soak(examples: int, chosen: int | None, every: int = 50) -> int:
    from tests.sim import strategies
    from tests.sim.play import play

    run_seed = random.randrange(2**32) if chosen is None else chosen
    print(f'seed {run_seed}: {examples} scenarios', file=sys.stderr)
    began, done = time.monotonic(), [0]

    @seed(run_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategies.scenarios)
    def hunt(scenario):
        broken = play(scenario)
        done[0] += 1
        if done[0] % every == 0 or broken:
            rate = done[0] / (time.monotonic() - began)
            print(
                f'{done[0]} played, {rate:.1f}/s'
                + (f'; broken: {scenario.to_json()}' if broken else ''),
                file=sys.stderr,
            )
        for line in broken:  # what it broke, as it broke it first
            print(f'  {line[:300]}', file=sys.stderr)
        assert not broken, '\n'.join([scenario.to_json(), *broken])

    try:
        hunt()
    except AssertionError as failure:
        print(
            f'seed {run_seed}: the smallest failing scenario:', file=sys.stderr
        )
        print(failure)
        return 1
    print(
        f'seed {run_seed}: {done[0]} played in '
        f'{time.monotonic() - began:.0f} s, no invariant broken',
        file=sys.stderr,
    )
    return 0


def replay(text: str) -> int:
    from tests.sim.play import Scenario, play

    broken = play(Scenario.from_json(text))
    for line in broken:
        print(line)
    print(f'{len(broken)} invariants broken', file=sys.stderr)
    return 1 if broken else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='python -m tests.sim')
    verbs = parser.add_subparsers(dest='verb', required=True)
    long_run = verbs.add_parser('soak', help='play many scenarios')
    long_run.add_argument('--examples', type=int, default=10000)
    long_run.add_argument('--seed', type=int, help='default: a random one')
    long_run.add_argument(
        '--every', type=int, default=50, help='progress every N scenarios'
    )
    again = verbs.add_parser('replay', help='play one scenario again')
    again.add_argument('scenario', help='its JSON, as a failure prints it')
    args = parser.parse_args(argv)
    if args.verb == 'soak':
        return soak(args.examples, args.seed, args.every)
    return replay(args.scenario)


if __name__ == '__main__':
    sys.exit(main())
