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

"""The import-time parsing of benchmarks/startup.py."""

from benchmarks import startup

SAMPLE = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |     osc_lib.utils
import time:       200 |        300 |   osc_cascade.plugin
import time:        50 |         50 |     osc_cascade.i18n
import time:        20 |         70 |   osc_cascade.v1.project
import time:        10 |        380 | osc_cascade
import time:        40 |         40 | cliff.hooks
import time:         5 |          5 |   osc_cascade.x
"""


def test_outermost_plugin_modules_only():
    assert startup.parse_importtime(SAMPLE, 'osc_cascade') == {
        'osc_cascade': 0.38,
        'osc_cascade.x': 0.005,
    }


def test_nothing_of_the_prefix():
    assert startup.parse_importtime(SAMPLE, 'nope') == {}
