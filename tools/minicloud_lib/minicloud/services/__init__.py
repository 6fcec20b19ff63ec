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

"""One module per service; each holds that service's units, the rendering
of its configs and its bring-up steps.

A service module has NAME, DEPENDS (services it needs), DATABASES (created
by infra for every service, chosen or not), DATA_DIRS (under data/),
RPC_QUEUES (readiness waits until each has a consumer), and::

    units()            its Unit objects, in start order
    write_configs()    its files under etc/
    add_steps(plan)    its steps on a tasks.Plan

infra (MariaDB, RabbitMQ and its epmd) has the same functions, but is no
service one can choose: it is always there.
"""
