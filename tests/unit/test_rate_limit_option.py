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

"""``--rate-limit`` on every command that runs a plan: the connection's
per-service ``rate_limit`` (the reaper's path), which the executor's calls
keep to, counted on the virtual clock."""

import argparse
import itertools

import pytest

from osc_cascade.engine import limiter
from osc_cascade.v1 import common
from tests.unit import scenarios

COMMANDS = [
    ('project', 'delete'),
    ('orphan', 'purge'),
    ('compute', 'service', 'delete'),
    ('cluster', 'force-delete'),
    ('project', 'sweep'),
]


@pytest.mark.parametrize('command', COMMANDS, ids=' '.join)
def test_every_command_that_runs_a_plan_has_it(osc, command):
    result = osc('help', *command)
    assert result.code == 0, result.stderr
    assert '--rate-limit <n>' in result.stdout
    assert 'At most <n> API calls a second per service' in result.stdout


def test_it_becomes_the_connections_rate_limit_of_every_service(conn):
    conn.config.config['rate_limit'] = {'compute': 1.0}

    class App:
        class client_manager:
            sdk_connection = conn

    args = argparse.Namespace(api_timeout=None, rate_limit=5.0)
    assert common.connection(App, args) is conn
    assert limiter.rate_limit(conn, 'network') == 5.0
    assert limiter.rate_limit(conn, 'object-store') == 5.0
    assert limiter.rate_limit(conn, 'compute') == 1.0  # lower: it stays


class Timed(list):
    """The fake cloud's request log, each request with its virtual time."""

    def __init__(self, clock):
        super().__init__()
        self.clock = clock
        self.times = []

    def append(self, request):
        self.times.append((self.clock.now(), *request))
        super().append(request)


def network_deletes(log):
    return [
        t
        for t, method, path in log.times
        if method == 'DELETE' and ('/v2.0/' in path)
    ]


@pytest.mark.parametrize('per_second', [None, 20.0])
def test_the_cascades_calls_keep_to_it(
    cloud, external, osc, virtual_time, per_second
):
    scenarios.full_project(cloud, 'A', external)
    cloud.requests = log = Timed(virtual_time)
    # one call at a time: the virtual clock is every thread's, and
    # another call's wait would move a request's time past its turn
    argv = ['project', 'delete', '--cascade', '--yes', '--parallel', '1', 'A']
    if per_second:
        argv[-1:-1] = ['--rate-limit', str(per_second)]
    result = osc(*argv)
    assert result.code == 0, result.stderr
    times = sorted(network_deletes(log))
    assert len(times) > 3
    gaps = [b - a for a, b in itertools.pairwise(times)]
    if per_second:
        assert min(gaps) >= 1 / per_second - 1e-9
    else:  # without: several at the same virtual moment
        assert min(gaps) == 0
