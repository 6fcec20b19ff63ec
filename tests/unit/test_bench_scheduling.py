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

import pytest

from benchmarks import scheduling


def row(wall, busy, twin_intact=True):
    return {
        'wall': wall,
        'requests': 600,
        'bound': 20.0,
        'executed_span': 30.0,
        'cpu': {'cloud_busy': busy},
        'left': 0,
        'exit_code': 0,
        'twin_intact': twin_intact,
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
    assert '| 50% | 0 | yes (3 of 3 twins checked) |' in text
    assert 'adaptive:30 against the best fixed (fixed:10): wall 1.05x' in text


def test_a_run_whose_cloud_was_not_measured_says_so():
    text = table(0.5, None, 0.5)
    assert '| not measured | 0 | yes (3 of 3 twins checked) |' in text
    assert '%' not in text.split('\n')[2]


def test_a_run_without_a_twin_is_not_counted_as_checked():
    # the last run of a repeat has none left: its project was the twin of
    # the run before, deleted since
    records = [
        {'modes': {'fixed:10': row(40.0, 0.5), 'adaptive:30': row(42.0, 0.5)}},
        {
            'modes': {
                'fixed:10': row(40.0, 0.5),
                'adaptive:30': row(42.0, 0.5, None),
            }
        },
    ]
    text = scheduling.markdown(scheduling.summarize(records))
    assert '| 0 | yes (1 of 2 twins checked) |' in text
    records[0]['modes']['adaptive:30']['twin_intact'] = False
    text = scheduling.markdown(scheduling.summarize(records))
    assert '| 0 | no (1 of 2 twins checked) |' in text


def test_the_adaptive_slots_are_the_fewest_and_most_of_any_run():
    def slots(low, high):
        return {
            'compute@RegionOne': {
                'adaptive': True,
                'lowest': low,
                'highest': high,
                'slots': high,
            },
            'network@RegionOne': {'adaptive': False, 'slots': 10},
        }

    records = [
        {'modes': {'adaptive:30': dict(row(42.0, 0.5), slots=slots(3, 8))}},
        {'modes': {'adaptive:30': dict(row(42.0, 0.5), slots=slots(2, 6))}},
        {'modes': {'fixed:10': row(40.0, 0.5)}},
    ]
    text = scheduling.slots_markdown(records)
    assert text.splitlines() == [
        '| mode | compute |',
        '|---|---|',
        '| adaptive:30 | 2-8 |',
    ]
    assert scheduling.slots_markdown(records[2:]) == ''


def test_a_version_against_the_one_before_at_the_same_parallel():
    records = [
        {
            'modes': {
                'before:10': row(50.0, 0.5),
                'adaptive:10': row(45.0, 0.5),
                'adaptive:30': row(44.0, 0.5),
            }
        }
    ]
    text = scheduling.markdown(scheduling.summarize(records))
    # before first, and only the same --parallel compared
    assert text.index('| before:10 |') < text.index('| adaptive:10 |')
    assert 'adaptive:10 against before:10: wall 0.90x, requests 1.00x' in text
    assert 'adaptive:30 against' not in text


def test_before_modes_parse_and_need_a_revision():
    assert scheduling.parse_modes('before:10,adaptive:10') == [
        ('before', 10),
        ('adaptive', 10),
    ]
    with pytest.raises(SystemExit):
        scheduling.main(['--modes', 'before:10', '--out', '/nonexistent'])
