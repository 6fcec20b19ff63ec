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

"""The names, tags, descriptions and metadata the controllers of a
Kubernetes cluster give what they make in OpenStack, and whether a
resource's match them whole (pure: no I/O).

Read from the controllers' source, for the versions in use since 2023
(``doc/source/user/cluster-leftovers.rst`` has the table):

* cloud-provider-openstack's cloud controller manager (OCCM, v1.26 to
  v1.36, ``pkg/openstack/loadbalancer.go``): a Service's load balancer is
  ``kube_service_<cluster>_<namespace>_<service>`` (cut at 255), described
  ``Kubernetes external service <namespace>/<service> from cluster
  <cluster>`` and tagged with its name; a load balancer shared by several
  Services carries one such tag per Service. Its floating IP is described
  ``Floating IP for Kubernetes external service <namespace>/<service> from
  cluster <cluster>``; its security group (``manage-security-groups``) is
  ``lb-sg-<service uid>-<namespace>-<service>``, described ``Security Group
  for <namespace>/<service> Service LoadBalancer in cluster <cluster>``.
* the Cinder CSI driver: volumes, snapshots and backups carry the metadata
  ``cinder.csi.openstack.org/cluster: <cluster>`` (its ``--cluster``); the
  Manila CSI driver: shares carry ``manila.csi.openstack.org/cluster``.
* cluster-api-provider-openstack (CAPO, v0.7 to v0.13): for the Cluster
  ``<namespace>/<name>``, its network, subnet and router are
  ``k8s-clusterapi-cluster-<namespace>-<name>``, its API load balancer
  ``k8s-clusterapi-cluster-<namespace>-<name>-kubeapi``, its security groups
  ``k8s-cluster-<namespace>-<name>-secgroup-{controlplane,worker,bastion}``
  (described ``Cluster API managed group``); the network, subnet, router,
  API load balancer, floating IPs and the ports it makes are described
  ``Created by cluster-api-provider-openstack cluster <namespace>-<name>``.
  Its servers carry no mark of their own: a server is the cluster's when
  its ports are.

A name is not proof alone: where the controller writes a description too,
a description that says another cluster puts the resource in doubt, and a
load balancer shared with a Service of another cluster (its tags) is that
cluster's as well. A prefix is never a match: the cluster ``prod`` does not
own ``kube_service_prod-2_default_web`` nor ``kube_service_prod_x_y_z``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import dataclasses
import re
from typing import Any

#: OCCM's load balancer name prefix (``servicePrefix``)
OCCM_PREFIX = 'kube_service_'
OCCM_LB_DESCRIPTION = 'Kubernetes external service {ns}/{svc} from cluster {}'
OCCM_FIP_DESCRIPTION = (
    'Floating IP for Kubernetes external service {ns}/{svc} from cluster {}'
)
OCCM_SG_DESCRIPTION = (
    'Security Group for {ns}/{svc} Service LoadBalancer in cluster {}'
)
CINDER_CSI_KEY = 'cinder.csi.openstack.org/cluster'
MANILA_CSI_KEY = 'manila.csi.openstack.org/cluster'
CAPO_DESCRIPTION = 'Created by cluster-api-provider-openstack cluster {}'
CAPO_SG_ROLES = ('controlplane', 'worker', 'bastion')
#: the longest name Neutron and Octavia keep (OCCM's Sprintf255)
NAME_MAX = 255

#: a Kubernetes namespace or Service name (DNS-1123 label): no '_', so an
#: OCCM name splits into its parts at the last two underscores
_LABEL = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?'
_OCCM_REST = re.compile(rf'(?P<ns>{_LABEL})_(?P<svc>{_LABEL})')
_OCCM_DESC = re.compile(
    rf'Kubernetes external service (?P<ns>{_LABEL})/(?P<svc>{_LABEL}) '
    r'from cluster (?P<cluster>.+)'
)
_OCCM_FIP_DESC = re.compile(
    rf'Floating IP for Kubernetes external service (?P<ns>{_LABEL})/'
    rf'(?P<svc>{_LABEL}) from cluster (?P<cluster>.+)'
)
_OCCM_SG_DESC = re.compile(
    rf'Security Group for (?P<ns>{_LABEL})/(?P<svc>{_LABEL}) Service '
    r'LoadBalancer in cluster (?P<cluster>.+)'
)
_CAPO_DESC = re.compile(
    r'Created by cluster-api-provider-openstack cluster (?P<cluster>.+)'
)


@dataclasses.dataclass(frozen=True)
class Identity:
    """What a cluster's controllers call it: ``occm`` the cloud controller
    manager's ``--cluster-name`` (and the CSI drivers' ``--cluster``),
    ``capi`` CAPO's ``<namespace>-<name>``; an empty one is not looked
    for."""

    occm: str = ''
    capi: str = ''
    csi: str = ''

    @classmethod
    def of(
        cls, occm: str = '', capi_namespace: str = '', capi_name: str = ''
    ) -> Identity:
        return cls(
            occm=occm,
            capi=f'{capi_namespace}-{capi_name}'
            if capi_namespace and capi_name
            else '',
            csi=occm,
        )

    def label(self) -> str:
        parts = [
            f'{what} {value!r}'
            for what, value in (
                ('cloud provider cluster', self.occm),
                ('Cluster API cluster', self.capi),
            )
            if value
        ]
        return ', '.join(parts) or '(nothing)'

    # -- the names the controllers make ---------------------------------

    @property
    def capi_network(self) -> str:
        return f'k8s-clusterapi-cluster-{self.capi}'

    @property
    def capi_api_lb(self) -> str:
        return f'{self.capi_network}-kubeapi'

    def capi_security_groups(self) -> set[str]:
        return {
            f'k8s-cluster-{self.capi}-secgroup-{role}'
            for role in CAPO_SG_ROLES
        }

    @property
    def capi_description(self) -> str:
        return CAPO_DESCRIPTION.format(self.capi)


@dataclasses.dataclass(frozen=True)
class Match:
    """Whether a resource is the cluster's: ``mine`` by ``convention``;
    not mine, with ``why`` (a near miss worth showing) or without (a
    stranger, not shown); or ``doubt``: it looks like the cluster's and
    is kept, ``why`` saying why."""

    mine: bool
    convention: str = ''
    why: str = ''
    doubt: bool = False


NO = Match(False)


def _near(why: str) -> Match:
    return Match(False, why=why)


def _doubt(why: str) -> Match:
    return Match(False, why=why, doubt=True)


def occm_lb_parts(name: str, cluster: str) -> tuple[str, str] | None:
    """``(namespace, service)`` of an OCCM load balancer name of
    ``cluster``, or None: the name must be the whole format."""
    prefix = f'{OCCM_PREFIX}{cluster}_'
    if not cluster or not name.startswith(prefix):
        return None
    m = _OCCM_REST.fullmatch(name[len(prefix) :])
    return (m.group('ns'), m.group('svc')) if m else None


def _said(text: str, pattern: re.Pattern[str]) -> str | None:
    """The cluster a controller's description names, or None when the
    text is not that description."""
    m = pattern.fullmatch(text or '')
    return m.group('cluster') if m else None


def match_load_balancer(ident: Identity, lb: Mapping[str, Any]) -> Match:
    """OCCM's Service load balancers and CAPO's API load balancer."""
    name = lb.get('name') or ''
    description = lb.get('description') or ''
    if ident.capi and name == ident.capi_api_lb:
        said = _said(description, _CAPO_DESC)
        if said is not None and said != ident.capi:
            return _doubt(
                f'named as the API load balancer of Cluster API cluster '
                f'{ident.capi!r}, but described as made for {said!r}'
            )
        return Match(True, 'CAPO API load balancer name')
    if not ident.occm or not name.startswith(OCCM_PREFIX):
        return NO
    parts = occm_lb_parts(name, ident.occm)
    described = _OCCM_DESC.fullmatch(description)
    said = described.group('cluster') if described else None
    if len(name) >= NAME_MAX and name.startswith(
        f'{OCCM_PREFIX}{ident.occm}_'
    ):
        # cut at 255: the namespace and Service may be cut away
        if said == ident.occm:
            return Match(True, 'OCCM description (name cut at 255)')
        return _doubt(
            'its name was cut at 255 characters and its description '
            'does not name the cluster'
        )
    if parts is None:
        if said == ident.occm:
            return _doubt(
                f'described as a load balancer of cluster {ident.occm!r}, '
                f'but its name is not that of the cloud controller manager'
            )
        if name.startswith(f'{OCCM_PREFIX}{ident.occm}'):
            return _near(
                f"not the cluster's: {name!r} is not "
                f'{OCCM_PREFIX}{ident.occm}_<namespace>_<service>'
                + (f' (described for cluster {said!r})' if said else '')
            )
        return NO
    if described and said != ident.occm:
        return _doubt(
            f'named for cluster {ident.occm!r} but described for cluster '
            f'{said!r}'
        )
    if described and (described.group('ns'), described.group('svc')) != parts:
        return _doubt('its name and its description name different Services')
    shared = sorted(
        tag
        for tag in lb.get('tags') or []
        if tag.startswith(OCCM_PREFIX)
        and tag != name
        and occm_lb_parts(tag, ident.occm) is None
    )
    if shared:
        return _doubt(
            f'shared with a Service of another cluster (tag {shared[0]!r}'
            + (f' and {len(shared) - 1} more' if len(shared) > 1 else '')
            + ')'
        )
    return Match(True, 'OCCM load balancer name')


def match_floating_ip(ident: Identity, fip: Mapping[str, Any]) -> Match:
    description = fip.get('description') or ''
    if ident.occm:
        said = _said(description, _OCCM_FIP_DESC)
        if said == ident.occm:
            return Match(True, 'OCCM floating IP description')
    if ident.capi and description == ident.capi_description:
        return Match(True, 'CAPO description')
    return NO


def match_network_item(
    ident: Identity, kind: str, item: Mapping[str, Any]
) -> Match:
    """A network, subnet or router: CAPO's name, and its description when
    it has one."""
    if not ident.capi:
        return NO
    name = item.get('name') or ''
    description = item.get('description') or ''
    if name != ident.capi_network:
        if name.startswith(ident.capi_network):
            return _near(
                f'not the cluster\'s: {name!r} is not {ident.capi_network!r}'
            )
        return NO
    said = _said(description, _CAPO_DESC)
    if description and said != ident.capi:
        return _doubt(
            f'named as the {kind} of Cluster API cluster {ident.capi!r}, '
            f'but described {description!r}'
        )
    return Match(True, f'CAPO {kind} name')


def match_port(ident: Identity, port: Mapping[str, Any]) -> Match:
    if ident.capi and (port.get('description') or '') == (
        ident.capi_description
    ):
        return Match(True, 'CAPO description')
    return NO


def match_security_group(ident: Identity, sg: Mapping[str, Any]) -> Match:
    name = sg.get('name') or ''
    description = sg.get('description') or ''
    if ident.capi and name in ident.capi_security_groups():
        return Match(True, 'CAPO security group name')
    if ident.capi and name.startswith(f'k8s-cluster-{ident.capi}'):
        return _near(
            f'not the cluster\'s: {name!r} is not '
            f'k8s-cluster-{ident.capi}-secgroup-<role>'
        )
    if ident.occm and name.startswith('lb-sg-'):
        m = _OCCM_SG_DESC.fullmatch(description)
        if (
            m
            and m.group('cluster') == ident.occm
            and name.endswith(f'-{m.group("ns")}-{m.group("svc")}')
        ):
            return Match(True, 'OCCM security group name and description')
    return NO


def match_metadata(key: str, cluster: str, item: Mapping[str, Any]) -> Match:
    """A CSI volume, snapshot, backup or share: its metadata's cluster."""
    value = (item.get('metadata') or {}).get(key)
    if not cluster or value is None:
        return NO
    if value == cluster:
        return Match(True, f'metadata {key}')
    if value.startswith(cluster):
        return _near(f'not the cluster\'s: its {key} is {value!r}')
    return NO


