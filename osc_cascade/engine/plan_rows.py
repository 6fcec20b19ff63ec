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

"""The part of a selective plan file a person may edit: its rows.

A plan file saved by a selective ``--dry-run --plan-file`` holds, besides
the plan, its filters (``selection``) and one row per resource it deletes
(``selected``), one line each::

    "selected": {
      "network.router:4f0c...@RegionOne": "delete: network.router r1 ...",
      ...
    }

To keep a resource, change ``delete`` to ``keep`` at the start of its row,
or drop the row (mind JSON's commas). The run deletes at most the rows that
still say ``delete``, of what the filters select again then, and keeps what
cannot go without a row kept (the same closure as the plan's). Nothing
else of the file may change: a digest of the rest refuses the file, as do
a row that is not a delete of the plan and a row that says neither
``delete`` nor ``keep``, each in one line.
"""

from __future__ import annotations

from collections.abc import Mapping
import hashlib
import json
from typing import Any

from osc_cascade.engine.errors import PlanError
from osc_cascade.engine.planner import Plan
from osc_cascade.engine.selection import PROJECT_KIND, Selection

#: the format of a selective plan file (a full cascade's is 3): software
#: that knows no selection refuses it rather than run it whole
SELECTIVE_FORMAT = 4

DELETE, KEEP = 'delete', 'keep'


def add(data: dict[str, Any], plan: Plan) -> None:
    """The filters, the rows and the digest of a selective ``plan``, in
    the file's ``data``."""
    if not plan.selection:
        return
    data['format'] = SELECTIVE_FORMAT
    data['selection'] = dict(plan.selection.get('filters', {}))
    data['selected'] = {
        s.target.key: f'{DELETE}: {s.target.label()}'
        for s in plan.steps.values()
        if s.is_delete and s.target.kind != PROJECT_KIND
    }
    data['digest'] = digest(data)


def digest(data: Mapping[str, Any]) -> str:
    """What the file holds but its rows (and the digest itself)."""
    rest = {k: v for k, v in data.items() if k not in ('selected', 'digest')}
    text = json.dumps(rest, sort_keys=True, separators=(',', ':'))
    return 'sha256:' + hashlib.sha256(text.encode()).hexdigest()


def read(data: Mapping[str, Any], plan: Plan) -> None:
    """The filters and the rows still selected of a selective file, in
    ``plan.selection``; a PlanError, one line, for what it cannot
    understand."""
    if data.get('format') != SELECTIVE_FORMAT:
        return
    if data.get('digest') != digest(data):
        raise PlanError(
            'the plan file was changed outside its "selected" rows (only '
            'those may be edited): make a new plan with --dry-run'
        )
    try:
        filters = Selection.from_dict(data['selection'])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PlanError(f'the plan file\'s selection: {exc}') from exc
    rows = data.get('selected')
    if not isinstance(rows, Mapping):
        raise PlanError('the plan file has no "selected" rows')
    deletes = {
        s.target.key
        for s in plan.steps.values()
        if s.is_delete and s.target.kind != PROJECT_KIND
    }
    allowed = []
    for key, row in sorted(rows.items()):
        if key not in deletes:
            raise PlanError(
                f'row {key} of the plan file is not a resource its plan '
                'deletes (a row may only be dropped or kept)'
            )
        word = row.split(':')[0].strip() if isinstance(row, str) else ''
        if word not in (DELETE, KEEP):
            raise PlanError(
                f'row {key} of the plan file says {row!r}: it must start '
                f'with "{DELETE}:" or "{KEEP}:"'
            )
        if word == DELETE:
            allowed.append(key)
    plan.selection = {'filters': filters.to_dict(), 'allowed': allowed}


def is_selective(path: str) -> bool:
    """Whether the plan file at ``path`` is a selective one (what it is
    not, or a file that cannot be read, its loading says)."""
    try:
        with open(path) as f:
            return json.load(f).get('format') == SELECTIVE_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def selection_of(plan: Plan) -> Selection | None:
    """The selection a plan was made with, bounded by its rows where it
    was read from a file; None for a plan of everything."""
    if not plan.selection:
        return None
    chosen = Selection.from_dict(plan.selection.get('filters', {}))
    allowed = plan.selection.get('allowed')
    return chosen if allowed is None else chosen.bounded(allowed)
