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

"""A real Magnum record (issues #31, #36): Magnum's api and conductor with
the Cluster API driver magnum-capi-helm, and no management cluster
(``tools/minicloud up --with magnum``).

A user makes a cluster template and a cluster as users do; the driver
names the cluster's Helm release (its ``stack_id``) and fails at its
first call to the management cluster: the record stays CREATE_FAILED,
the stuck cluster of a cloud whose management cluster is gone. The
cluster's footprint is made as its controllers make it, in the release's
Cluster API namespace ``<namespace_prefix>-<project>`` (the minicloud's
``namespace_prefix`` is not the default): CAPO's network, subnet, router,
security group, a machine's port with its trunk and its server, and the
driver's application credential; beside it, what is not the cluster's.
``openstack cluster force-delete`` deletes the footprint and asks Magnum
to delete the record, and says what Magnum answered.

A project's cluster templates (issue #31): its private template goes
with it; its public templates are kept, one because another project's
cluster uses it (Magnum refuses its delete), one because any project may,
until ``--delete-shared`` asks for them. A project's own Magnum quota
goes with it.
"""

from __future__ import annotations

import secrets

import openstack
import pytest

from osc_cascade.kinds.paging import pages
from osc_cascade.workflows import clusters
from osc_cascade.workflows.force_delete import capi
from tests.functional import topology
from tests.functional.conftest import (
    ADMIN_CLOUD,
    service_database,
    service_proxy,
)
from tests.functional.members import Member, member_credential
from tests.functional.topology import cascade, unique, wait_for

pytestmark = [pytest.mark.functional, pytest.mark.magnum]

#: tools/minicloud_lib/minicloud/services/magnum.py NAMESPACE_PREFIX
PREFIX = 'mc-magnum'
MAGNUM = clusters.MagnumClusters()

magnum = service_proxy(
    'container-infra', 'Magnum', 'container_infrastructure_management'
)


def at(microversion: str):
    """The admin's connection at a Magnum microversion."""
    return openstack.connect(
        cloud=ADMIN_CLOUD,
        container_infrastructure_management_default_microversion=(
            microversion
        ),
    )


def made_by_driver(conn, cluster_id: str) -> dict:
    """The cluster once its driver gave up: CREATE_FAILED (a missing
    management cluster), its stack_id the Helm release's name."""

    def failed():
        # the conductor makes the record: a 404 until it has, and a 400
        # until it made its node groups (Magnum counts master_count 0 from
        # them, which its own view refuses)
        got = conn.get(f'/clusters/{cluster_id}')
        if got.status_code in (400, 404):
            return None
        assert got.status_code == 200, got.text
        return got.json() if got.json()['status'] == 'CREATE_FAILED' else None

    return wait_for(failed, timeout=180, what='the cluster CREATE_FAILED')


def magnum_database():
    """Magnum's database, as its config names it (MINICLOUD_HOME's)."""
    return service_database(
        'magnum/magnum.conf',
        'database',
        'to remove a record as an operator',
    )


def operator_removes(cluster_id: str) -> int:
    """What only an operator can do with a record its driver cannot
    delete (the command says so): its rows, from Magnum's database."""
    db = magnum_database()
    with db, db.cursor() as cur:
        cur.execute(
            'DELETE FROM nodegroup WHERE cluster_id = %s', (cluster_id,)
        )
        removed = cur.execute(
            'DELETE FROM cluster WHERE uuid = %s', (cluster_id,)
        )
        db.commit()
    return removed


def user_cluster(admin, conn, ids, driver: str, name='prod'):
    """(image, cluster) that a user made with a template of ``driver``,
    once the driver gave up."""
    image = conn.image.create_image(
        name=unique('ubuntu-k8s'),
        disk_format='raw',
        container_format='bare',
        data=b'\0' * 1024,
        # both drivers' Ubuntu image with its Kubernetes version; both
        # provide Ubuntu: the image names its driver
        properties={
            'os_distro': 'ubuntu',
            'kube_version': 'v1.31.1',
            'magnum_driver': driver,
        },
    )
    mgm = conn.container_infrastructure_management
    template = make_template(admin, mgm, image.id, ids['flavor'], driver)
    return image.id, user_made(mgm, template, name)


