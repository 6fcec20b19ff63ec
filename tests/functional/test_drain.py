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

"""The drain on the minicloud (issue #15): a member token that Neutron
cached before the drain creates nothing after it; a run killed after the
drain is restored value for value; the sweep takes a project drained long
ago and leaves a fresh one; a protected project is refused by the cascade
and by Keystone alike; ``--settle`` deletes what a cached token created
after the project was gone.

The tests print their figures (``pytest -s``): the race's timeline and
the quotas recorded, frozen and restored per service.

Neutron runs one API worker on the minicloud, whose keystonemiddleware
keeps a validated token in memory for ``token_cache_time`` (300 s, the
default): a token used once before the drain is still accepted after it.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import time
import uuid

import openstack
import pytest
import requests

from tests.functional.conftest import ADMIN_CLOUD, openstack_bin
from tests.functional.topology import make_project, scoped, unique, wait_for

pytestmark = pytest.mark.functional

REGIONS = ('RegionOne', 'RegionTwo')


class Timeline:
    def __init__(self, title):
        self.title = title
        self.start = time.monotonic()
        self.lines = []

    def __call__(self, what):
        at = time.monotonic() - self.start
        stamp = datetime.datetime.now(datetime.UTC).strftime('%H:%M:%S.%f')
        self.lines.append(f'  {stamp[:-3]}Z  +{at:6.2f}s  {what}')

    def print(self):
        print(f'\n{self.title}')
        print('\n'.join(self.lines))


class Member:
    """A user with the member role on the project, and tokens scoped to
    it that are used as they are (never re-scoped or renewed)."""

    def __init__(self, admin, project):
        self.admin = admin
        self.project = project
        self.password = uuid.uuid4().hex
        self.user = admin.identity.create_user(
            name=unique('drain-member'),
            password=self.password,
            domain_id='default',
        )
        role = admin.identity.find_role('member')
        admin.identity.assign_project_role_to_user(project, self.user, role)

    def token(self) -> str:
        """A new token scoped to the project."""
        auth = self.admin.config.config['auth']
        conn = openstack.connect(
            auth_url=auth['auth_url'],
            username=self.user.name,
            password=self.password,
            user_domain_id='default',
            project_id=self.project.id,
            region_name='RegionOne',
            identity_api_version='3',
        )
        return conn.session.get_token()

    def delete(self):
        self.admin.identity.delete_user(self.user, ignore_missing=True)


def endpoint(admin, service, suffix):
    url = admin.endpoint_for(service, region_name='RegionOne').rstrip('/')
    return url if url.endswith(suffix) else url + suffix


def call(method, url, token, body=None):
    """One request with exactly this token: (status, short message)."""
    answer = requests.request(
        method,
        url,
        json=body,
        headers={'X-Auth-Token': token},
        timeout=60,
    )
    try:
        data = answer.json()
    except ValueError:
        data = answer.text
    if answer.status_code >= 400:
        error = (
            data.get('NeutronError') or data.get('error') or data
            if isinstance(data, dict)
            else data
        )
        if isinstance(error, dict):
            error = error.get('type', '') + ' ' + str(error.get('message'))
        return answer.status_code, str(error).strip()[:160], data
    return answer.status_code, 'ok', data


def project_body(admin, project_id):
    answer = admin.identity.get(f'/projects/{project_id}')
    if answer.status_code == 404:
        return None
    answer.raise_for_status()
    return answer.json()['project']


def owned_by(admin, project_id):
    """What the project owns in Neutron in every region, by unfiltered
    admin listings filtered here (a listing filtered by project would make
    Neutron create its default security group)."""
    found = []
    for region in REGIONS:
        conn = openstack.connect(cloud=ADMIN_CLOUD, region_name=region)
        for kind, items in (
            ('network', conn.network.networks()),
            ('subnet', conn.network.subnets()),
            ('port', conn.network.ports()),
            ('security_group', conn.network.security_groups()),
        ):
            found.extend(
                (region, kind, o.id, o.name)
                for o in items
                if o.project_id == project_id
            )
    return found


def run_json(cli, *args):
    result = cli(*args, '-f', 'json')
    assert result.code == 0, result.stdout + result.stderr
    return result.json()


def sweep(cli, *args):
    result = cli('project', 'sweep', *args)
    assert result.code == 0, result.stdout + result.stderr
    return result


# -- 1. the race ---------------------------------------------------------


def test_a_token_neutron_cached_before_the_drain_creates_nothing(admin, cli):
    project = make_project(admin, unique('drain-race'))
    member = Member(admin, project)
    log = Timeline(f'The race, project {project.id}:')
    networks = endpoint(admin, 'network', '/v2.0') + '/networks'
    try:
        cached, unseen = member.token(), member.token()
        assert cached != unseen
        status, message, _ = call('GET', networks, cached)
        assert status == 200, message
        log(f'member token A first used on Neutron: GET networks -> {status}')
        status, message, made = call(
            'POST', networks, cached, {'network': {'name': 'before-drain'}}
        )
        assert status == 201, message
        log(f'token A: POST network before the drain -> {status} (created)')

        drained = cli('project', 'drain', project.id, '-f', 'json')
        assert drained.code == 0, drained.stdout + drained.stderr
        log(
            'drain landed (`project drain` returned: disabled, quotas '
            'frozen, recorded)'
        )
        body = project_body(admin, project.id)
        assert body['enabled'] is False
        assert body['cascade_state'] == 'drained'

        status, message, _ = call('GET', networks, cached)
        log(f'token A after the drain: GET networks -> {status} {message}')
        # the token is still accepted by Neutron: its cache holds it
        assert status == 200, (
            'Neutron no longer accepts the cached token: the race is not '
            f'exercised ({status} {message})'
        )
        before = {n[2] for n in owned_by(admin, project.id)}
        for kind, body_ in (
            ('network', {'network': {'name': 'after-drain'}}),
            ('security-group', {'security_group': {'name': 'after-drain'}}),
        ):
            status, message, _ = call(
                'POST',
                networks.replace('/networks', f'/{kind}s'),
                cached,
                body_,
            )
            log(f'token A after the drain: POST {kind} -> {status} {message}')
            assert status in (401, 409), (status, message)
        assert status == 409  # the quota refused it, not the token
        status, message, _ = call(
            'POST', networks, unseen, {'network': {'name': 'unseen'}}
        )
        log(
            'token B (never shown to Neutron) after the drain: POST network '
            f'-> {status} {message}'
        )
        assert status == 401, (status, message)
        after = {n[2] for n in owned_by(admin, project.id)}
        assert after == before, 'a network was created after the drain'

        result = cli('project', 'delete', '--cascade', '--yes', project.id)
        assert result.code == 0, result.stdout + result.stderr
        returned = time.monotonic()
        log('cascade returned (exit 0)')
        assert project_body(admin, project.id) is None

        time.sleep(max(0.0, returned + 10 - time.monotonic()))
        left = owned_by(admin, project.id)
        orphans = run_json(cli, 'orphan', 'list', '--project', project.id)
        log(
            f'check 10 s after: {len(left)} network resource(s) of the '
            f'project in {"/".join(REGIONS)}, {len(orphans)} orphan(s)'
        )
        assert left == []
        # the freeze outlives the project (issue 29 item 8): its quota rows
        # stay at 0 until a later purge releases them, and nothing else
        assert [o for o in orphans if not o['Kind'].startswith('quota.')] == []
        assert made['network']['id'] not in {n[2] for n in left}
    finally:
        member.delete()
        log.print()


# -- 2. a run killed after the drain, then restore -----------------------

CUSTOM = {
    'compute': {'instances': 7},
    'network': {'network': 9},
    'block-storage': {'volumes': 4},
}


def a_volume(admin, project, name):
    """A 1 GB volume of the project, available."""
    conn = scoped(admin, project)
    volume = conn.block_storage.create_volume(name=name, size=1)
    wait_for(
        lambda: conn.block_storage.get_volume(volume.id).status == 'available',
        timeout=120,
        what='volume',
    )


def quotas(admin, service, project_id, region='RegionOne'):
    """The quota values in force, as each service's API names them."""
    conn = openstack.connect(cloud=ADMIN_CLOUD, region_name=region)
    if service == 'network':
        found = conn.network.get(f'/quotas/{project_id}').json()['quota']
    else:
        api = conn.compute if service == 'compute' else conn.block_storage
        found = api.get(f'/os-quota-sets/{project_id}').json()['quota_set']
    return {k: v for k, v in found.items() if isinstance(v, int)}


