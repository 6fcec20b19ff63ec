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


"""What a stack's template says Heat does with each resource when the
stack goes: its ``deletion_policy`` (Delete, Retain, Snapshot) and its
``external_id`` (adopted: Heat's ResourceDefinition makes it Retain).

Read from a stack's abandon or export data (Heat's prepare_abandon): each
stack's ``template`` and ``resources``, a nested stack's data in place of
its resource's. A delete swaps in an empty template, so the data of a
stack being deleted says nothing: then the policy is not known ('')."""

from __future__ import annotations

from collections.abc import Iterable
import dataclasses
from typing import Any

from osc_cascade.workflows.clusters.records import StackResource

DELETE = 'Delete'
RETAIN = 'Retain'
SNAPSHOT = 'Snapshot'
#: Heat's spellings (hot/template.py and cfn/template.py)
_SPELLINGS = {
    'delete': DELETE,
    'retain': RETAIN,
    'snapshot': SNAPSHOT,
}


#: the Heat type whose template property says whether its delete empties it
CONTAINER = 'OS::Swift::Container'
#: Heat's Boolean property values (oslo's strutils.bool_from_string, strict)
_TRUE = frozenset({'1', 't', 'true', 'on', 'y', 'yes'})
_FALSE = frozenset({'0', 'f', 'false', 'off', 'n', 'no'})


@dataclasses.dataclass(frozen=True)
class Policy:
    deletion_policy: str
    external_id: str = ''
    purge_on_delete: bool | None = None


def _param(value: Any, data: dict[str, Any]) -> Any:
    """The value a ``get_param`` names (the environment's value, else the
    parameter's default), or ``value`` itself."""
    if isinstance(value, dict) and list(value) in (['get_param'], ['Ref']):
        name = next(iter(value.values()))
        if not isinstance(name, str):
            return ''
        params = (data.get('environment') or {}).get('parameters') or {}
        template = data.get('template') or {}
        declared = (
            template.get('parameters') or template.get('Parameters') or {}
        ).get(name) or {}
        value = params.get(
            name, declared.get('default', declared.get('Default'))
        )
    return value


def _resolve(value: Any, data: dict[str, Any]) -> str:
    """A literal policy, or one a ``get_param`` names; '' for anything
    else."""
    if value is None:
        return DELETE
    value = _param(value, data)
    if not isinstance(value, str):
        return ''
    return _SPELLINGS.get(value.lower(), '')


def _purge(definition: dict[str, Any], data: dict[str, Any]) -> bool | None:
    """A container's PurgeOnDelete (Heat's default: False), literal or
    from a parameter; None when it cannot be told (another function)."""
    props = definition.get('properties') or definition.get('Properties')
    if not isinstance(props, dict):
        return False if props is None else None
    value = _param(props.get('PurgeOnDelete', False), data)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else ''
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _walk(
    data: dict[str, Any], inherited: str, out: dict[tuple[str, str], Policy]
) -> None:
    template = data.get('template') or {}
    defs = template.get('resources') or template.get('Resources') or {}
    for name, entry in (data.get('resources') or {}).items():
        definition = defs.get(name)
        if not isinstance(definition, dict) or not isinstance(entry, dict):
            continue
        external = definition.get('external_id')
        if isinstance(external, str) and external:
            policy = Policy(RETAIN, external)
        else:
            policy = Policy(
                _resolve(
                    definition.get(
                        'deletion_policy', definition.get('DeletionPolicy')
                    ),
                    data,
                )
            )
        if definition.get('type') == CONTAINER:
            policy = dataclasses.replace(
                policy, purge_on_delete=_purge(definition, data)
            )
        if inherited == RETAIN:
            # Heat keeps a retained nested stack whole
            policy = dataclasses.replace(policy, deletion_policy=RETAIN)
        out[(str(data.get('id') or ''), name)] = policy
        if 'template' in entry:  # a nested stack's data
            _walk(entry, policy.deletion_policy, out)


def read(
    datas: Iterable[dict[str, Any] | None],
) -> dict[tuple[str, str], Policy]:
    """Each resource's policy, by (its stack's id, its name), from the
    first of ``datas`` (abandon or export data) that holds it."""
    out: dict[tuple[str, str], Policy] = {}
    for data in datas:
        found: dict[tuple[str, str], Policy] = {}
        if isinstance(data, dict):
            _walk(data, '', found)
        for key, policy in found.items():
            out.setdefault(key, policy)
    return out


def with_policies(
    resources: Iterable[StackResource],
    datas: Iterable[dict[str, Any] | None],
) -> list[StackResource]:
    """The resources, each with what the template says of it; one it no
    longer says keeps what it had (a manifest's)."""
    policies = read(datas)
    out = []
    for res in resources:
        policy = policies.get((res.stack_id, res.name))
        if policy is not None:
            res = dataclasses.replace(
                res,
                deletion_policy=policy.deletion_policy,
                external_id=policy.external_id,
                purge_on_delete=policy.purge_on_delete,
            )
        out.append(res)
    return out