def make_template(admin, mgm, image_id, flavor_id, name, public=False):
    """A Kubernetes template's uuid, made through ``mgm`` (a public one:
    Magnum's ``clustertemplate:publish`` is the admin's)."""
    template = mgm.post(
        '/clustertemplates',
        json={
            'name': unique(name.replace('_', '-')),
            'coe': 'kubernetes',
            'image_id': image_id,
            'external_network_id': topology.public_network(admin).id,
            'flavor_id': flavor_id,
            'master_flavor_id': flavor_id,
            'network_driver': 'calico',
            'public': public,
        },
    )
    assert template.status_code == 201, template.text
    return template.json()['uuid']


def user_made(mgm, template_id: str, name: str) -> dict:
    """A cluster made from the template, once its driver gave up."""
    made = mgm.post(
        '/clusters',
        json={
            'name': name,
            'cluster_template_id': template_id,
            'master_count': 1,
            'node_count': 1,
        },
    )
    assert made.status_code == 202, made.text
    return made_by_driver(mgm, made.json()['uuid'])


@pytest.fixture(scope='module')
def world(admin, magnum):
    project = topology.make_project(admin, unique('magnum'))
    password = secrets.token_hex(8)
    user = admin.identity.create_user(
        name=unique('k8s-user'), password=password, domain_id='default'
    )
    admin.identity.assign_project_role_to_user(
        project, user, admin.identity.find_role('member')
    )
    conn = admin.connect_as(
        username=user.name,
        password=password,
        user_domain_id='default',
        project_id=project.id,
    )
    flavor = admin.compute.create_flavor(
        name=unique('k8s'), ram=2048, vcpus=2, disk=1
    )
    ids = {'project': project.id, 'user': user.id, 'flavor': flavor.id}
    ids['image'], cluster = user_cluster(admin, conn, ids, 'k8s_capi_helm_v1')
    ids['cluster'] = cluster['uuid']
    ids['created'] = cluster
    yield conn, ids
    # what the test did not delete: the record (Magnum keeps it, and its
    # delete fails: an operator removes it), the flavor and the user; the
    # project's cascade after (the template, the image)
    operator_removes(ids['cluster'])
    admin.compute.delete_flavor(flavor.id, ignore_missing=True)
    admin.identity.delete_user(user.id, ignore_missing=True)


def footprint(admin, conn, ids, stack_id: str) -> dict:
    """What the release's controllers made: CAPO's, named for the
    Cluster API cluster ``<prefix>-<project>/<release>``, and the driver's
    application credential; beside them, near misses."""
    ns = f'{PREFIX}-{ids["project"].replace("-", "").lower()}'
    capo = f'{ns}-{stack_id}'
    desc = f'Created by cluster-api-provider-openstack cluster {capo}'
    name = f'k8s-clusterapi-cluster-{capo}'
    net, subnet, router = topology.capo_network(
        admin, conn, name, desc, '10.79.0.0/24'
    )
    sg = conn.network.create_security_group(
        name=f'k8s-cluster-{capo}-secgroup-worker',
        description='Cluster API managed group',
    )
    machine = f'{stack_id}-default-worker-x1y2z'
    port = conn.network.create_port(
        network_id=net.id,
        name=f'{machine}-0',
        description=desc,
        security_group_ids=[sg.id],
    )
    trunk = conn.network.create_trunk(
        name=port.name, port_id=port.id, description=desc
    )
    server = conn.compute.create_server(
        name=machine,
        flavor_id=ids['flavor'],
        image_id=ids['image'],
        networks=[{'port': port.id}],
    )
    topology.wait_status(
        lambda: conn.compute.get_server(server.id), 'active', 'the node'
    )
    # the node died with its management cluster
    admin.compute.reset_server_state(server.id, 'error')
    cred = member_credential(
        conn,
        ids['user'],
        name=f'magnum-{ids["cluster"]}-{secrets.token_hex(4)}',
        description='Magnum cluster (prod)',
    )
    near_net = conn.network.create_network(
        name=name + '-2', description=desc + '-2'
    )
    own_cred = member_credential(
        conn, ids['user'], name=unique('ci'), description='the CI'
    )
    return {
        'net': net.id,
        'subnet': subnet.id,
        'router': router.id,
        'sg': sg.id,
        'port': port.id,
        'trunk': trunk.id,
        'server': server.id,
        'cred': cred.id,
        'near_net': near_net.id,
        'own_cred': own_cred.id,
    }


