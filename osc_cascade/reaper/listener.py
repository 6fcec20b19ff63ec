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

"""Keystone's deletions, as oslo.messaging notifications.

Keystone announces a deleted project as ``identity.project.deleted`` (and a
deleted domain as ``identity.domain.deleted``, after one
``identity.project.deleted`` for each of its projects and one for the
domain itself, which Keystone stores as a project). The id is in the
payload: ``resource_info`` in the basic format, the CADF event's
``target.id`` (and ``resource_info`` too) in the CADF format
(``notification_format`` in keystone.conf).

The listener runs in a pool of its own (``[reaper] listener_pool``): every
pool gets a copy of each notification, beside Ceilometer or anyone else
who reads the queue, and the reapers of one pool share the notifications,
each handled by one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import logging
from typing import Any

import oslo_messaging

LOG = logging.getLogger(__name__)

EVENT_TYPES = r'^identity\.(project|domain)\.deleted$'


def deleted_id(payload: Any) -> str | None:
    """The id of the deleted project or domain, in either format; None if
    the payload has none (or is a CADF event of a failed deletion)."""
    if not isinstance(payload, Mapping):
        return None
    target = payload.get('target')
    if isinstance(target, Mapping):  # CADF
        if payload.get('outcome', 'success') != 'success':
            return None
        found = target.get('id') or payload.get('resource_info')
    else:
        found = payload.get('resource_info')
    if not isinstance(found, str) or not found.strip():
        return None
    return found.strip()


class DeletionEndpoint:
    """Hands the id of each deleted project to ``on_deleted(id, why)``;
    the purge happens later (after the grace period), so the
    notification is acknowledged at once."""

    filter_rule = oslo_messaging.NotificationFilter(event_type=EVENT_TYPES)

    def __init__(self, on_deleted: Callable[[str, str], None]):
        self.on_deleted = on_deleted

    def info(
        self,
        ctxt: Any,
        publisher_id: str,
        event_type: str,
        payload: Any,
        metadata: Mapping[str, Any],
    ) -> Any:
        found = deleted_id(payload)
        why = (
            f'{event_type} from {publisher_id}, message '
            f'{(metadata or {}).get("message_id", "?")}'
        )
        if found is None:
            LOG.warning('%s names no project: ignored', why)
        else:
            self.on_deleted(found, why)
        return oslo_messaging.NotificationResult.HANDLED


def targets(exchange: str, topics: list[str]) -> list[oslo_messaging.Target]:
    return [oslo_messaging.Target(topic=t, exchange=exchange) for t in topics]


def listener(
    transport: Any,
    endpoint: DeletionEndpoint,
    *,
    exchange: str,
    topics: list[str],
    pool: str,
) -> Any:
    """The notification listener (threads; oslo.messaging reconnects on
    its own when the broker restarts)."""
    return oslo_messaging.get_notification_listener(
        transport,
        targets(exchange, topics),
        [endpoint],
        executor='threading',
        pool=pool,
    )
