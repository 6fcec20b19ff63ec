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


"""The clusters ``cluster force-delete`` works on, the services they live
in, and which of them are stuck.

A cluster is a Magnum cluster (Heat driver), a Sahara cluster, or with
``--stack`` a plain Heat stack: each is built on a stack; or a Magnum cluster
on a Cluster API driver, whose ``stack_id`` (``cluster_id`` from microversion
1.13) names its Cluster API cluster (``force_delete.capi``). Stuck are those in
a state that is not final (``*_IN_PROGRESS``; for Sahara anything but
``Active`` and ``Error``) and those in ``DELETE_FAILED``, a deletion that
stopped while the cluster still exists, not updated for longer than a given
age. The other failed states (``CREATE_FAILED``..., Sahara's ``Error``) are
final: nothing is in progress there, and the way out is a normal delete.

Of the stuck, those *updating* (``UPDATE_IN_PROGRESS``, a rollback, a
resume...; Sahara's scaling) are clusters in use that an operation is
changing: they are taken only when asked (``include_updating``), whatever
their age. The others are being created or deleted.

Every call is retried with the caller's clock and policy while it may
pass, and a failure that stays is one line (``engine.retry.checked``).

The parts: ``records`` (a cluster, a stack, its resources), ``services``
(Magnum, Sahara and Heat adapted to one interface) and ``stuck`` (finding
them, by name or stuck). This package names the public ones.
"""

from osc_cascade.workflows.clusters.records import (
    HEAT,
    HEAT_ONLY_TYPES,
    MAGNUM,
    NEEDS,
    ROUTER_INTERFACE,
    SAHARA,
    ClusterRecord,
    StackRecord,
    StackResource,
    noun,
    record_resources,
)
from osc_cascade.workflows.clusters.services import (
    NOT_UPDATING,
    SAHARA_UPDATING,
    ClusterService,
    HeatStacks,
    MagnumClusters,
    SaharaClusters,
    services_for,
)
from osc_cascade.workflows.clusters.stuck import (
    StuckCluster,
    find_cluster,
    find_stuck,
    format_age,
    parse_age,
    parse_time,
    stuck_of_project,
    utcnow,
)

__all__ = [
    'HEAT',
    'HEAT_ONLY_TYPES',
    'MAGNUM',
    'NEEDS',
    'NOT_UPDATING',
    'ROUTER_INTERFACE',
    'SAHARA',
    'SAHARA_UPDATING',
    'ClusterRecord',
    'ClusterService',
    'HeatStacks',
    'MagnumClusters',
    'SaharaClusters',
    'StackRecord',
    'StackResource',
    'StuckCluster',
    'find_cluster',
    'find_stuck',
    'format_age',
    'noun',
    'parse_age',
    'parse_time',
    'record_resources',
    'services_for',
    'stuck_of_project',
    'utcnow',
]
