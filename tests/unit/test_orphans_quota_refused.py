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

"""The orphan search where a quota listing is refused: Barbican 18
(2024.1) lets its service admin alone list project quotas, so an admin's
search was refused whole. An unreadable quota listing is a note: the
other orphans are found and purged as before, the quota rows stay."""

import json

from tests.unit import scenarios, test_cascade_all_services

BARBICAN_QUOTAS = r'/v1/project-quotas'


#: every service's fake, Barbican's quotas among them
cloud = test_cascade_all_services.cloud


def gone_project(cloud, external):
    gone = scenarios.full_project(cloud, 'gone', external)
    gone_id = gone['project']['id']
    cloud.set_quota('barbican', gone_id, secrets=5)
    cloud.set_quota('nova', gone_id, instances=7)
    cloud.db['projects'].pop(gone_id)
    # the users Keystone lists (the application credentials' owners)
    cloud.add('domains', id='default', name='Default')
    cloud.add('users', id='user-gone', name='gone-user')
    return gone_id


def test_a_refused_quota_listing_is_a_note_and_the_search_goes_on(
    cloud, external, osc
):
    gone_id = gone_project(cloud, external)
    found = osc('orphan', 'list', '-f', 'json')
    assert found.code == 0, found.stderr
    everything = {(r['Kind'], r['ID']) for r in json.loads(found.stdout)}
    assert ('quota.key_manager', gone_id) in everything

    cloud.forbidden.add(BARBICAN_QUOTAS)
    refused = osc('orphan', 'list', '-f', 'json')

    assert refused.code == 0, refused.stderr
    rows = {(r['Kind'], r['ID']) for r in json.loads(refused.stdout)}
    # exactly one row less: the one it could not read
    assert rows == everything - {('quota.key_manager', gone_id)}
    assert (
        'quota.key_manager not listed in RegionOne: listing '
        'quota.key_manager of all projects in RegionOne was refused '
        '(HTTP 403)'
    ) in refused.stderr


def test_a_purge_with_a_refused_quota_listing_deletes_the_rest_alone(
    cloud, external, osc
):
    gone_id = gone_project(cloud, external)
    live = scenarios.full_project(cloud, 'live', external)
    live_before = cloud.owned_by(live['project']['id'])
    cloud.forbidden.add(BARBICAN_QUOTAS)

    # by ID: Nova's quota sets are found for a project named alone
    result = osc('orphan', 'purge', '--yes', '--project', gone_id)

    assert result.code == 0, result.stderr
    assert 'quota.key_manager not listed' in result.stderr
    assert cloud.owned_by(gone_id) == []
    assert not cloud.has_quota('nova', gone_id)
    # the row it could not list is not touched
    assert cloud.has_quota('barbican', gone_id)
    assert cloud.owned_by(live['project']['id']) == live_before


def test_a_refused_listing_of_any_other_kind_still_refuses_the_search(
    cloud, external, osc
):
    gone_project(cloud, external)
    cloud.forbidden.add(r'/v2/images($|\?)')
    result = osc('orphan', 'purge', '--yes')
    assert result.code != 0
    assert 'Nothing was deleted' in result.stderr


def test_the_fake_nova_refuses_a_deleted_projects_quotas_but_their_delete(
    cloud,
):
    # as nova's identity.verify_project_id, seen on the minicloud (issue
    # 31): 400 to a read or a set, the DELETE taken
    pid = scenarios.project(cloud, 'gone')['id']
    cloud.set_quota('nova', pid, instances=7)
    cloud.db['projects'].pop(pid)
    nova = cloud.connection().compute
    for method, path in (
        ('GET', f'/os-quota-sets/{pid}'),
        ('GET', f'/os-quota-sets/{pid}/defaults'),
        ('PUT', f'/os-quota-sets/{pid}'),
    ):
        answer = nova.request(
            path,
            method,
            json={'quota_set': {'instances': 1}} if method == 'PUT' else None,
            raise_exc=False,
        )
        assert answer.status_code == 400, (method, path)
        assert f'Project ID {pid} is not a valid project.' in answer.text
    assert nova.delete(f'/os-quota-sets/{pid}').status_code == 204
    assert not cloud.has_quota('nova', pid)
