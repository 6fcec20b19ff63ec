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

"""benchmarks.before_after's medians and table, of cascades and of dry
runs (``--before-args=--dry-run``), which have no critical-path bound."""

from benchmarks import before_after


def _row(wall, cpu, requests, bound=None):
    row = {
        'wall': wall,
        'requests': requests,
        'client_cpu_s': cpu,
        'client_peak_rss_mib': 600.0,
        'sim': {'process_cpu_s': 9.0},
        'left': 0,
        'exit_code': 0,
        'twin_intact': True,
        'load_before': [1.0, 1.0, 1.0],
    }
    if bound is not None:
        row['bound'] = bound
    return row


def _runs(bound_before, bound_after):
    return [
        {
            'n': 100,
            'repeat': rep,
            'versions': {
                'before': _row(40.0 + rep, 20.0, 1000, bound_before),
                'after': _row(20.0 + rep, 10.0, 1000, bound_after),
            },
        }
        for rep in range(3)
    ]


def test_cascades_have_a_ratio_to_their_bound():
    before, after = before_after.summarize(_runs(20.0, 10.0))
    assert (before['version'], before['wall'], before['ratio']) == (
        'before',
        41.0,
        41.0 / 20.0,
    )
    assert after['ms_per_request'] == 10.0
    assert '| 100 | after | 3 | 21.0 | 10.0 | 2.10 |' in (
        before_after.markdown([before, after])
    )


def test_dry_runs_have_no_bound_and_no_ratio():
    before, after = before_after.summarize(_runs(None, None))
    assert (before['bound'], before['ratio']) == (0, 0.0)
    table = before_after.markdown([before, after])
    assert '| 100 | before | 3 | 41.0 |  |  | 1000 | 20.0 | 20.00 |' in table
