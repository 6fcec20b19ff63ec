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

"""Each filter of a selective cleanup (``engine.selection``), and the
times and tags the kinds read for them."""

import pytest

from osc_cascade.engine.resource import ResourceRef
from osc_cascade.engine.selection import Selection, kind_name
from osc_cascade.kinds.paging import item_ref


def ref(kind='network.port', created='', updated='', tags=None):
    return ResourceRef(
        kind, 'id', 'n', 'p', created_at=created, updated_at=updated, tags=tags
    )


def test_empty_selects_everything_and_is_false():
    assert not Selection()
    assert Selection().why_not(ref()) is None


@pytest.mark.parametrize(
    'created, selected',
    [
        ('2026-11-27T23:59:59Z', True),
        # at the time: selected, as openstacksdk's project_cleanup (<=)
        ('2026-11-28T00:00:00Z', True),
        ('2026-11-28T00:00:01Z', False),
        # no zone: UTC, as the services write it
        ('2026-11-28T00:00:01', False),
        ('2026-11-28T01:00:00+02:00', True),
    ],
)
def test_created_before(created, selected):
    sel = Selection(created_before='2026-11-28T00:00:00')
    assert (sel.why_not(ref(created=created)) is None) is selected


def test_no_time_is_not_selected_by_a_time_filter():
    why = Selection(created_before='2026-11-28T00:00:00').why_not(ref())
    assert why == 'its service gives no created time (--created-before)'
    why = Selection(updated_before='2026-11-28T00:00:00').why_not(
        ref(created='2026-01-01T00:00:00Z')
    )
    assert why == 'its service gives no updated time (--updated-before)'


def test_updated_before():
    sel = Selection(updated_before='2026-11-28T00:00:00Z')
    assert sel.why_not(ref(updated='2026-11-27T00:00:00Z')) is None
    assert 'after --updated-before' in sel.why_not(
        ref(updated='2026-11-29T00:00:00Z')
    )


@pytest.mark.parametrize(
    'option, tags, selected',
    [
        ('tags', ('a', 'b', 'c'), True),
        ('tags', ('a',), False),
        ('any_tags', ('b',), True),
        ('any_tags', ('c',), False),
        ('not_tags', ('a',), True),
        ('not_tags', ('a', 'b'), False),
        ('not_any_tags', ('c',), True),
        ('not_any_tags', ('b',), False),
        ('not_any_tags', (), True),
    ],
)
def test_tag_filters_as_neutron_spells_them(option, tags, selected):
    sel = Selection(**{option: ('a', 'b')})
    assert (sel.why_not(ref(tags=tags)) is None) is selected


def test_a_kind_without_tags_is_never_selected_by_a_tag_filter():
    for option in ('tags', 'any_tags', 'not_tags', 'not_any_tags'):
        sel = Selection(**{option: ('keep',)})
        assert sel.why_not(ref(tags=None)) == (
            'its service keeps no tags (tag filters)'
        )


def test_skip_and_only_resource():
    assert Selection(skip=('network.port',)).why_not(ref()) == (
        'network.port is skipped (--skip-resource)'
    )
    assert Selection(only=('image.image',)).why_not(ref()) == (
        'network.port is not asked for (--only-resource)'
    )
    assert Selection(only=('network.port',)).why_not(ref()) is None


def test_osc_names():
    assert kind_name('object_store.object') == 'object_store.container'
    assert kind_name('dns.floating_ip') == 'dns.floating_ip_ptr'
    assert kind_name('network.port') == 'network.port'


def test_the_default_security_group_stays_with_its_project():
    group = ResourceRef('network.security_group', 'g', 'default', 'p')
    assert Selection(skip=('image.image',)).why_not(group) == (
        'the default group stays with its project'
    )
    other = ResourceRef('network.security_group', 'g', 'web', 'p')
    assert Selection(skip=('image.image',)).why_not(other) is None


def test_the_project_is_always_selected():
    sel = Selection(created_before='2026-01-01T00:00:00Z')
    assert sel.why_not(ref('identity.project')) is None


def test_bounded_to_the_plan_files_deletes():
    sel = Selection(skip=('image.image',)).bounded({'network.port:other'})
    assert sel.why_not(ref()) == (
        'the plan shown does not delete it (or its row says keep)'
    )
    assert sel.bounded({'network.port:id'}).why_not(ref()) is None


def test_notes_once_per_kind():
    sel = Selection(created_before='2026-11-28T00:00:00Z', not_tags=('k',))
    notes = sel.notes(
        [
            ref('compute.keypair'),
            ref('compute.keypair'),
            ref('network.port', created='2026-01-01T00:00:00Z', tags=()),
        ]
    )
    assert notes == [
        'compute.keypair: 2 without a creation time, which no filter on it '
        'selects: kept',
        'compute.keypair: 2 without tags, which no filter on it selects: kept',
    ]


def test_round_trip_and_refusals():
    sel = Selection(
        created_before='2026-11-28T00:00:00Z',
        skip=('image.image',),
        not_tags=('keep',),
    )
    assert Selection.from_dict(sel.to_dict()) == sel
    assert sel.to_dict() == {
        'created_before': '2026-11-28T00:00:00Z',
        'skip': ['image.image'],
        'not_tags': ['keep'],
    }
    for bad in (
        {'older': '1d'},
        {'created_before': 'yesterday'},
        {'tags': 'keep'},
    ):
        with pytest.raises(ValueError):
            Selection.from_dict(bad)


def test_item_ref_reads_updated_time_and_tags():
    made = item_ref(
        'network.port',
        {'id': 'i', 'updated_at': 'u', 'tags': ['b', 'a'], 'project_id': 'p'},
    )
    assert made.updated_at == 'u'
    assert made.tags == ('a', 'b')
    assert item_ref('block_storage.volume', {'id': 'i'}).tags is None
    # kept across regions and through a plan file
    placed = made.in_region('R')
    assert (placed.updated_at, placed.tags) == ('u', ('a', 'b'))
    assert ResourceRef.from_dict(placed.to_dict()).tags == ('a', 'b')
    assert 'tags' not in ResourceRef('k', 'i').to_dict()
