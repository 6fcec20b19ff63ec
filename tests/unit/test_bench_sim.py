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

"""The simulated cloud of the benchmarks (benchmarks.simcloud) over real
HTTP on loopback: its tokens and catalog, the refusals of the fake
services, timed asynchronous deletes, listings scoped and put together
across its shards, Swift's bulk delete across shards; and the sweep's
measuring and table (benchmarks.sim)."""

from __future__ import annotations

import sys
import time

import pytest
import requests

from benchmarks import sim, simcloud, simreport, simserver, simstats


@pytest.fixture
def cloud():
    # deletes of 0.3 s (servers) and less: timed, and the test quick
    sc = simcloud.SimCloud(latency=0.0, workers=4, delete_scale=0.03)
    servers, state = simserver.serve(sc)
    twins = sc.seed(200)  # two blocks (shards) a project
    yield sc, state, twins
    for server in servers:
        server.shutdown()
        server.server_close()


def token(state, project_id=None):
    scope = {'project': {'id': project_id}} if project_id else {}
    answer = requests.post(
        state['auth_url'] + '/auth/tokens',
        json={'auth': {'identity': {}, 'scope': scope}},
        timeout=10,
    )
    assert answer.status_code == 201
    catalog = {
        s['type']: s['endpoints'][0]['url']
        for s in answer.json()['token']['catalog']
    }
    return answer.headers['X-Subject-Token'], catalog


def call(method, url, tok, **kwargs):
    return requests.request(
        method,
        url,
        headers={'X-Auth-Token': tok, 'Content-Type': 'text/plain'}
        if kwargs.get('data')
        else {'X-Auth-Token': tok},
        timeout=10,
        **kwargs,
    )


def test_catalog_points_at_the_simulator_and_scopes_heat_and_swift(cloud):
    sc, state, (a, _b) = cloud
    _tok, catalog = token(state, a['id'])
    assert catalog['compute'] == sc.urls['compute'] + '/v2.1'
    assert catalog['orchestration'].endswith(f'/v1/{a["id"]}')
    assert catalog['object-store'].endswith(f'/v1/AUTH_{a["id"]}')
    # the fake's version document names the simulator, not nova.test
    doc = call('GET', catalog['compute'] + '/', _tok).json()
    assert doc['version']['links'][0]['href'].startswith(sc.urls['compute'])


def test_listings_are_scoped_to_the_tokens_project_or_the_query(cloud):
    _sc, state, (a, b) = cloud
    tok_a, catalog = token(state, a['id'])
    servers = call('GET', catalog['compute'] + '/servers/detail', tok_a)
    assert {s['project_id'] for s in servers.json()['servers']} == {a['id']}
    assert len(servers.json()['servers']) == 16
    admin, catalog = token(state)
    listed = call(
        'GET',
        catalog['network'] + '/v2.0/ports',
        admin,
        params={'project_id': b['id']},
    ).json()['ports']
    assert listed and {p['project_id'] for p in listed} == {b['id']}


def test_cinder_lists_a_project_scoped_tokens_own_volumes(cloud):
    """As project cleanup lists them (its connection scoped to the
    project, no all_tenants): the project's, not the admin's (none)."""
    sc, state, (a, _b) = cloud
    tok_a, catalog = token(state, a['id'])
    owned = sc.owned(a['id'])
    for key in ('volumes', 'snapshots', 'backups'):
        url = f'{catalog["block-storage"]}/{key}/detail'
        listed = call('GET', url, tok_a).json()[key]
        assert owned[key] and len(listed) == owned[key], key
    volumes = call('GET', catalog['block-storage'] + '/volumes', tok_a)
    assert len(volumes.json()['volumes']) == owned['volumes']


def test_an_admins_stack_listing_by_tenant_reads_that_projects_shards(cloud):
    sc, state, (a, _b) = cloud
    admin, catalog = token(state)
    sc.reset_stats()
    listed = call(
        'GET', catalog['orchestration'] + '/stacks', admin,
        params={'tenant': a['id']},
    ).json()['stacks']  # fmt: skip
    assert listed and {s['project'] for s in listed} == {a['id']}
    # the main shard and the project's two, not every project's
    assert sc.stats()['fanout_shards'] == 3


