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

"""The selection options of a selective cleanup, as ``openstack project
cleanup`` and OSC's list commands spell them: ``--created-before``,
``--updated-before``, ``--skip-resource`` (and its include form
``--only-resource``), ``--tags``, ``--any-tags``, ``--not-tags``,
``--not-any-tags``.

Options that go together share a line of the help (one argparse action
with several option strings, each recorded under its own name), so that a
command's help still fits a screen.
"""

from __future__ import annotations

import argparse
import datetime
from typing import Any

from osc_lib import exceptions

from osc_cascade.v1.common import UsageGroup, duration

#: the parsed names of the selection options, for ``refuse_stray_options``
DESTS = (
    'created_before',
    'updated_before',
    'skip_resource',
    'only_resource',
    'tags',
    'any_tags',
    'not_tags',
    'not_any_tags',
)

#: what a selective run guarantees, for the help's epilog
EPILOG = (
    'A selection keeps the project, drains nothing, deletes no more than '
    'planned.'
)


class Age(float):
    """An age in seconds, given: true even when it is 0 (``0s``: now)."""

    def __bool__(self) -> bool:
        return True


def when(text: str) -> str | float:
    """A time as OSC takes it (``2026-11-28T00:00:00``, UTC unless it says
    otherwise; ISO 8601), made ISO UTC; or an age (``24h``, ``7d``) in
    seconds, made a time when the plan is made."""
    try:
        return Age(duration(text))
    except argparse.ArgumentTypeError:
        pass
    try:
        then = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'{text!r} is neither a time such as 2026-11-28T00:00:00 nor '
            'an age such as 24h or 7d'
        ) from None
    if then.tzinfo is None:
        then = then.replace(tzinfo=datetime.UTC)
    return then.astimezone(datetime.UTC).isoformat(timespec='seconds')


def names(text: str) -> list[str]:
    """``a,b`` (OSC's tag lists), ``--tags a --tags b`` alike."""
    return [t for t in (s.strip() for s in text.split(',')) if t]


class _Each(argparse.Action):
    """One help entry for several options: each is stored under its own
    name (``--not-tags`` in ``not_tags``), lists extended."""

    def __call__(self, parser, namespace, values, option_string=None):
        dest = (option_string or self.dest).lstrip('-').replace('-', '_')
        if isinstance(values, list):
            values = (getattr(namespace, dest, None) or []) + values
        setattr(namespace, dest, values)


def add_selection_options(
    parser: argparse.ArgumentParser, title: str = 'keeps project'
) -> None:
    """The selection group of a command that deletes a project's
    resources (``title``: what the group's title adds); in the usage
    line it is one ``[selection options]``."""
    group = UsageGroup(
        parser.add_argument_group(f'selection (osc-cascade; {title})'),
        'selection options',
    )
    parser.set_defaults(**{d: None for d in DESTS})
    group.add_argument(
        '--created-before',
        '--updated-before',
        metavar='<time>',
        dest='created_before',
        type=when,
        action=_Each,
        help='Only what is older: a UTC time, or an age (24h, 7d)',
    )
    group.add_argument(
        '--skip-resource',
        '--only-resource',
        metavar='<type>',
        dest='skip_resource',
        type=lambda t: [t],
        action=_Each,
        help='Not / only this type (network.port); repeatable',
    )
    group.add_argument(
        '--tags',
        '--any-tags',
        '--not-tags',
        '--not-any-tags',
        metavar='<tags>',
        dest='tags',
        type=names,
        action=_Each,
        help='Has all / any / not all / none of <tags> (a,b)',
    )


def given(parsed_args: argparse.Namespace) -> bool:
    """Whether any selection option was given."""
    return any(getattr(parsed_args, d, None) for d in DESTS)


def selection_of(parsed_args: argparse.Namespace, known: Any) -> Any:
    """The ``Selection`` and the ``Ages`` the options ask for; an unknown
    resource type is refused in one line. ``known``: the kind names."""
    from osc_cascade.engine.selection import Selection, kind_name
    from osc_cascade.workflows.selective import Ages

    kinds: dict[str, tuple[str, ...]] = {}
    for dest in ('skip_resource', 'only_resource'):
        asked = [kind_name(n) for n in getattr(parsed_args, dest) or []]
        unknown = sorted(set(asked) - set(known))
        if unknown:
            raise exceptions.CommandError(
                f'--{dest.replace("_", "-")}: unknown resource type '
                f'{", ".join(unknown)} (types are the plan\'s, as '
                'network.port, or OSC\'s, as object_store.object)'
            )
        kinds[dest] = tuple(sorted(set(asked)))
    times: dict[str, str] = {}
    ages: dict[str, float] = {}
    for what in ('created', 'updated'):
        value = getattr(parsed_args, f'{what}_before')
        if isinstance(value, float):
            ages[what] = value
        elif value:
            times[f'{what}_before'] = value
    selection = Selection(
        skip=kinds['skip_resource'],
        only=kinds['only_resource'],
        **times,
        **{
            d: tuple(getattr(parsed_args, d) or ())
            for d in ('tags', 'any_tags', 'not_tags', 'not_any_tags')
        },
    )
    return selection, Ages(**ages)


def known_kinds() -> list[str]:
    """The types a selection may name: the kinds of a project's."""
    from osc_cascade import kinds

    return [n for n, c in kinds.CLASSES.items() if c.scope == kinds.PROJECT]


def resolved(parsed_args: argparse.Namespace, now: Any) -> Any:
    """The ``Selection`` the options ask for, its ages made times by
    ``now()`` (the cloud's clock); None when no option was given."""
    if not given(parsed_args):
        return None
    chosen, ages = selection_of(parsed_args, known_kinds())
    return ages.resolve(chosen, now()) if ages else chosen
