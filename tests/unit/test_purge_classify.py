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

"""consumers.classify: what each consumer of a host's providers is, and whether
it blocks the purge (pure: nova's answers are given)."""

from types import SimpleNamespace

import pytest

from osc_cascade.workflows import consumers
from osc_cascade.workflows.consumers import Found, HostFacts, classify

HOST = 'compute-a'


def server(id_, host, name='vm'):
    return SimpleNamespace(id=id_, name=name, compute_host=host)


def migration(
    uuid, instance, *, status, type_='migration', source=HOST, dest='compute-b'
):
    return SimpleNamespace(
        uuid=uuid,
        server_id=instance,
        status=status,
        migration_type=type_,
        source_compute=source,
        dest_compute=dest,
    )


def facts(servers=(), migrations=()):
    return HostFacts(HOST, {s.id: s for s in servers}, list(migrations))


@pytest.mark.parametrize('force', [False, True])
def test_instance_on_host_blocks_even_when_forced(force):
    verdict = classify('i1', facts([server('i1', HOST, 'web')]), None, force)
    assert verdict.cls == consumers.ON_HOST
    assert verdict.blocks
    assert 'web (i1) is on compute-a' in verdict.detail


def test_instance_found_on_host_by_lookup_blocks():
    # listed after the host listing (a race): the lookup still tells
    verdict = classify('i1', facts(), Found(server=server('i1', HOST)), True)
    assert (verdict.cls, verdict.blocks) == (consumers.ON_HOST, True)


def test_evacuated_instance_is_removed():
    evacuation = migration('m1', 'i1', status='done', type_='evacuation')
    verdict = classify(
        'i1',
        facts(migrations=[evacuation]),
        Found(server=server('i1', 'compute-b')),
        False,
    )
    assert verdict.cls == consumers.EVACUATED
    assert not verdict.blocks
    assert 'evacuated to compute-b (migration m1)' in verdict.detail


def test_evacuation_completed_counts_as_done():
    evacuation = migration('m1', 'i1', status='completed', type_='evacuation')
    verdict = classify(
        'i1',
        facts(migrations=[evacuation]),
        Found(server=server('i1', 'compute-b')),
        False,
    )
    assert verdict.cls == consumers.EVACUATED


def test_evacuation_to_this_host_does_not_explain_an_instance_elsewhere():
    evacuation = migration(
        'm1',
        'i1',
        status='done',
        type_='evacuation',
        source='compute-c',
        dest=HOST,
    )
    verdict = classify(
        'i1',
        facts(migrations=[evacuation]),
        Found(server=server('i1', 'compute-b')),
        False,
    )
    assert (verdict.cls, verdict.blocks) == (consumers.ELSEWHERE, True)


def test_instance_elsewhere_without_evacuation_blocks_unless_forced():
    found = Found(server=server('i1', 'compute-b', 'db'))
    blocked = classify('i1', facts(), found, False)
    forced = classify('i1', facts(), found, True)
    assert (blocked.cls, blocked.blocks) == (consumers.ELSEWHERE, True)
    assert 'db (i1) is on compute-b' in blocked.detail
    assert '--force' in blocked.detail
    assert (forced.cls, forced.blocks) == (consumers.ELSEWHERE, False)


def test_deleted_instance_is_removed():
    verdict = classify('i1', facts(), Found(deleted=True), False)
    assert (verdict.cls, verdict.blocks) == (consumers.DELETED_INSTANCE, False)


@pytest.mark.parametrize('found', [None, Found()])
def test_unknown_consumer_blocks_unless_forced(found):
    blocked = classify('c1', facts(), found, False)
    forced = classify('c1', facts(), found, True)
    assert (blocked.cls, blocked.blocks) == (consumers.UNKNOWN, True)
    assert 'nova knows no instance or migration c1' in blocked.detail
    assert (forced.cls, forced.blocks) == (consumers.UNKNOWN, False)
    assert '(removed: --force)' in forced.detail


@pytest.mark.parametrize('status', sorted(consumers.ENDED))
def test_migration_that_ended_is_removed(status):
    verdict = classify(
        'm1',
        facts(migrations=[migration('m1', 'i1', status=status)]),
        None,
        False,
    )
    assert (verdict.cls, verdict.blocks) == (consumers.MIGRATION_ENDED, False)
    assert f'is {status}' in verdict.detail


def test_unconfirmed_resize_blocks_with_confirm_and_revert_commands():
    verdict = classify(
        'm1',
        facts(
            migrations=[
                migration('m1', 'i1', status='finished', type_='resize')
            ]
        ),
        None,
        False,
    )
    assert (verdict.cls, verdict.blocks) == (consumers.NOT_CONFIRMED, True)
    assert 'resize m1 of instance i1 (compute-a -> compute-b)' in (
        verdict.detail
    )
    assert '`openstack server resize confirm i1`' in verdict.detail
    assert '`openstack server resize revert i1`' in verdict.detail


def test_unconfirmed_migration_is_removed_when_forced():
    verdict = classify(
        'm1',
        facts(migrations=[migration('m1', 'i1', status='finished')]),
        None,
        True,
    )
    assert (verdict.cls, verdict.blocks) == (consumers.NOT_CONFIRMED, False)


def test_live_migration_in_progress_blocks_with_abort_command():
    verdict = classify(
        'm1',
        facts(
            migrations=[
                migration('m1', 'i1', status='running', type_='live-migration')
            ]
        ),
        None,
        False,
    )
    assert (verdict.cls, verdict.blocks) == (consumers.MIGRATING, True)
    assert 'server migration abort i1 m1' in verdict.detail


def test_instance_with_migration_in_progress_is_that_migration():
    # a live migration to this host: the instance holds the destination
    active = migration(
        'm1',
        'i1',
        status='running',
        type_='live-migration',
        source='compute-b',
        dest=HOST,
    )
    verdict = classify(
        'i1',
        facts(migrations=[active]),
        Found(server=server('i1', 'compute-b')),
        False,
    )
    assert (verdict.cls, verdict.blocks) == (consumers.MIGRATING, True)
    assert 'm1' in verdict.detail


def test_cold_migration_in_progress_points_to_the_migration_list():
    verdict = classify(
        'm1',
        facts(migrations=[migration('m1', 'i1', status='pre-migrating')]),
        None,
        False,
    )
    assert verdict.cls == consumers.MIGRATING
    assert 'openstack server migration list --server i1' in verdict.detail