# -- whose a resource is, by its name alone (orphans of deleted projects) --

_BY_NAME = (
    (
        'load_balancer.load_balancer',
        re.compile(rf'{OCCM_PREFIX}(?P<c>.+)_{_LABEL}_{_LABEL}'),
        'cloud provider cluster',
    ),
    (
        'load_balancer.load_balancer',
        re.compile(r'k8s-clusterapi-cluster-(?P<c>.+)-kubeapi'),
        'Cluster API cluster',
    ),
    (
        'network.network network.subnet network.router',
        re.compile(r'k8s-clusterapi-cluster-(?P<c>.+)'),
        'Cluster API cluster',
    ),
    (
        'network.security_group',
        re.compile(
            r'k8s-cluster-(?P<c>.+)-secgroup-(controlplane|worker|bastion)'
        ),
        'Cluster API cluster',
    ),
)


def made_for(kind: str, name: str) -> str:
    """The Kubernetes cluster whose controller named a resource so
    (``cloud provider cluster prod``, ``Cluster API cluster default-prod``),
    by the whole convention; '' for none. The name alone, as an orphan's
    listing has it: for a report, never a deletion's proof."""
    if not name or len(name) >= NAME_MAX:
        return ''
    for kinds, pattern, what in _BY_NAME:
        m = pattern.fullmatch(name) if kind in kinds.split() else None
        if m:
            return f'{what} {m.group("c")}'
    return ''


def clusters_of(refs: Iterable[Any]) -> dict[tuple[str, str], int]:
    """How many resources each Kubernetes cluster left, by (project,
    cluster), of resources named by their controllers."""
    out: dict[tuple[str, str], int] = {}
    for ref in refs:
        cluster = made_for(ref.kind, ref.name)
        if cluster:
            key = (ref.project_id, cluster)
            out[key] = out.get(key, 0) + 1
    return out
