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

"""``compute service delete --purge-allocations``: resolve, plan, run.

Nova's delete of a compute service removes the allocations it knows of and
deletes the host's resource providers, but it ignores Placement's 409 when a
provider still has allocations and deletes the service anyway: the providers
are orphaned. The purge therefore:

1. resolves the services and finds their compute nodes (one paged
   hypervisor list) and the nodes' provider trees (one provider list),
   and whose each provider is (``refs.not_novas``, from the owner
   traits: one trait list and one provider list per OWNER_* trait);
   what is not nova's is kept, with its allocations, and refuses;
2. reads the allocations on those providers and classifies each consumer
   with what nova says of it (``consumers.classify``);
3. plans: remove the trees' share of the consumers that are left-overs,
   keep (and refuse on) the ones that are not, delete the nested providers
   children first, then the service, whose delete in nova removes its
   nodes' providers (it fails if one is already gone), then check that
   those are gone;
4. runs that plan with the executor; nothing runs while anything blocks.
   An enabled service is disabled first (``disabled_reason`` naming
   osc-cascade), so that the scheduler places nothing new on the host
   while its allocations go, and its consumers are read again: the plan
   that runs is the one read with the host disabled, and it may not hold
   more than the plan shown (a blocker, or anything new, refuses). If the
   purge is refused or stops before nova deletes the service, the service
   is enabled again, unless someone changed it meanwhile. A service that
   was disabled already is left as it is.

Planning changes nothing: a dry run only says that a service would be
disabled. The command (``v1.compute_service``) confirms and shows the
plan, the blockers and the outcome.

The parts: ``base`` (shared state and reads), ``lookup`` (which services),
``discovery`` (what Placement and nova hold, and the plan), ``refs`` (the
plan's resources, no calls), ``status`` (disabling and enabling the
services) and ``run`` (``ServicePurge``, which joins them). This package
names the public ones.
"""

from osc_cascade.workflows.service_purge.base import READ_ATTEMPTS
from osc_cascade.workflows.service_purge.run import (
    ServicePurge,
    refuse_blocked,
)
from osc_cascade.workflows.service_purge.status import DISABLED_REASON

__all__ = [
    'DISABLED_REASON',
    'READ_ATTEMPTS',
    'ServicePurge',
    'refuse_blocked',
]
