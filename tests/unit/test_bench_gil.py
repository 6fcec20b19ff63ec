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

"""benchmarks.gil's reading of py-spy's raw samples."""

from benchmarks import gil

RUN_STEP = 'run_step (osc_cascade/engine/executor.py:454)'
DELETE = 'delete (osc_cascade/kinds/network/common.py:34)'
RAW = [
    # a delete: the SDK, and keystoneauth1 and requests beneath it
    f'_worker (concurrent/futures/thread.py:83);{RUN_STEP};{DELETE};'
    '_delete (openstack/proxy.py:2400);'
    'request (keystoneauth1/session.py:900) 7\n',
    f'{RUN_STEP};{DELETE};_delete (openstack/proxy.py:2400);'
    '__instancecheck__ (<frozen abc>:119) 3\n',
    # the executor's own work
    f'{RUN_STEP};_slot (osc_cascade/engine/executor.py:500) 4\n',
    # osc-cascade calling the standard library (a lock)
    f'{RUN_STEP};wait (threading.py:327) 2\n',
    # no osc-cascade frame: the client's start-up
    'main (openstackclient/shell.py:218);run (cliff/app.py:302) 5\n',
    # a sample without a Python stack, and a line that is no sample
    ' 1\n',
    'garbage\n',
]


def test_a_sample_counts_for_what_osc_cascade_called():
    s = gil.shares(RAW)
    assert s['called'] == {
        'openstacksdk': 10,
        'osc-cascade': 4,
        gil.OTHER: 2,
        gil.OUTSIDE: 6,
    }


def test_a_sample_counts_for_its_innermost_frame_too():
    s = gil.shares(RAW)
    assert s['innermost'] == {
        'keystoneauth1': 7,
        'osc-cascade': 4,
        gil.OTHER: 3 + 2 + 5 + 1,
    }


def test_a_call_into_the_sdk_is_its_own_work_or_the_http_call():
    assert gil.shares(RAW)['sdk'] == {gil.SDK_HTTP: 7, gil.SDK_OWN: 3}


def test_the_table_gives_each_library_its_share_of_the_samples():
    row = {
        'n': 1000,
        'samples': 22,
        'requests': 5,
        'left': 0,
        'wall_under_py_spy': 1.0,
        **gil.shares(RAW),
    }
    text = gil.markdown([row])
    assert '| openstacksdk | 45.5 % |' in text
    assert '| osc-cascade | 18.2 % |' in text
    assert '| 1000 | 22 | 5 | 0 | 1.0 |' in text
