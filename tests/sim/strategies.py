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

"""The scenarios Hypothesis draws: a command, the cross-project features,
the other actors, the faults and a kill. Hypothesis shrinks a failing one
to the fewest features, actors and faults that still fail."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.sim import model
from tests.sim.play import COMMANDS, Scenario

#: where a fault can strike: the collections the tool reads and deletes
FAULT_PATHS = (
    r'/v2\.0/ports',
    r'/v2\.0/networks',
    r'/v2\.0/routers',
    r'/v2\.0/security-groups',
    r'/v2\.0/floatingips',
    r'/servers',
    r'/volumes',
    r'/snapshots',
    r'/v2/images',
    r'/v3/projects',
    r'/os-quota-sets',
    r'/volume-transfers',
    r'/zones',
    r'/share-transfers',
    r'/stacks',
    r'/v1/AUTH_',
)

faults = st.tuples(
    st.sampled_from(('GET', 'DELETE', 'PUT', 'POST')),
    st.sampled_from(FAULT_PATHS),
    st.sampled_from((500, 502, 503, 504)),
)


#: what matters most to a command that is not a cascade: the features
#: and actors a focused draw takes from (a cascade's are all of them)
FOCUS = {
    'force-delete': (
        't-stack-retains-volume',
        't-stack-adopted-network',
        't-stack-holds-o-network',
        't-stack-holds-region-two-network',
    ),
    'drain-restore': ('t-per-user-quotas', 'restore-refused-once'),
    'drain-restore-again': ('t-per-user-quotas', 'restore-refused-once'),
    'cascade-without-admin-restore': (
        't-per-user-quotas',
        'restore-refused-once',
    ),
    'sweep': ('re-enables-c-during-sweep', 'cached-token-after-delete'),
    'cascade-then-purge': (
        'cached-token-after-delete',
        't-container-with-objects',
        't-stack-made-o-network',
    ),
    # between a plan file and its run, others act on what it shows
    'cascade-plan-file': (
        't-volume-offered-to-o',
        't-zone-offered-to-o',
        't-share-offered-to-o',
        'o-accepts-t-offers-after-listing',
        'o-accepts-t-offers-on-delete',
        'o-takes-t-port-as-nic-after-plan',
    ),
    'orphan-purge': (
        't-container-with-objects',
        't-stack-made-o-network',
        't-port-is-o-server-nic',
        't-volume-offered-to-o',
        'o-accepts-t-offers-after-listing',
    ),
}


def names(registry, most, among=None):
    """Up to ``most`` names of ``registry``, those of open defects left
    out (``model.OPEN``); with ``among``: one at least, of those alone
    (none where ``among`` has none of ``registry``)."""
    known = sorted(set(registry) - set(model.OPEN))
    least = 0
    if among is not None:
        known = [n for n in known if n in among]
        least = min(1, len(known))
    if not known:
        return st.just(())
    return (
        st.lists(
            st.sampled_from(known),
            unique=True,
            min_size=least,
            max_size=min(most, len(known)),
        )
        .map(sorted)
        .map(tuple)
    )


def drawn(command, focused):
    """A scenario of ``command``; ``focused``: its features and actors
    of those that matter to it (``FOCUS``)."""
    among = FOCUS.get(command) if focused else None
    return st.builds(
        Scenario,
        command=st.just(command),
        features=names(model.FEATURES, 3, among),
        actors=names(model.ACTORS, 2, among),
        faults=st.lists(faults, max_size=3).map(tuple),
        kill_at=st.one_of(st.just(0), st.integers(1, 40)),
        recursive=st.booleans(),
    )


#: half the draws take any features and actors, half (for the commands
#: that are no plain cascade) those that matter to the command: drawn
#: from all, a force delete met a stack's Retain policy once in 150
#: scenarios, a sweep an operator's re-enable once in 120
scenarios = st.sampled_from(COMMANDS).flatmap(
    lambda command: st.one_of(drawn(command, False), drawn(command, True))
)
