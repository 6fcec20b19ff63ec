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

"""minicloud: a real OpenStack cloud on this one machine, for functional tests.

Keystone, Placement, Nova (api, conductor, scheduler, two fake computes),
Glance, Neutron (ML2, no agents), Cinder (file-backed fake driver, backups),
Heat (stack abandon enabled), Octavia (amphora provider, no-op drivers) and
Swift (Keystone auth) in region RegionOne, and a Neutron and a Glance of
their own in region RegionTwo, installed from PyPI into one venv, with a
private MariaDB and a private RabbitMQ from Debian packages, all on
127.0.0.1.

Everything (venvs, configs, data, logs, PID files) lives in one directory:
``.minicloud/`` in the repository root, or ``$MINICLOUD_HOME``.

    tools/minicloud up [--fresh] [--services LIST] [--client] [--demo]
                       [--release newest|2024.1]
    tools/minicloud down
    tools/minicloud status
    tools/minicloud logs [UNIT|SERVICE] [-n LINES]
    tools/minicloud stop UNIT|SERVICE   /   tools/minicloud start UNIT|SERVICE
    tools/minicloud env

``up --release 2024.1`` brings up the same cloud at OpenStack 2024.1 (its
own venvs; ``releases`` says what differs); the newest is the default.

This package uses the Python 3 standard library only: it runs before any
venv exists.  See tools/README.rst.
"""
