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

"""The Swift containers ``cluster force-delete --delete-leftovers`` finds
(issue #29): one Heat's own delete would refuse (not empty, no
PurgeOnDelete) is kept, and so is one re-created under the stack's name
since the manifest was written."""

import json

import pytest

from osc_cascade.workflows import clusters
from tests.unit import scenarios
from tests.unit.fakes.clock import FakeClock
from tests.unit.fakes.clouds import FakeHeatCloud
from tests.unit.fakes.common import catalog
from tests.unit.fakes.object_store import ObjectStore
from tests.unit.test_cluster_force_delete import (
    find,
    force,
    read_json,
    resumer,
)

HEAT = clusters.HeatStacks()
CONTAINER = 'OS::Swift::Container'


class HeatSwiftCloud(ObjectStore, FakeHeatCloud):
    endpoints = catalog(*FakeHeatCloud.endpoints, 'object-store')


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with HeatSwiftCloud() as c:
        yield c


@pytest.fixture
def clock():
    return FakeClock(yields=True)


def bucket(cloud, *, objects=0, purge=None, name='bucket-1'):
    """A stack whose template makes container ``name``, with ``objects``
    objects and PurgeOnDelete ``purge`` (not said when None)."""
    project = scenarios.project(cloud, 'tenant')
    stack = cloud.stack('app', project['id'], on_delete='hang')
    container = cloud.container(project['id'], name, objects=objects)
    cloud.resource(stack, 'bucket', CONTAINER, name)
    if purge is not None:
        stack['template']['resources']['bucket']['properties'] = {
            'PurgeOnDelete': purge
        }
    return project, stack, container


def force_delete(cloud, clock, **options):
    engine = force(cloud, clock, service=HEAT, **options)
    return engine.run(engine.preview(find(cloud, 'app', HEAT)))


# -- Heat's delete refuses a container that is not empty ----------------------


def test_a_container_with_objects_and_no_purge_on_delete_is_kept(cloud, clock):
    _project, _stack, container = bucket(cloud, objects=3)
    outcome = force_delete(cloud, clock, delete_leftovers=True)
    assert cloud.exists('containers', container['id'])
    assert len(container['objects']) == 3
    assert outcome.leftovers == {
        f'{CONTAINER} bucket-1': 'kept: container bucket-1 holds 3 objects '
        'and the template does not purge it on delete (PurgeOnDelete)'
    }
    assert not outcome.ok


@pytest.mark.parametrize('purge', [True, 'true', 'yes'])
def test_a_container_the_template_purges_is_emptied_then_deleted(
    cloud, clock, purge
):
    _project, _stack, container = bucket(cloud, objects=3, purge=purge)
    outcome = force_delete(cloud, clock, delete_leftovers=True)
    assert not cloud.exists('containers', container['id'])
    assert outcome.leftovers == {f'{CONTAINER} bucket-1': 'deleted'}
    assert outcome.ok


def test_an_empty_container_goes_without_purge_on_delete(cloud, clock):
    _project, _stack, container = bucket(cloud, purge=False)
    outcome = force_delete(cloud, clock, delete_leftovers=True)
    assert not cloud.exists('containers', container['id'])
    assert outcome.ok


def test_purge_on_delete_from_a_parameter_is_read(cloud, clock):
    _project, stack, container = bucket(
        cloud, objects=1, purge={'get_param': 'purge'}
    )
    stack['template']['parameters'] = {
        'purge': {'type': 'boolean', 'default': True}
    }
    outcome = force_delete(cloud, clock, delete_leftovers=True)
    assert not cloud.exists('containers', container['id'])
    assert outcome.ok


def test_a_stack_being_deleted_does_not_say_whether_it_purges(cloud, clock):
    """Heat's delete went for the container (DELETE_FAILED: it was not
    empty) and swapped in an empty template: whether it purges is not
    known, so a container with objects is kept."""
    _project, stack, container = bucket(cloud, objects=2, purge=True)
    stack.update(stack_status='DELETE_FAILED', emptied=True)
    [res] = cloud.resources_of(stack['id'])
    res['resource_status'] = 'DELETE_FAILED'
    outcome = force_delete(cloud, clock, delete_leftovers=True)
    assert cloud.exists('containers', container['id'])
    assert outcome.leftovers[f'{CONTAINER} bucket-1'] == (
        'kept: container bucket-1 holds 2 objects and the template, which '
        'says whether Heat empties it on delete (PurgeOnDelete), is not known'
    )


# -- a resume: the container of the manifest, not a namesake made since -------


def abandoned(cloud, clock, **bucket_args):
    """The stack abandoned without its leftovers: the manifest's path."""
    project, _stack, container = bucket(cloud, **bucket_args)
    outcome = force_delete(cloud, clock)
    assert outcome.result == 'abandoned'
    return project, container, outcome.manifest


def resume(cloud, clock, path):
    engine = resumer(cloud, clock)
    return engine.resume(engine.load(path))


def test_a_resume_deletes_the_container_the_manifest_lists(cloud, clock):
    _project, container, path = abandoned(cloud, clock)
    [res] = read_json(path)['resources']
    assert res['incarnation'] == ' '.join(
        container['headers'][h] for h in ('X-Timestamp', 'X-PUT-Timestamp')
    )
    outcome = resume(cloud, clock, path)
    assert outcome.leftovers == {f'{CONTAINER} bucket-1': 'deleted'}
    assert not cloud.exists('containers', container['id'])


