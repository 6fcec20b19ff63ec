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

"""The plan's own calls (a delete, the GET of a status or of a recheck)
as openstacksdk's proxy makes them, without its resource objects.

A proxy's ``delete_port(id)`` or ``get_volume(id)`` builds a resource
object, asks the service's microversion again (a walk of the catalog and
of its version document), makes the call, and reads the answer back into
the object: about 1.4 ms of the client's CPU per call more than the same
call through the proxy's own ``request`` (measured apart:
benchmarks.call_cost), which at N=10,000 is most of what the client
spends besides the HTTP call. Here the same request goes through the same
proxy (its endpoint, auth, retries, headers, the microversion the SDK
chooses, asked once per proxy and resource class) and its answer is
checked by the SDK's own ``raise_from_response``: the same URL, the same
exceptions. What a GET answered is read through the SDK resource class's
own attribute descriptors (``Found``), so that ``found.project_id`` of a
volume is still its ``os-vol-tenant-attr:tenant_id``, converted as the
SDK converts it.

Only resource classes whose path has no other part than their id
(``/ports``, ``/volumes``) are made so; the rest is an error here, for
the kind to keep calling its proxy.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib import parse
import weakref

from openstack import exceptions as sdk_exc
from openstack import fields as sdk_fields
from openstack import utils as sdk_utils

from osc_cascade.api import workers

_LOCK = threading.Lock()
#: proxy -> {what was asked: the answer}: a proxy's microversions do not
#: change while it lives (the SDK negotiates them from the service's
#: version document, which it reads once)
_ASKED: weakref.WeakKeyDictionary[Any, dict[Any, Any]]
_ASKED = weakref.WeakKeyDictionary()
#: resource class -> its attributes' descriptors, by attribute name
_FIELDS: dict[type, dict[str, Any]] = {}


def _asked(proxy: Any, key: Any, ask: Any) -> Any:
    try:
        cache = _ASKED.get(proxy)
    except TypeError:  # not weakly referable: asked every time
        return ask()
    if cache is not None and key in cache:
        return cache[key]
    answer = ask()
    with _LOCK:
        _ASKED.setdefault(proxy, {})[key] = answer
    return answer


def microversion(proxy: Any, sdk_resource: type) -> str | None:
    """The microversion openstacksdk sends with a call of ``sdk_resource``
    through ``proxy`` (its ``_get_microversion``), asked once."""
    return _asked(
        proxy,
        ('microversion', sdk_resource),
        lambda: sdk_resource._get_microversion(proxy),  # type: ignore[attr-defined]
    )


def supports(proxy: Any, version: str) -> bool:
    """``openstack.utils.supports_microversion(proxy, version)``, asked
    once per proxy."""
    return _asked(
        proxy,
        ('supports', version),
        lambda: sdk_utils.supports_microversion(proxy, version),
    )


def path_of(sdk_resource: type, id_: str) -> str:
    """The path of one resource, as ``Resource._prepare_request`` makes
    it (the id as it is, not quoted: as the SDK sends it)."""
    base = sdk_resource.base_path  # type: ignore[attr-defined]
    try:
        path = base % {'id': id_}
    except KeyError as exc:
        raise ValueError(
            f'{sdk_resource.__name__} has other parts in its path than '
            f'its id ({base}): call its proxy'
        ) from exc
    return sdk_utils.urljoin(path, id_)


def delete(
    proxy: Any,
    sdk_resource: type,
    id_: str,
    *,
    ignore_missing: bool = True,
    params: dict[str, Any] | None = None,
) -> None:
    """What ``proxy._delete(sdk_resource, id_, ignore_missing, params=)``
    does: the DELETE, its error answer raised as the SDK raises it (a 404
    not at all with ``ignore_missing``)."""
    url = path_of(sdk_resource, id_)
    if params:
        url += '?' + parse.urlencode(params)
    response = workers.send(
        proxy, url, 'DELETE', microversion(proxy, sdk_resource)
    )
    try:
        sdk_exc.raise_from_response(response)
    except sdk_exc.NotFoundException:
        if not ignore_missing:
            raise


def get(
    proxy: Any,
    sdk_resource: type,
    id_: str,
) -> Found:
    """What ``proxy._get(sdk_resource, id_)`` answers, as a ``Found``;
    an error answer raised as the SDK raises it, with its message."""
    response = workers.send(
        proxy,
        path_of(sdk_resource, id_),
        'GET',
        microversion(proxy, sdk_resource),
    )
    sdk_exc.raise_from_response(
        response,
        error_message=f'No {sdk_resource.__name__} found for {id_}',
    )
    body = response.json() if response.content else {}
    key = sdk_resource.resource_key  # type: ignore[attr-defined]
    if key and key in body:
        body = body[key]
    return Found(sdk_resource, body)


def _fields(sdk_resource: type) -> dict[str, Any]:
    fields = _FIELDS.get(sdk_resource)
    if fields is None:
        fields = {}
        for cls in reversed(sdk_resource.__mro__):
            for name, value in vars(cls).items():
                if isinstance(value, sdk_fields.Body):
                    fields[name] = value
        _FIELDS[sdk_resource] = fields
    return fields


class Found:
    """What a GET answered, read as openstacksdk's resource object reads
    it: each attribute through the class's own descriptor (its key in the
    answer, its default, its type). Attributes only, for reading."""

    def __init__(self, sdk_resource: type, body: dict[str, Any]):
        self._sdk_resource = sdk_resource
        # the names the descriptors read (Resource's components)
        self._body = body
        self._header: dict[str, Any] = {}
        self._uri: dict[str, Any] = {}
        self._computed: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith('_'):
            raise AttributeError(name)
        field = _fields(self._sdk_resource).get(name)
        if field is None:
            raise AttributeError(
                f'{self._sdk_resource.__name__} has no attribute {name}'
            )
        return field.__get__(self, self._sdk_resource)

    def __repr__(self) -> str:
        return f'Found({self._sdk_resource.__name__}, {self._body!r})'