def test_magnum_answers_stack_id_before_1_13_and_cluster_id_after(
    admin, world
):
    _conn, ids = world
    stack_id = ids['created'].get('stack_id') or ids['created'].get(
        'cluster_id'
    )
    # magnum-capi-helm's release: <name>-<12 random>
    assert stack_id and stack_id.startswith('prod-') and len(stack_id) == 17
    for version, key, hidden in (
        ('1.11', 'stack_id', 'cluster_id'),
        ('1.12', 'stack_id', 'cluster_id'),
        ('1.13', 'cluster_id', 'stack_id'),
        ('1.14', 'cluster_id', 'stack_id'),
    ):
        mgm = at(version).container_infrastructure_management
        shown = mgm.get(f'/clusters/{ids["cluster"]}').json()
        assert shown[key] == stack_id and hidden not in shown, version
        # an admin's list is every project's (no all_tenants: a 400)
        listed = mgm.get('/clusters').json()
        [row] = [c for c in listed['clusters'] if c['uuid'] == ids['cluster']]
        assert row.get(key) == stack_id, version
        [found] = MAGNUM.find(at(version), ids['cluster'])
        assert found.stack_id == stack_id and capi.on_cluster_api(found)
        assert found.user_id == ids['user']


def test_force_delete_a_real_magnum_record(admin, world, cli):
    conn, ids = world
    stack_id = ids['created'].get('stack_id') or ids['created']['cluster_id']
    made = footprint(admin, conn, ids, stack_id)
    args = (
        'cluster', 'force-delete', ids['cluster'], '--grace', '20s',
        '--capi-helm-namespace-prefix', PREFIX,
    )  # fmt: skip
    dry = cli(*args, '--dry-run', '-f', 'json')
    assert dry.code == 0, dry.stderr
    actions = {r['Physical ID']: r['Action'] for r in dry.json()}
    for key in ('net', 'subnet', 'router', 'sg', 'port', 'trunk', 'server'):
        assert actions.get(made[key]) == 'delete', (key, actions)
    assert actions.get(made['cred']) == 'delete', actions
    assert made['near_net'] in actions and actions[
        made['near_net']
    ].startswith('keep')
    assert made['own_cred'] not in actions
    result = cli(*args, '--yes', '-f', 'json')
    print('force-delete stdout:', result.stdout)
    print('force-delete stderr:', result.stderr)
    record = conn.container_infrastructure_management.get(
        f'/clusters/{ids["cluster"]}'
    )
    print('Magnum answered:', record.status_code, record.text[:600])
    for key in ('net', 'router', 'sg', 'port', 'trunk'):
        kind = {'net': 'network', 'sg': 'security_group'}.get(key, key)
        assert getattr(admin.network, f'find_{kind}')(made[key]) is None, key
    assert admin.compute.find_server(made['server']) is None
    creds = {c.id for c in admin.identity.application_credentials(ids['user'])}
    assert made['cred'] not in creds and made['own_cred'] in creds
    assert admin.network.find_network(made['near_net']) is not None
    # the driver cannot reach its management cluster: Magnum keeps the
    # record, DELETE_FAILED, and the command says only an operator can
    # remove it
    assert record.status_code == 200
    assert record.json()['status'] == 'DELETE_FAILED'
    assert 'only an operator can remove the record' in result.stderr
    assert result.code == 0, result.stderr
    # the operator does: the record goes, and the project's cascade (the
    # module's teardown) deletes the template after it
    assert operator_removes(ids['cluster']) == 1
    assert (
        conn.container_infrastructure_management.get(
            f'/clusters/{ids["cluster"]}'
        ).status_code
        == 404
    )


