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

"""The resource mix of benchmarks/generate.py (pure)."""

import pytest

from benchmarks import generate


@pytest.mark.parametrize('n', [1, 10, 30, 100, 300, 1000])
def test_mix_adds_up_to_n(n):
    assert sum(generate.mix(n).values()) == n


def test_mix_keeps_relations_possible():
    for n in (5, 30, 100, 300, 1000):
        m = generate.mix(n)
        assert m.get('network.subnet', 0) >= m.get('network.network', 0)
        assert m.get('network.router', 0) <= m.get('network.subnet', 0)
        assert m.get('block_storage.snapshot', 0) <= m.get(
            'block_storage.volume', 0
        )
        if m.get('object_store.object'):
            assert m.get('object_store.container')
        assert m.get('block_storage.backup', 0) <= generate.MAX_BACKUPS


def test_mix_skips_unavailable_services():
    m = generate.mix(100, services=['network', 'compute'])
    assert sum(m.values()) == 100
    assert {k.split('.')[0] for k in m} == {'network', 'compute'}
    assert generate.mix(100, services=[]) == {}
    assert generate.mix(0) == {}


def test_mix_at_300_is_the_documented_one():
    m = generate.mix(300)
    assert m['compute.server'] == 25
    assert m['network.port'] == 44
    assert m['block_storage.backup'] == 3
