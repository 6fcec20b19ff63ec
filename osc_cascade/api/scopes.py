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

"""Sibling SDK connections of the client's: the same cloud and settings,
in another region (``sibling``), or with a token of the same user scoped
to the whole system (``system_scoped``), for a service whose default
policies show another project's resources only to such a token (Ironic's
node list with a ``project`` filter)."""

from __future__ import annotations

import copy
import threading
from typing import Any

from keystoneauth1 import exceptions as ksa_exc
from keystoneauth1 import loading
from keystoneauth1 import session as ksa_session
from openstack.config import cloud_region

#: the auth options that scope a token to a project or a domain
_SCOPE_OPTIONS = frozenset(
    {
        'project_id',
        'project_name',
        'project_domain_id',
        'project_domain_name',
        'tenant_id',
        'tenant_name',
        'domain_id',
        'domain_name',
        'system_scope',
    }
)
_LOCK = threading.Lock()
#: the client's session -> the system-scoped session of its user, or None
_SESSIONS: dict[int, tuple[Any, Any]] = {}
#: a connection -> its system-scoped sibling, or None
_SIBLINGS: dict[int, tuple[Any, Any]] = {}


def sibling(conn: Any, *, session: Any = None, region: str = '') -> Any:
    """A connection with ``conn``'s settings, through ``session`` (by
    default ``conn``'s: the same token), to ``region`` (by default
    ``conn``'s), with its own proxies."""
    # as openstacksdk's own Connection.global_request makes a sibling
    params = copy.deepcopy(conn.config.config)
    if region:
        params['region_name'] = region
        for key in [k for k in params if k.endswith('_region_name')]:
            del params[key]
    # (a sibling's own config has the discovery cache of its session)
    params.pop('discovery_cache', None)
    session = session or conn.session
    config = cloud_region.from_session(
        session=session,
        app_name=conn.config._app_name,
        app_version=conn.config._app_version,
        discovery_cache=session._discovery_cache,
        **params,
    )
    # from_session makes strings of the numbers in a map (rate_limit:
    # {network: 2.0} becomes '2.0'), which keystoneauth's adapter divides
    # by: each proxy of the region failed to be made
    for key in ('rate_limit', 'concurrency'):
        if isinstance(params.get(key), dict):
            config.config[key] = params[key]
    config._name = conn.name
    return conn.__class__(config=config)


def system_scoped(conn: Any) -> Any | None:
    """A connection to ``conn``'s region as the same user (clouds.yaml's
    auth, its project or domain left out) with a token scoped to the
    system (``system_scope: all``), or None where there is none: an auth
    type that cannot ask for one, or Keystone's refusal (a user without a
    role on the system: 401). Keystone is asked once per client session;
    the answer is kept."""
    with _LOCK:
        return _kept(
            _SIBLINGS,
            conn,
            lambda: _system_sibling(conn),
        )


def _system_sibling(conn: Any) -> Any | None:
    session = _kept(_SESSIONS, conn.session, lambda: _system_session(conn))
    if session is None:
        return None
    return sibling(
        conn, session=session, region=conn.config.get_region_name() or ''
    )


def _kept(cache: dict[int, tuple[Any, Any]], key: Any, make: Any) -> Any:
    # by identity: an object's id is reused once it is gone
    if id(key) not in cache or cache[id(key)][0] is not key:
        cache[id(key)] = (key, make())
    return cache[id(key)][1]


def _system_session(conn: Any) -> Any | None:
    config = conn.config.config
    try:
        loader = loading.get_plugin_loader(config.get('auth_type') or '')
    except ksa_exc.NoMatchingPlugin:
        return None
    names = {option.dest for option in loader.get_options()}
    if 'system_scope' not in names:
        return None  # admin_token, none: no token of a user
    options = {
        k: v
        for k, v in (config.get('auth') or {}).items()
        if k in names and k not in _SCOPE_OPTIONS and v is not None
    }
    options['system_scope'] = 'all'
    client = conn.session
    try:
        session = ksa_session.Session(
            auth=loader.load_from_options(**options),
            verify=client.verify,
            cert=client.cert,
            timeout=client.timeout,
        )
        session.get_token()
    except ksa_exc.ClientException:
        # refused (no role on the system), or Keystone not reached: the
        # client's own token it is, whose refusals are reported
        return None
    return session
