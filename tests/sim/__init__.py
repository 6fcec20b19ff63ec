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

"""A deterministic simulation of the whole tool against a hostile cloud.

Hypothesis draws a scenario (``strategies``): a topology with cross-project
references (``model``'s features), other actors who act while the tool
works, faults and a kill followed by a re-run; ``play`` runs the real
``openstack`` shell against the unit tests' stateful fakes, watched
(``world``), and ``invariants`` says what the run broke. A failure shrinks
to a minimal scenario, printed as JSON that ``python -m tests.sim replay``
plays again. ``tox -e sim`` runs CI's share; ``python -m tests.sim soak``
a long run with progress.
"""
