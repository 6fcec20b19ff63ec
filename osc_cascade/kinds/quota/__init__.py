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

"""Quotas: the projects' own quota values, which the drain freezes.

A project's own quota values are frozen by the drain and reset after the
project is gone.

Two things live in this package:

* the quota *kinds*, which list the projects whose quotas differ from the
  defaults and reset them (the quota APIs' DELETE). They are not steps of
  a cascade's plan (``without_quotas``): a reset before the project is
  gone would lift the drain's freeze (and an operator's). The orphan
  search (``orphan list``) still lists and purges, with them, the quota
  rows of projects that no longer exist;
* the quota *APIs* (``QUOTA_APIS``, one per service with per-project
  quotas), plain classes that ``workflows.drain`` uses to read a project's
  own values, freeze them, read them back, restore them and, once the
  project is gone, reset them. Each freezes the way its service accepts:

  - Nova: 0 with ``force`` (below usage);
  - Neutron: 0 with ``force`` (taken since Yoga, 2022.1; since 2025.1 a
    limit below usage is refused without it); a Neutron older than Yoga
    refuses the key and checks no usage, so the value is sent again
    without it;
  - Cinder refuses a limit below usage and has no ``force``: frozen at
    usage (``in_use`` + ``reserved``), ``per_volume_gigabytes`` untouched,
    and lowered to the usage as the cascade deletes (``lowered_by``);
  - Manila: 0 with ``force``, ``per_share_gigabytes`` untouched;
  - Octavia, Barbican: 0 (neither checks usage when a limit is set);
  - Magnum: a ``Cluster`` limit of 0 (its only quota resource);
  - Keystone's unified limits (which Nova and Glance may enforce instead
    of a quota set): a project limit of 0 for every registered limit.

  A restore resets and puts the project's own values back on top, but
  Nova's and Manila's (``reset_takes_more``): their reset destroys the
  project's per-user quotas too (Manila's its usages as well), which the
  drain never changed and no API lists; they are restored by PUT alone.

Designate is left out: its API shows a project's quotas merged with the
defaults and has no call for the defaults alone, so a reset could never be
told from a quota nobody set. Trove's quotas are not frozen either.
Keystone's unified limits go with the project.

Its modules: ``base``, what the quota kinds and APIs share, and one per
service with both (Keystone's unified limits: an API alone). They may
import ``osc_cascade.api``, the engine's model modules (``resource``,
``errors``, ``planner``, ``retry``), ``osc_cascade.kinds``' ``base``,
``calls``, ``paging`` and ``registry``, each other, and what a service's
kinds module gives for its API (``shared_file_system.manila``).
"""

from __future__ import annotations

# imported for their @register, in the order of the registry as before
# the split (the order discovery lists the kinds in): Manila's kinds, which
# quota.shared_file_system needs, before every quota kind
# isort: off
import osc_cascade.kinds.shared_file_system  # noqa: F401
from osc_cascade.kinds.quota import (
    compute,
    block_storage,
    shared_file_system,
    network,
    load_balancer,
    key_manager,
    container_infra,
    unified_limits,
)

# isort: on
from osc_cascade.kinds.base import ResourceKind
from osc_cascade.kinds.quota.base import QuotaApi, _Quota


def without_quotas(kinds: dict[str, ResourceKind]) -> dict[str, ResourceKind]:
    """The kinds of a cascade's plan: every kind but the quotas, which the
    drain records and resets after the project is gone."""
    return {n: k for n, k in kinds.items() if not isinstance(k, _Quota)}


#: the quota APIs the drain freezes, in this order
QUOTA_APIS: tuple[QuotaApi, ...] = (
    compute.ComputeQuotaApi(),
    network.NetworkQuotaApi(),
    block_storage.BlockStorageQuotaApi(),
    shared_file_system.SharedFileSystemQuotaApi(),
    load_balancer.LoadBalancerQuotaApi(),
    key_manager.KeyManagerQuotaApi(),
    container_infra.ContainerInfraQuotaApi(),
    unified_limits.UnifiedLimitsApi(),
)
