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

"""Raw list calls read to the end, page by page.

Services cut a list at a page size of their own (Barbican at 10, Trove at
20, Neutron, Octavia, Magnum, Ironic and Mistral at their configured
maximum) and link the next page: a ``next`` URL in the body (Barbican,
Magnum, Mistral, Ironic), a ``links`` or ``<key>_links`` list with a
``rel: next`` entry (Trove; Neutron, Octavia, Nova). The link's query (its
marker, offset or limit) is asked of the same path with the caller's own
filters, which some links drop (Octavia's and Magnum's keep only the
paging) and whose host may be one the client cannot reach. Where the body
links nothing, an RFC 5988 ``Link: <...>; rel="next"`` header is followed,
as openstacksdk follows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib import parse

from osc_cascade.api.http import request
from osc_cascade.engine.resource import ResourceRef


def next_link(
    body: dict[str, Any], key: str, headers: dict[str, Any] | None = None
) -> str:
    """The URL of the next page that a list's answer names, or '';
    ``headers``: the answer's parsed ``Link`` headers (``response.links``),
    read when the body links nothing."""
    if isinstance(body.get('next'), str):
        return body['next']
    for links in (body.get(f'{key}_links'), body.get('links')):
        for link in links or []:
            if isinstance(link, dict) and link.get('rel') == 'next':
                return link.get('href') or ''
    following = headers.get('next') if isinstance(headers, dict) else None
    return (following or {}).get('url') or ''


def pages(
    proxy: Any,
    path: str,
    key: str,
    params: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Iterator[dict[str, Any]]:
    """Every item of the list at ``path`` (the answer's ``key``), each
    page asked with ``params`` (a filter of None is not asked) and the
    next link's paging. A page that
    brings nothing new, or a link that asks the same again, ends it (a
    service whose marker does not move would otherwise loop)."""
    query = {k: v for k, v in (params or {}).items() if v is not None}
    seen: set[Any] = set()
    while True:
        # raw: the SDK follows a next link as written, which may drop the
        # caller's filters or name a host this client cannot reach
        response = request(proxy, 'GET', path, params=query, **kwargs)
        body = response.json()
        items = body.get(key) or []
        new = [i for i in items if _identity(i) not in seen]
        yield from new
        seen.update(_identity(i) for i in new)
        link = next_link(body, key, getattr(response, 'links', None))
        if not link or not new:
            return
        # a key the link repeats (Neutron's ``network_id=a&network_id=b``)
        # keeps every value: read as one, the next pages would ask for
        # the last alone
        paging = {
            k: v if len(v) > 1 else v[0]
            for k, v in parse.parse_qs(parse.urlparse(link).query).items()
        }
        following = {**query, **paging}
        if following == query:
            return
        query = following


def _identity(item: Any) -> Any:
    if isinstance(item, dict):
        for field in ('id', 'uuid', 'project_id'):
            if item.get(field):
                return (field, item[field], item.get('resource'))
    return repr(item)


def item_ref(
    kind: str,
    item: dict[str, Any],
    *,
    id_key: str = 'id',
    name_key: str = 'name',
    project_key: str = 'project_id',
    created_key: str = 'created_at',
    updated_key: str = 'updated_at',
    owner: str | None = None,
    **attrs: Any,
) -> ResourceRef:
    """The reference of an item of a raw list; ``attrs`` without the
    empty ones. ``owner``: its project, where the item's ``project_key``
    does not say it alone."""
    return ResourceRef(
        kind=kind,
        id=item[id_key],
        name=item.get(name_key) or '',
        project_id=owner if owner is not None else item.get(project_key) or '',
        attrs={k: v for k, v in attrs.items() if v not in (None, [], {})},
        created_at=item.get(created_key) or '',
        updated_at=item.get(updated_key) or '',
        tags=tags_of(item),
    )


def tags_of(item: Any) -> tuple[str, ...] | None:
    """An item's tags (Neutron's, Nova's, Glance's, Octavia's, Heat's
    ``tags``), sorted; None where the item has none to list: the tag
    filters never select it."""
    tags = item.get('tags') if isinstance(item, dict) else None
    if not isinstance(tags, list | tuple):
        return None
    return tuple(sorted(str(t) for t in tags))