def test_what_the_simulator_adds_to_each_answer_is_measured(cloud):
    sc, state, _twins = cloud
    admin, catalog = token(state)
    sc.reset_stats()
    for _ in range(3):
        call('GET', catalog['network'] + '/v2.0/ports', admin)
    stats = sc.stats()
    assert stats['requests'] == 3
    # no latency here: all of each answer's time is the simulator's own
    assert 0 < stats['added_ms_p50'] <= stats['added_ms_p99']
    assert stats['added_ms_mean'] > 0


def test_the_added_delays_mean_and_percentiles():
    assert simstats.added_delays([]) == {
        'added_ms_mean': 0.0,
        'added_ms_p50': 0.0,
        'added_ms_p99': 0.0,
    }
    delays = [0.001] * 98 + [0.010, 0.100]
    assert simstats.added_delays(delays) == {
        'added_ms_mean': 2.08,
        'added_ms_p50': 1.0,
        'added_ms_p99': 100.0,
    }


def test_refusals_of_the_real_services(cloud):
    sc, state, (a, _b) = cloud
    admin, catalog = token(state)
    network = next(
        n
        for shard in sc.project_shards[a['id']]
        for n in shard.all('networks')
        if any(
            p['network_id'] == n['id'] and p['device_owner'] == 'compute:nova'
            for p in shard.all('ports')
        )
    )
    answer = call(
        'DELETE', catalog['network'] + f'/v2.0/networks/{network["id"]}', admin
    )
    assert answer.status_code == 409
    assert answer.json()['NeutronError']['type'] == 'NetworkInUse'
    attached = next(
        v
        for shard in sc.project_shards[a['id']]
        for v in shard.all('volumes')
        if v['status'] == 'in-use'
    )
    answer = call(
        'DELETE',
        catalog['block-storage'] + f'/volumes/{attached["id"]}',
        admin,
    )
    assert answer.status_code == 400
    assert sc.stats()['statuses'] == {'201': 1, '409': 1, '400': 1}


def test_a_delete_goes_on_for_its_time_and_then_takes_what_nova_takes(cloud):
    sc, state, (a, _b) = cloud
    admin, catalog = token(state)
    shard = sc.project_shards[a['id']][0]
    server = shard.all('servers')[0]
    url = catalog['compute'] + f'/servers/{server["id"]}'
    started = time.monotonic()
    assert call('DELETE', url, admin).status_code == 204
    seen = call('GET', url, admin).json()['server']
    assert seen['OS-EXT-STS:task_state'] == 'deleting'
    while call('GET', url, admin).status_code != 404:
        time.sleep(0.02)
    took = time.monotonic() - started
    assert sc.delete_seconds['servers'] <= took < 5
    assert not [
        p for p in shard.all('ports') if p['device_id'] == server['id']
    ]


def test_bulk_delete_reaches_the_containers_of_every_shard(cloud):
    sc, state, (a, _b) = cloud
    tok, catalog = token(state, a['id'])
    containers = [
        c
        for shard in sc.project_shards[a['id']]
        for c in shard.all('containers')
    ]
    lines = [f'/{c["name"]}/{obj}' for c in containers for obj in c['objects']]
    answer = call(
        'POST',
        catalog['object-store'] + '?bulk-delete',
        tok,
        data='\n'.join(lines).encode(),
    )
    assert answer.json()['Number Deleted'] == len(lines) == 30
    assert all(not c['objects'] for c in containers)


def test_owned_counts_what_is_left_once_accepted_deletes_finish(cloud):
    sc, state, (a, b) = cloud
    before = sc.owned(a['id'])
    assert sum(before.values()) > 200 and before['projects'] == 1
    admin, catalog = token(state)
    volume = next(
        v
        for v in sc.project_shards[a['id']][0].all('volumes')
        if v['status'] == 'available'
        and not any(
            s['volume_id'] == v['id']
            for s in sc.project_shards[a['id']][0].all('snapshots')
        )
    )
    url = catalog['block-storage'] + f'/volumes/{volume["id"]}'
    assert call('DELETE', url, admin).status_code == 202
    after = sc.owned(a['id'])
    assert after['volumes'] == before['volumes'] - 1
    assert sc.owned(b['id']) == before


