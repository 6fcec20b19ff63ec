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

"""The reaper's rate limit reaches every region's connection: its purge
lists and deletes in each region through a connection of its own."""

from __future__ import annotations

from osc_cascade.engine.regions import Regions
from tests.unit import scenarios
from tests.unit.fakes.clouds import FakeCloud


def test_a_regions_connection_keeps_the_rate_limit_a_number():
    # seen on the minicloud: every RegionOne listing of the reaper failed
    # with "unsupported operand type(s) for /: 'float' and 'str'"
    with FakeCloud() as one:
        two = one.add_region('RegionTwo', ['network'])
        project = scenarios.project(one, 'A')['id']
        scenarios.network(two, project, name='net2')
        conn = one.connection()
        conn.config.config['rate_limit'] = {'network': 2.0}
        conn.config.config['concurrency'] = {'network': 3}
        regional = Regions(conn).connection('RegionTwo')
        assert regional.config.get_rate_limit('network') == 2.0
        assert regional.config.get_concurrency('network') == 3
        networks = regional.network.networks(project_id=project)
        assert [n.name for n in networks] == ['net2']
