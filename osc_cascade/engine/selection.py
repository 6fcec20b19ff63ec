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

"""What a selective cleanup selects (pure: no I/O).

A ``Selection`` holds the filters of ``--created-before``,
``--updated-before``, ``--skip-resource``, ``--only-resource`` and the tag
filters in OSC's spelling (``--tags``, ``--any-tags``, ``--not-tags``,
``--not-any-tags``), with the times already made absolute, so that a saved
plan re-applies exactly the filters of its preview. It says of each
resource whether it is selected and, if not, why, in one line.

What a filter cannot judge it does not select: a resource without a
creation (or update) time under a time filter, one whose service keeps no
tags under a tag filter. The planner (``engine.closure``) then decides
which of the selected resources can go without touching what stays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import dataclasses
import datetime
from typing import Any

from osc_cascade.engine.resource import ResourceRef

#: the kind every cascade runs on, which a selection never touches: a
#: selective run keeps the project
PROJECT_KIND = 'identity.project'

#: OSC's names (openstacksdk's ``project_cleanup``, ``<service>.<resource>``)
#: that are not the name of a kind here
OSC_NAMES = {
    # the SDK's cleanup skips a container and its objects together
    'object_store.object': 'object_store.container',
    # the SDK's unset of a floating IP's PTR record
    'dns.floating_ip': 'dns.floating_ip_ptr',
}

#: why a run does not select what its plan did not delete
NOT_SHOWN = 'the plan shown does not delete it (or its row says keep)'

#: the tag filters, as OSC spells them, and what each asks of the tags
TAG_FILTERS = ('tags', 'any_tags', 'not_tags', 'not_any_tags')


def parse_time(text: str) -> datetime.datetime | None:
    """An ISO 8601 time as the services write it (``Z``, an offset, or
    none: UTC), to the second; None if there is none."""
    if not text:
        return None
    try:
        when = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.astimezone(datetime.UTC).replace(microsecond=0)


def kind_name(name: str) -> str:
    """The kind an OSC resource name (``network.port``,
    ``object_store.object``) means here."""
    return OSC_NAMES.get(name, name)


@dataclasses.dataclass(frozen=True)
class Selection:
    """The filters of a selective cleanup; empty, everything is selected.

    The times are absolute (ISO 8601, UTC): an age (``7d``) is made a time
    once, when the plan is made. A resource is selected when it passes
    every filter given (as openstacksdk's ``project_cleanup``: created or
    updated at or before the time)."""

    created_before: str = ''
    updated_before: str = ''
    #: kinds never selected (``--skip-resource``)
    skip: tuple[str, ...] = ()
    #: the only kinds selected (``--only-resource``); empty: every kind
    only: tuple[str, ...] = ()
    #: has all of these tags
    tags: tuple[str, ...] = ()
    #: has one of these at least
    any_tags: tuple[str, ...] = ()
    #: has not all of these
    not_tags: tuple[str, ...] = ()
    #: has none of these
    not_any_tags: tuple[str, ...] = ()
    #: the keys of the resources a run may delete at most (the deletes of
    #: the preview that the plan file still selects); None: no such bound.
    #: Not saved: the plan's rows are
    allowed: frozenset[str] | None = dataclasses.field(
        default=None, compare=False
    )

    def __bool__(self) -> bool:
        return any(
            getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name != 'allowed'
        )

    @property
    def has_tag_filter(self) -> bool:
        return any(getattr(self, f) for f in TAG_FILTERS)

    def bounded(self, allowed: Iterable[str]) -> Selection:
        """This selection, deleting at most ``allowed`` (resource keys)."""
        return dataclasses.replace(self, allowed=frozenset(allowed))

    def why_not(self, ref: ResourceRef) -> str | None:
        """None if ``ref`` is selected, else why not, in a few words."""
        if ref.kind == PROJECT_KIND:
            return None
        if ref.kind == 'network.security_group' and ref.name == 'default':
            # Neutron makes it again on demand, without the rules given it
            return 'the default group stays with its project'
        if self.skip and ref.kind in self.skip:
            return f'{ref.kind} is skipped (--skip-resource)'
        if self.only and ref.kind not in self.only:
            return f'{ref.kind} is not asked for (--only-resource)'
        for attr, option in (
            ('created_at', 'created-before'),
            ('updated_at', 'updated-before'),
        ):
            limit = getattr(self, option.replace('-', '_'))
            if not limit:
                continue
            when = parse_time(getattr(ref, attr))
            what = attr.split('_')[0]
            if when is None:
                return f'its service gives no {what} time (--{option})'
            if when > parse_time(limit):  # type: ignore[operator]
                return f'{what} {when.isoformat()}, after --{option}'
        why = self._why_not_tags(ref.tags)
        if why:
            return why
        if self.allowed is not None and ref.key not in self.allowed:
            return NOT_SHOWN
        return None

    def _why_not_tags(self, tags: tuple[str, ...] | None) -> str | None:
        if not self.has_tag_filter:
            return None
        if tags is None:
            return 'its service keeps no tags (tag filters)'
        have = set(tags)
        if self.tags and not have >= set(self.tags):
            return f'not tagged {",".join(self.tags)} (--tags)'
        if self.any_tags and not have & set(self.any_tags):
            return f'not tagged any of {",".join(self.any_tags)} (--any-tags)'
        if self.not_tags and have >= set(self.not_tags):
            return f'tagged {",".join(self.not_tags)} (--not-tags)'
        if self.not_any_tags and have & set(self.not_any_tags):
            found = ','.join(sorted(have & set(self.not_any_tags)))
            return f'tagged {found} (--not-any-tags)'
        return None

    def notes(self, refs: Iterable[ResourceRef]) -> list[str]:
        """One line per kind that a filter cannot judge (no times, no
        tags), for the plan."""
        blind: dict[str, dict[str, int]] = {}
        for ref in refs:
            if ref.kind == PROJECT_KIND:
                continue
            lacks = (
                ('a creation time', self.created_before, ref.created_at),
                ('an update time', self.updated_before, ref.updated_at),
                ('tags', self.has_tag_filter, ref.tags is not None),
            )
            for what, asked, has in lacks:
                cannot = asked and not has
                if cannot:
                    per_kind = blind.setdefault(ref.kind, {})
                    per_kind[what] = per_kind.get(what, 0) + 1
        return [
            f'{kind}: {n} without {what}, which no filter on it selects: kept'
            for kind, lacks in sorted(blind.items())
            for what, n in lacks.items()
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            f.name: list(v) if isinstance(v, tuple) else v
            for f in dataclasses.fields(self)
            if f.name != 'allowed' and (v := getattr(self, f.name))
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Selection:
        """A saved selection; a ValueError names what is not one."""
        names = {f.name for f in dataclasses.fields(cls)} - {'allowed'}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f'unknown filter(s) {", ".join(sorted(unknown))}')
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name.endswith('_before'):
                if not isinstance(value, str) or parse_time(value) is None:
                    raise ValueError(f'{name} {value!r} is not a time')
                values[name] = value
            else:
                if not isinstance(value, list) or not all(
                    isinstance(v, str) for v in value
                ):
                    raise ValueError(f'{name} {value!r} is not a list')
                values[name] = tuple(value)
        return cls(**values)