def test_a_run_killed_after_the_drain_is_restored(admin, cli):
    project = make_project(admin, unique('drain-restore'))
    admin.set_compute_quotas(project.id, **CUSTOM['compute'])
    admin.set_network_quotas(project.id, **CUSTOM['network'])
    admin.set_volume_quotas(project.id, **CUSTOM['block-storage'])
    # usage, so that Cinder's freeze (at usage) is seen above zero
    a_volume(admin, project, 'in-use')
    set_before = {s: quotas(admin, s, project.id) for s in CUSTOM}
    two_before = quotas(admin, 'network', project.id, 'RegionTwo')
    for service, values in CUSTOM.items():
        for key, value in values.items():
            assert set_before[service][key] == value

    # "a run killed right after the drain": the drain alone leaves the
    # record, as a cascade killed after its stage 1 does
    drained = cli('project', 'drain', project.id)
    assert drained.code == 0, drained.stdout + drained.stderr
    shown = run_json(cli, 'project', 'show', project.id)
    assert shown['enabled'] is False
    assert shown['cascade_state'] == 'drained'
    record = json.loads(shown['cascade_drain'])
    assert record['enabled'] is True
    regions = record['quotas']
    assert set(regions) == set(REGIONS)  # Neutron runs in both
    one = regions['RegionOne']
    assert {'compute', 'network', 'block-storage'} <= set(one)
    for service, values in CUSTOM.items():
        assert one[service]['state'] == 'frozen'
        # the project's own values, and only those
        assert one[service]['before'] == values, service
    assert regions['RegionTwo']['network']['before'] == {}

    frozen_now = {s: quotas(admin, s, project.id) for s in CUSTOM}
    assert set(frozen_now['compute'].values()) == {0}
    assert all(
        v == 0
        for k, v in frozen_now['network'].items()
        if k in one['network']['frozen']
    )
    assert frozen_now['block-storage']['volumes'] == 1  # its usage
    assert frozen_now['block-storage']['gigabytes'] >= 1
    assert (
        frozen_now['block-storage']['per_volume_gigabytes']
        == set_before['block-storage']['per_volume_gigabytes']
    )
    two = quotas(admin, 'network', project.id, 'RegionTwo')
    assert set(two[k] for k in regions['RegionTwo']['network']['frozen']) == {
        0
    }

    restored = cli('project', 'restore', project.id, '-f', 'json')
    assert restored.code == 0, restored.stdout + restored.stderr
    after = {s: quotas(admin, s, project.id) for s in CUSTOM}
    assert after == set_before
    assert quotas(admin, 'network', project.id, 'RegionTwo') == two_before
    body = project_body(admin, project.id)
    assert body['enabled'] is True
    assert 'cascade_drain' not in body or body['cascade_drain'] is None
    assert 'cascade_state' not in body or body['cascade_state'] is None

    print(
        f'\nQuotas of project {project.id} (RegionOne): '
        'recorded (own) / frozen (read back) / restored (read back)'
    )
    for service in CUSTOM:
        keys = sorted(
            set(CUSTOM[service])
            | {
                'cores',
                'ram',
                'subnet',
                'port',
                'security_group',
                'gigabytes',
                'snapshots',
                'per_volume_gigabytes',
            }
            & set(set_before[service])
        )
        for key in keys:
            print(
                f'  {service:14} {key:22} '
                f'{one[service]["before"].get(key, "(default)")!s:>10} '
                f'{frozen_now[service][key]:>7} {after[service][key]:>9}'
            )
    print(
        '  network in RegionTwo: recorded {} (defaults only), frozen to 0, '
        'restored to the defaults'
    )


