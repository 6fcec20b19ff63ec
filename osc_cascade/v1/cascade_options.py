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

"""The saved plan the cascades of projects and domains run
(``--plan-file``); ``--region`` is ``common.add_region_option``."""

from __future__ import annotations

import argparse
from typing import Any

from osc_cascade.v1.common import duration


def add_plan_file_options(group: Any, tuning: Any) -> None:
    """``--plan-file`` and ``--plan-max-age`` of a cascade (project's,
    domain's): a dry run's plan saved, and run later as shown."""
    group.add_argument(
        '--plan-file',
        metavar='<file>',
        help='Save the plan (with --dry-run) or run a saved one',
    )
    tuning.add_argument(
        '--plan-max-age',
        metavar='<duration>',
        type=duration,
        help='Refuse a --plan-file older than this (default: 24h)',
    )


def workers(text: str) -> int | None:
    """``--workers``: a count (0: none) or ``auto``."""
    if text == 'auto':
        return None
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def add_workers_option(tuning: Any) -> None:
    """``--workers`` of a project's cascade (``api.workers``)."""
    tuning.add_argument(
        '--workers',
        metavar='<n>',
        type=workers,
        default=None,
        # auto: one per core for a plan of over AUTO_STEPS (api.workers).
        # Not in --help, which must fit a screen (issue #32) and has no
        # line left: the user guide and the release note name it
        help=argparse.SUPPRESS,
    )
