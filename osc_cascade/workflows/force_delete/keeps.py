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


"""Which leftovers the deletion keeps, before it looks for them, and why
in one line: what Heat's own delete would keep (``HEAT_KEEPS``: not a
failure), and what the template no longer tells (kept, a failure: the
user decides)."""

from __future__ import annotations

from collections.abc import Sequence

from osc_cascade.workflows.clusters import policies
from osc_cascade.workflows.clusters.records import (
    ROUTER_INTERFACE,
    StackResource,
)

RETAINED = 'kept: the template retains it (deletion_policy Retain)'
ADOPTED = (
    'kept: the stack only adopted it (external_id); Heat never deletes it'
)
#: what Heat's own delete of the stack would have kept too
HEAT_KEEPS = frozenset({RETAINED, ADOPTED})

#: the types whose deletion_policy Snapshot takes a copy first (Heat's
#: handle_snapshot_delete: a Cinder backup of a volume, a Nova image of a
#: server); a volume's backup is taken here, a server is kept
VOLUME_TYPES = frozenset({'OS::Cinder::Volume', 'AWS::EC2::Volume'})
SNAPSHOT_TYPES = VOLUME_TYPES | {'OS::Nova::Server', 'AWS::EC2::Instance'}


def kept(res: StackResource) -> str:
    """Why the deletion keeps ``res`` whatever it finds, or ''."""
    if res.external_id:
        return ADOPTED
    policy = res.deletion_policy
    if policy == policies.RETAIN:
        return RETAINED
    if policy == policies.SNAPSHOT and res.type not in VOLUME_TYPES:
        return (
            'kept: the template asks for a snapshot before its delete '
            '(deletion_policy Snapshot), which force-delete takes of a '
            'volume only'
        )
    if policy:
        return ''
    if res.status.startswith('ADOPT_'):
        return (
            f'kept: Heat adopted it ({res.status}) and the template, which '
            f'says whether the stack owns it, is not known'
        )
    if res.status.startswith('DELETE_') and res.type not in SNAPSHOT_TYPES:
        # Heat's own delete went for it: its policy is not Retain
        return ''
    return (
        'kept: its deletion_policy is not known (the stack\'s template no '
        'longer holds it); delete it yourself if the template did not '
        'retain it'
    )


def keeps(left: Sequence[StackResource]) -> dict[str, str]:
    """What of ``left`` is kept, by key: ``kept``'s, and a router one of
    whose interfaces is kept (its delete would remove that interface)."""
    out = {r.key: kept(r) for r in left if kept(r)}
    routers = {
        r.physical_id: r for r in left if r.type == 'OS::Neutron::Router'
    }
    for res in left:
        if res.type != ROUTER_INTERFACE or res.key not in out:
            continue
        router = routers.get(res.physical_id.partition(':')[0])
        if router is not None and router.key not in out:
            out[router.key] = (
                f'kept: its interface {res.name} is kept, and its delete '
                f'would remove that'
            )
    return out
