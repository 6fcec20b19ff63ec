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

"""Fakes for the unit tests: an OpenStack cloud behind requests-mock
(clouds.py; its core in cloud.py, one module a service, what they share
in common.py), a clock that never sleeps (clock.py), resource kinds a
test scripts (kinds.py), and the product run against the fakes
(run.py)."""