def test_force_delete_a_cluster_its_driver_named_nothing(admin, world, cli):
    """magnum-cluster-api fails at its first call to the management
    cluster, before it saves the Cluster API cluster's name: no stack_id,
    nothing made; its delete fails too, and the command says the record
    stays."""
    conn, ids = world
    _image, cluster = user_cluster(
        admin, conn, ids, 'k8s_cluster_api_ubuntu', name='mca'
    )
    print('magnum-cluster-api:', cluster['status_reason'])
    assert cluster['stack_id'] is None
    assert 'Connection refused' in cluster['status_reason']
    result = cli(
        'cluster', 'force-delete', cluster['uuid'], '--grace', '20s',
        '--yes', '-f', 'json',
    )  # fmt: skip
    print('force-delete stderr:', result.stderr)
    assert result.code == 0, result.stderr
    [row] = result.json()
    assert (row['Result'], row['Record']) == ('record left', 'DELETE_FAILED')
    assert 'names no stack nor Cluster API cluster' in result.stderr
    assert 'only an operator can remove the record' in result.stderr
    assert operator_removes(cluster['uuid']) == 1


def test_a_projects_templates_go_and_what_others_use_stays(admin, magnum, cli):
    p = topology.make_project(admin, unique('magnum-t'))
    q = topology.make_project(admin, unique('magnum-u'))
    member_p, member_q = Member(admin, admin, p), Member(admin, admin, q)
    flavor = admin.compute.create_flavor(
        name=unique('k8s'), ram=2048, vcpus=2, disk=1
    )
    # the cloud's public image, as an operator offers one
    image = admin.image.create_image(
        name=unique('ubuntu-k8s'),
        disk_format='raw',
        container_format='bare',
        data=b'\0' * 1024,
        visibility='public',
        properties={
            'os_distro': 'ubuntu',
            'kube_version': 'v1.31.1',
            'magnum_driver': 'k8s_capi_helm_v1',
        },
    )
    theirs = None
    try:
        mine = make_template(
            admin,
            member_p.connection().container_infrastructure_management,
            image.id,
            flavor.id,
            'private',
        )
        # an admin of P publishes P's templates
        p_admin = topology.scoped(admin, p).container_infrastructure_management
        used, offered = (
            make_template(admin, p_admin, image.id, flavor.id, n, public=True)
            for n in ('used', 'offered')
        )
        # Q's member makes a cluster from P's public template
        theirs = user_made(
            member_q.connection().container_infrastructure_management,
            used,
            'theirs',
        )
        assert theirs['project_id'] == q.id
        # Magnum's own refusal, even to the admin
        refused = magnum.delete(f'/clustertemplates/{used}', raise_exc=False)
        assert refused.status_code == 400 and 'referenced' in refused.text

        dry, run = cascade(cli, p.id)
        print('dry run:', dry.stdout, dry.stderr)
        assert dry.code == 1, dry.stdout + dry.stderr
        plan = {r['ID']: r for r in dry.json()}
        assert plan[mine]['Action'] == 'delete'
        assert plan[used]['Action'] == 'keep'
        assert plan[used]['Reason'] == (
            f'used by clusters of project(s) {q.id}: Magnum refuses its delete'
        )
        assert plan[offered]['Action'] == 'keep'
        assert plan[offered]['Reason'] == (
            'public cluster template: other projects may use it'
        )
        # kept: the cascade changes nothing, and the project stays
        assert run.code == 1, run.stdout + run.stderr
        assert admin.identity.find_project(p.id) is not None
        for template in (mine, used, offered):
            assert magnum.get(f'/clustertemplates/{template}').json()

        # Q's cluster gone (its driver cannot delete it: an operator
        # removes it), P's templates go with --delete-shared
        assert operator_removes(theirs['uuid']) == 1
        theirs = None
        dry, run = cascade(cli, p.id, '--delete-shared')
        assert dry.code == 0, dry.stdout + dry.stderr
        plan = {r['ID']: r['Action'] for r in dry.json()}
        assert [plan.get(t) for t in (mine, used, offered)] == ['delete'] * 3
        assert run.code == 0, run.stdout + run.stderr
        assert admin.identity.find_project(p.id) is None
        for template in (mine, used, offered):
            gone = magnum.get(f'/clustertemplates/{template}', raise_exc=False)
            assert gone.status_code == 404, gone.text
    finally:
        if theirs is not None:
            operator_removes(theirs['uuid'])
        admin.image.delete_image(image.id, ignore_missing=True)
        admin.compute.delete_flavor(flavor.id, ignore_missing=True)
        for member in (member_p, member_q):
            admin.identity.delete_user(member.user.id, ignore_missing=True)


