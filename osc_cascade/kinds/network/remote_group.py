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

"""Before a security group's delete: does another project's rule name it
as its remote group now?

Neutron deletes the rules that name a group as their remote group with
the group (``remote_group_id`` is ON DELETE CASCADE): deleting it would
delete another project's rule. The plan keeps a group that the rules
listed with the groups name (``core.foreign_remote_rules``); a rule added
after that list is seen only by reading the rules again, right before the
delete: ``GET /v2.0/security-group-rules?remote_group_id=<id>``, the
groups deleted at the same moment asked in one list.
"""

from __future__ import annotations

from osc_cascade.kinds.network.common import (
    neutron_items_where,
    neutron_project,
    others,
)

RULES = ('/security-group-rules', 'security_group_rules')


def foreign_rules_now(conn, ref) -> list[list[str]]:
    """``[rule id, project]`` of each rule of another project (or of no
    project the list names: in doubt, another) that names the group as its
    remote group now. No project filter: Neutron would first make that
    project's ``default`` group (``_ensure_default_security_group``)."""
    rules = neutron_items_where(conn, *RULES, 'remote_group_id', ref.id)
    return sorted(
        [rule['id'], neutron_project(rule)]
        for rule in rules
        if rule.get('remote_group_id') == ref.id
        and (not ref.project_id or neutron_project(rule) != ref.project_id)
    )


def why_kept(rules: list[list[str]]) -> str:
    """The one line that says why the group stays, or '' if no rule of
    another project names it."""
    if not rules:
        return ''
    rule_id, other = rules[0]
    return (
        f'rule {rule_id} of project {other or "(unknown)"} names it as '
        f'remote group{others(rules)}: deleting the group would delete '
        'that rule'
    )