def test_a_resume_keeps_a_container_re_created_since_the_manifest(
    cloud, clock
):
    project, container, path = abandoned(cloud, clock)
    cloud._remove('containers', container['id'])
    again = cloud.container(project['id'], 'bucket-1', objects=0)
    engine = resumer(cloud, clock)
    manifest = engine.load(path)
    why = (
        'kept: container bucket-1 was re-created since the manifest was '
        f'written (created {again["headers"]["X-Timestamp"]}, the manifest '
        f'says {container["headers"]["X-Timestamp"]})'
    )
    actions = dict((r.key, a) for r, a in engine.pending_actions(manifest))
    assert actions == {f'{CONTAINER} bucket-1': f'nothing: {why}'}
    outcome = engine.resume(manifest)
    assert cloud.exists('containers', again['id'])
    assert outcome.leftovers == {f'{CONTAINER} bucket-1': why}
    assert not outcome.ok


def test_a_resume_keeps_a_container_put_again_since_the_manifest(cloud, clock):
    """Swift keeps a deleted container's creation time while its database
    waits to be reclaimed: a container re-created then says only a new
    X-PUT-Timestamp."""
    _project, container, path = abandoned(cloud, clock)
    container['headers']['X-PUT-Timestamp'] = '1796000000.00000'
    outcome = resume(cloud, clock, path)
    assert cloud.exists('containers', container['id'])
    assert outcome.leftovers == {
        f'{CONTAINER} bucket-1': 'kept: container bucket-1 was PUT again '
        'since the manifest was written (last PUT 1796000000.00000, '
        f'the manifest says {container["headers"]["X-Timestamp"]}): it may '
        'have been deleted and re-created'
    }
    assert not outcome.ok


def test_a_manifest_that_does_not_say_which_container_keeps_it(cloud, clock):
    _project, container, path = abandoned(cloud, clock)
    data = read_json(path)
    for res in data['resources']:
        res.pop('incarnation')  # written before this was recorded
    with open(path, 'w') as f:
        json.dump(data, f)
    outcome = resume(cloud, clock, path)
    assert cloud.exists('containers', container['id'])
    assert outcome.leftovers == {
        f'{CONTAINER} bucket-1': 'kept: container bucket-1: the manifest '
        'does not say when the stack\'s was created, so it may be another '
        'made since under its name'
    }


def test_a_namesake_in_another_account_is_not_touched(cloud, clock):
    _project, container, path = abandoned(cloud, clock)
    cloud._remove('containers', container['id'])
    other = scenarios.project(cloud, 'other')
    theirs = cloud.container(other['id'], 'bucket-1', objects=1)
    outcome = resume(cloud, clock, path)
    assert cloud.exists('containers', theirs['id'])
    assert outcome.leftovers == {f'{CONTAINER} bucket-1': 'already gone'}


# -- the command --------------------------------------------------------------


def test_the_command_ends_1_with_the_unpurged_container_said(cloud, osc):
    _project, stack, container = bucket(cloud, objects=3)
    result = osc(
        'cluster', 'force-delete', '--stack', stack['id'], '--yes',
        '--delete-leftovers', '--grace', '0', '-f', 'json',
    )  # fmt: skip
    assert result.code == 1
    assert (
        f'{CONTAINER} bucket-1: kept: container bucket-1 holds 3 objects '
        'and the template does not purge it on delete (PurgeOnDelete)'
    ) in result.stderr, result.stderr
    [row] = json.loads(result.stdout)
    assert row['Leftovers Not Deleted'] == 1
    assert cloud.exists('containers', container['id'])


def test_the_resume_ends_1_with_the_re_created_container_said(
    cloud, clock, osc
):
    project, container, path = abandoned(cloud, clock)
    cloud._remove('containers', container['id'])
    again = cloud.container(project['id'], 'bucket-1')
    result = osc(
        'cluster', 'force-delete', '--delete-leftovers', '--manifest', path,
        '--yes',
    )  # fmt: skip
    assert result.code == 1
    assert (
        f'{CONTAINER} bucket-1: kept: container bucket-1 was re-created '
        'since the manifest was written'
    ) in result.stderr, result.stderr
    assert cloud.exists('containers', again['id'])


def test_swifts_proxy_says_when_a_container_was_put_in_last_modified():
    """Swift's proxy does not pass on the container server's
    X-PUT-Timestamp; its Last-Modified is the last PUT's time, which moves
    when a container is re-created under its name (the minicloud's Swift:
    X-Timestamp stayed, Last-Modified moved)."""
    from osc_cascade.workflows.clusters.records import StackResource
    from osc_cascade.workflows.force_delete import containers

    first = {
        'X-Timestamp': '1795849059.17942',
        'Last-Modified': 'Sat, 28 Nov 2026 06:57:40 GMT',
    }
    again = {**first, 'Last-Modified': 'Sat, 28 Nov 2026 06:57:42 GMT'}
    recorded = containers.incarnation(first)
    assert recorded == '1795849059.17942 Sat, 28 Nov 2026 06:57:40 GMT'
    res = StackResource(
        stack='app',
        stack_id='s1',
        name='bucket',
        type=containers.CONTAINER,
        physical_id='bucket',
        project_id='p1',
        status='CREATE_COMPLETE',
        incarnation=recorded,
    )
    assert containers.changed(res, first) == ''
    assert containers.changed(res, again) == (
        'kept: container bucket was PUT again since the manifest was '
        'written (last PUT Sat, 28 Nov 2026 06:57:42 GMT, the manifest says '
        'Sat, 28 Nov 2026 06:57:40 GMT): it may have been deleted and '
        're-created'
    )
    assert containers.incarnation({'X-Timestamp': '1'}) == ''