def test_run_measured_stops_a_tool_at_its_limit(tmp_path):
    code, wall, cpu, rss = sim.run_measured(
        [sys.executable, '-c', 'import time; time.sleep(30)'],
        {},
        str(tmp_path / 'log'),
        limit=0.3,
    )
    assert code == -1 and 0.3 <= wall < 5 and rss > 0
    code, _, cpu, _ = sim.run_measured(
        [sys.executable, '-c', 'sum(range(10**6))'],
        {},
        str(tmp_path / 'log'),
        limit=30,
    )
    assert code == 0 and cpu > 0


def row(tool, wall, **extra):
    hit_limit = extra.pop('hit_limit', False)
    return {
        'tool': tool,
        'wall': wall,
        'exit_code': extra.pop('exit_code', -1 if hit_limit else 0),
        'hit_limit': hit_limit,
        'limit': 600,
        'requests': 10,
        'client_cpu_s': 1.0,
        'client_peak_rss_mib': 100,
        'before': 100,
        'left': extra.pop('left', 0),
        'twin_intact': True,
        'sim': {
            'process_cpu_s': 0.5,
            'handler_cpu_ms_per_request': 0.2,
            'busy_max': {'network': 3},
            'workers': 1000,
        },
        **extra,
    }


def test_a_cleanup_at_its_limit_is_more_than_limit_over_cascade():
    cascade = dict(bound=9.0, discovery_and_plan_s=1.0, steps=50)
    runs = [
        {
            'n': 1000,
            'delete_scale': 1.0,
            'tools': {
                'cleanup': row('cleanup', 600.0, hit_limit=True, left=40),
                'cascade': row('cascade', w, **cascade),
            },
        }
        for w in (10.0, 12.0, 11.0)
    ]
    table = simreport.markdown(simreport.summarize(runs))
    cascade_line = next(x for x in table.splitlines() if '| cascade |' in x)
    assert '| 11.0 (10.0-12.0) |' in cascade_line
    assert 'more than 54.5x (cleanup at its limit); cleanup left 40' in (
        cascade_line
    )
    assert '| 1.22 |' in cascade_line  # wall / bound, the median
    assert '| 1.0 (20.0) |' in cascade_line  # client CPU s (ms per step)


def failed_cleanup_run(scale=1.0):
    """N=10,000 at ``scale``: the cleanup failed (exit 1, 9000 left), the
    cascade took 100 s against a 50 s bound."""
    return {
        'n': 10000,
        'delete_scale': scale,
        'latency_ms': 50.0,
        'tools': {
            'cleanup': row('cleanup', 500.0, exit_code=1, left=9000),
            'cascade': row(
                'cascade',
                100.0,
                bound=50.0,
                discovery_and_plan_s=9.0,
                steps=1000,
            ),
        },
    }


def test_a_cleanup_that_fails_is_said_to_have_failed():
    table = simreport.markdown(simreport.summarize([failed_cleanup_run()]))
    assert '| none: cleanup failed 1 of 1 times; cleanup left 9000 |' in table


def test_the_readmes_performance_section_is_rewritten_from_the_results(
    tmp_path,
):
    runs = [failed_cleanup_run(scale) for scale in (1.0, 10.0)]
    readme = tmp_path / 'README.rst'
    readme.write_text(
        'Performance\n===========\n\n'
        '.. performance: generated\n   by a command\n\n'
        'the figures of an older run\n\n'
        '.. end of performance\n\nDocumentation\n'
    )
    simreport.report(runs, str(tmp_path), str(readme))
    text = readme.read_text()
    assert 'older run' not in text
    assert text.startswith('Performance\n')
    assert text.endswith('\n.. end of performance\n\nDocumentation\n')
    rows = [x.split() for x in text.splitlines() if x.startswith('10,000')]
    # the minicloud's delete durations only (x1); the client's CPU per
    # request is 1 s over 10 requests
    assert [' '.join(r) for r in rows] == [
        '10,000 cascade 1 100.0 50.0 2.00 10 100.00 100 0.20 0',
        '10,000 cleanup 1 500.0 .. .. 10 100.00 100 0.20 failed',
    ]
    assert (tmp_path / 'sim-results.rst').exists()


def test_a_readme_without_the_section_is_refused(tmp_path):
    readme = tmp_path / 'README.rst'
    readme.write_text('Performance\n===========\n')
    with pytest.raises(ValueError, match=r'no "\.\. performance:" section'):
        simreport.report([], str(tmp_path), str(readme))