# -- 3. the sweep --------------------------------------------------------

#: the "long ago" the test writes in a record, and the sweep's age: far
#: beyond any real drain, so that a sweep --yes on a shared cloud takes
#: only what a test marked
LONG_AGO = '2001-01-01T00:00:00Z'
OLDER_THAN = '3650d'


def mark_long_ago(admin, project):
    """Set the mark: the project was drained long ago."""
    record = json.loads(project_body(admin, project.id)['cascade_drain'])
    record['drained_at'] = LONG_AGO
    admin.identity.patch(
        f'/projects/{project.id}',
        json={'project': {'cascade_drain': json.dumps(record)}},
    ).raise_for_status()


def test_the_sweep_takes_a_project_drained_long_ago_and_leaves_a_fresh_one(
    admin, cli
):
    """Both drained at once: Keystone's list of the disabled projects is
    cut at its list_limit (2 on the minicloud) and says truncated; the
    sweep reads it page by page and still finds every drained project."""
    old = make_project(admin, unique('drain-old'))
    fresh = make_project(admin, unique('drain-fresh'))
    for project in (old, fresh):
        result = cli('project', 'drain', project.id)
        assert result.code == 0, result.stdout + result.stderr
    mark_long_ago(admin, old)
    cut = admin.identity.get('/projects', params={'enabled': 'false'}).json()
    assert cut.get('truncated') is True, cut  # the case list_limit makes

    listed = json.loads(sweep(cli, '--older-than', '1d', '-f', 'json').stdout)
    ids = {row['ID']: row for row in listed}
    assert ids[old.id]['Result'] == 'due: deleted with --execute'
    assert ids[old.id]['Drained At'] == LONG_AGO
    assert fresh.id not in ids  # drained a moment ago
    assert project_body(admin, old.id) is not None  # dry

    swept = sweep(cli, '--older-than', OLDER_THAN, '--execute', '--yes')
    assert f'({old.id}): deleted' in swept.stderr, swept.stderr
    assert fresh.id not in swept.stdout + swept.stderr
    assert project_body(admin, old.id) is None
    body = project_body(admin, fresh.id)
    assert body['enabled'] is False
    assert body['cascade_state'] == 'drained'
    print(f'\nThe sweep --execute --yes: {swept.stderr.strip()}')

    restored = cli('project', 'restore', fresh.id)
    assert restored.code == 0, restored.stdout + restored.stderr
    assert project_body(admin, fresh.id)['enabled'] is True


