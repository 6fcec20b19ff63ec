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


def names(registry, most):
    """Up to ``most`` names of ``registry``, those of open defects left
    out (``model.OPEN``)."""
    known = sorted(set(registry) - set(model.OPEN))
    return (
        st.lists(st.sampled_from(known), unique=True, max_size=most)
        .map(sorted)
        .map(tuple)
    )


scenarios = st.builds(
    Scenario,
    command=st.sampled_from(COMMANDS),
    features=names(model.FEATURES, 3),
    actors=names(model.ACTORS, 2),
    faults=st.lists(faults, max_size=3).map(tuple),
    kill_at=st.one_of(st.just(0), st.integers(1, 40)),
    recursive=st.booleans(),
)