def quota_rows(magnum, project_id: str) -> dict:
    """{resource: hard limit} of the project's own Magnum quota rows."""
    return {
        q['resource']: q['hard_limit']
        for q in pages(magnum, '/quotas', 'quotas', {'all_tenants': True})
        if q['project_id'] == project_id
    }


def test_a_projects_own_magnum_quota_goes_with_it(admin, magnum, cli):
    """The admin gives projects a Magnum quota of their own (``POST
    /v1/quotas``): the cascade's drain freezes P's (a ``Cluster`` limit
    of 0) and ``--settle`` resets it with the project; a plainly deleted
    project's row is an orphan (``quota.container_infra``) that the purge
    deletes; another project's row stays."""
    p, gone, q = (
        topology.make_project(admin, unique(f'magnum-quota-{n}'))
        for n in ('p', 'gone', 'q')
    )
    try:
        for project, limit in ((p, 7), (gone, 6), (q, 8)):
            made = magnum.post(
                '/quotas',
                json={
                    'project_id': project.id,
                    'resource': 'Cluster',
                    'hard_limit': limit,
                },
            )
            assert made.status_code == 201, made.text
        assert quota_rows(magnum, p.id) == {'Cluster': 7}

        dry, run = cascade(cli, p.id, '--settle', '5s')
        print('cascade stderr:', run.stderr)
        assert dry.code == 0, dry.stdout + dry.stderr
        assert run.code == 0, run.stdout + run.stderr
        assert 'container-infra' not in run.stderr, run.stderr
        assert admin.identity.find_project(p.id) is None
        assert quota_rows(magnum, p.id) == {}

        # a plain Keystone delete, as before this plugin: its row is an
        # orphan of the kind, which the purge deletes
        assert cli('project', 'delete', gone.id).code == 0
        listed = cli('orphan', 'list', '--project', gone.id, '-f', 'json')
        assert listed.code == 0, listed.stdout + listed.stderr
        assert ('quota.container_infra', gone.id) in {
            (r['Kind'], r['ID']) for r in listed.json()
        }, listed.stdout
        purged = cli('orphan', 'purge', '--yes', '--project', gone.id)
        assert purged.code == 0, purged.stdout + purged.stderr
        assert quota_rows(magnum, gone.id) == {}
        assert quota_rows(magnum, q.id) == {'Cluster': 8}
    finally:
        for project in (p, gone, q):
            magnum.delete(f'/quotas/{project.id}/Cluster', raise_exc=False)
