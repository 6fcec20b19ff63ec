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

"""benchmarks/cpu.py: CPU seconds from /proc."""

import os
import subprocess
import sys

import pytest

from benchmarks import cpu

#: a process that burns 0.3 s of CPU when told to, says so, and waits
BURNER = (
    'import sys, time\n'
    'sys.stdin.readline()\n'
    'end = time.process_time() + 0.3\n'
    'while time.process_time() < end:\n'
    '    pass\n'
    'print("burnt", flush=True)\n'
    'sys.stdin.readline()\n'
)


def test_a_process_group_and_the_machine_count_what_we_burn():
    # a group of its own: a group counts its live processes, and ours may
    # have others that end meanwhile (CI's minicloud comes up beside it)
    burner = subprocess.Popen(
        [sys.executable, '-c', BURNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        group = os.getpgid(burner.pid)
        before = (
            cpu.groups([group]),
            cpu.process(burner.pid),
            cpu.machine_busy(),
        )
        burner.stdin.write(b'go\n')
        burner.stdin.flush()
        assert burner.stdout.readline() == b'burnt\n'
        after = (
            cpu.groups([group]),
            cpu.process(burner.pid),
            cpu.machine_busy(),
        )
    finally:
        burner.stdin.close()
        burner.wait(timeout=10)
    # /proc counts in clock ticks (10 ms): allow for the rounding
    assert all(a - b >= 0.25 for a, b in zip(after, before))


def test_a_group_nobody_is_in_used_nothing():
    assert cpu.groups([2**22 + 7]) == 0.0
    assert cpu.process(2**22 + 7) == 0.0


def test_minicloud_groups_come_from_its_pid_files(tmp_path):
    run = tmp_path / 'run'
    run.mkdir()
    (run / 'nova-api.pid').write_text('4242 99887766\n')
    (run / 'keystone.pid').write_text('17 1\n')
    (run / 'broken.pid').write_text('')
    (run / 'mariadbd.own-pid').write_text('55\n')  # not a unit's record
    assert sorted(cpu.minicloud_groups(str(tmp_path))) == [17, 4242]


def test_no_minicloud_units_is_an_error_not_a_cloud_at_rest(tmp_path):
    with pytest.raises(RuntimeError, match='no minicloud units in'):
        cpu.minicloud_groups(str(tmp_path))


def test_meter_divides_by_what_the_cores_could_give(monkeypatch):
    readings = iter(
        [
            {'cloud': 100.0, 'tool': 1.0, 'proxy': 5.0, 'machine': 200.0},
            {'cloud': 130.0, 'tool': 3.5, 'proxy': 6.0, 'machine': 236.0},
        ]
    )
    meter = cpu.Meter([1], None)
    monkeypatch.setattr(meter, '_read', lambda: next(readings))
    monkeypatch.setattr(os, 'cpu_count', lambda: 2)
    meter.start()
    used = meter.stop(20.0)
    assert used == {
        'cloud_cpu_s': 30.0,
        'tool_cpu_s': 2.5,
        'proxy_cpu_s': 1.0,
        'machine_cpu_s': 36.0,
        'cores': 2,
        'cloud_busy': 0.75,
        'machine_busy': 0.9,
    }