# -- 4. protected --------------------------------------------------------


def test_a_protected_project_is_refused_by_the_cascade_and_by_keystone(
    admin, cli
):
    project = make_project(admin, unique('drain-protected'))
    result = cli('project', 'set', '--immutable', project.id)
    assert result.code == 0, result.stdout + result.stderr
    try:
        cascade = cli('project', 'delete', '--cascade', '--yes', project.id)
        assert cascade.code == 1, cascade.stdout + cascade.stderr
        lines = cascade.stderr.strip().splitlines()
        assert len(lines) == 1, cascade.stderr
        assert (
            f"unprotect it with 'openstack project set --no-immutable "
            f"{project.id}' first" in lines[0]
        )
        plain = cli('project', 'delete', project.id)
        assert plain.code == 1, plain.stdout + plain.stderr
        body = project_body(admin, project.id)
        assert body is not None
        assert body['enabled'] is True  # the cascade did not drain it
        assert 'cascade_drain' not in body
        print(f'\nProtected: cascade: {lines[0]}')
        print(f'Protected: plain delete: {plain.stderr.strip()}')
    finally:
        result = cli('project', 'set', '--no-immutable', project.id)
        assert result.code == 0, result.stdout + result.stderr


# -- 5. settle -----------------------------------------------------------


def test_the_settle_deletes_what_a_cached_token_made_after_the_delete(
    admin, cli
):
    """Glance has no per-project quota to freeze (no unified limits on
    the minicloud): a token it cached before the drain still creates an
    image after the project is gone, which the settle deletes. Neutron's
    quotas stay frozen through the settle: a network is refused. Cinder's,
    frozen at the usage of the project's volume, followed its delete down
    to 0."""
    project = make_project(admin, unique('drain-settle'))
    a_volume(admin, project, 'data')
    member = Member(admin, project)
    log = Timeline(f'The settle, project {project.id}:')
    images = endpoint(admin, 'image', '/v2') + '/images'
    networks = endpoint(admin, 'network', '/v2.0') + '/networks'
    proc = None
    try:
        token = member.token()
        for url in (images, networks):
            status, message, _ = call('GET', url, token)
            assert status == 200, message
        log('member token used on Glance and Neutron')
        proc = subprocess.Popen(
            [
                openstack_bin(),
                '--os-cloud',
                ADMIN_CLOUD,
                'project',
                'delete',
                '--cascade',
                '--yes',
                '--settle',
                '20s',
                project.id,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        wait_for(
            lambda: project_body(admin, project.id) is None,
            timeout=300,
            interval=0.3,
            what='the project deleted',
        )
        log('project deleted (the cascade settles)')
        assert proc.poll() is None, 'the cascade ended before its settle'
        cinder = quotas(admin, 'block-storage', project.id)
        log(
            "Cinder's quotas of the deleted project during the settle: "
            f"volumes={cinder['volumes']} gigabytes={cinder['gigabytes']} "
            "(the drain froze them at the usage of its 1 GB volume)"
        )
        assert {
            v for k, v in cinder.items() if k != 'per_volume_gigabytes'
        } == {0}, cinder
        status, message, image = call(
            'POST', images, token, {'name': 'after-delete'}
        )
        log(f'token: POST image after the delete -> {status} {message}')
        assert status == 201, (status, message)
        status, message, _ = call(
            'POST', networks, token, {'network': {'name': 'after-delete'}}
        )
        log(f'token: POST network after the delete -> {status} {message}')
        assert status in (401, 409), (status, message)
        stdout, stderr = proc.communicate(timeout=600)
        log(f'cascade returned (exit {proc.returncode})')
        assert proc.returncode == 0, stdout + stderr
        assert 'settle' in stdout + stderr
        answer = admin.image.get(f'/images/{image["id"]}')
        log(f'the image after the cascade: GET -> {answer.status_code}')
        assert answer.status_code == 404, answer.text
        assert owned_by(admin, project.id) == []
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        member.delete()
        log.print()
