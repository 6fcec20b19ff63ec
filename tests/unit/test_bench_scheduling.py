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

"""benchmarks/scheduling.py: the table of fixed against adaptive slots."""

from benchmarks import scheduling


def row(wall, busy):
    return {
        'wall': wall,
        'requests': 600,
        'bound': 20.0,
        'executed_span': 30.0,
        'cpu': {'cloud_busy': busy},
        'left': 0,
        'exit_code': 0,
        'twin_intact': True,
    }


def table(*busy):
    records = [
        {'modes': {'fixed:10': row(40.0, b), 'adaptive:30': row(42.0, b)}}
        for b in busy
    ]
    return scheduling.markdown(scheduling.summarize(records))


def test_the_clouds_share_of_the_cores_is_a_median():
    text = table(0.4, 0.5, 0.6)
    assert '| fixed:10 | 3 | 40.0 (40.0-40.0) |' in text
    assert '| 50% | 0 | yes |' in text
    assert 'adaptive:30 against the best fixed (fixed:10): wall 1.05x' in text


def test_a_run_whose_cloud_was_not_measured_says_so():
    text = table(0.5, None, 0.5)
    assert '| not measured | 0 | yes |' in text
    assert '%' not in text.split('\n')[2]
