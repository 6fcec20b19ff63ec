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

"""Keystone's calls on users, groups and domains for the user's and the
domain's cascades: a user's credentials (EC2 and the others), its trusts
as trustor, a domain's groups, grants and identity configuration, and
the deletes of each.

The deletes go through the SDK's proxy (a 404 is done: another run, or
Keystone with the user, took it). The rest is raw, for one reason each:
the listings because the SDK drops Keystone's ``truncated`` flag
(``keystone.listing``); the reads and the PATCHes because the SDK's
resources drop what the cascade decides on or writes (a user's
``federated``, a domain's extra property ``cascade_stage``); the grants
on the domain as ``keystone.revoke`` (the SDK's grant calls drop the
answer); the domain's configuration because the SDK's DomainConfig
keeps only its ``identity`` and ``ldap`` groups.
"""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.api.keystone import Listing, _quoted, listing


def user_body(conn: Any, user_id: str) -> dict[str, Any] | None:
    """One user as Keystone answers it (``federated``, ``options``
    included); None if Keystone answers 404."""
    try:
        return request(
            conn.identity, 'GET', f'/users/{_quoted(user_id)}'
        ).json()['user']
    except sdk_exc.NotFoundException:
        return None


def users_named(conn: Any, name: str, domain_id: str = '') -> Listing:
    params = {'name': name}
    if domain_id:
        params['domain_id'] = domain_id
    return listing(conn, '/users', 'users', **params)


def disable_user(conn: Any, user_id: str) -> None:
    request(
        conn.identity,
        'PATCH',
        f'/users/{_quoted(user_id)}',
        json={'user': {'enabled': False}},
    )


def delete_user(conn: Any, user_id: str) -> None:
    """Delete; one that is gone already is no error."""
    conn.identity.delete_user(user_id, ignore_missing=True)


def credentials(conn: Any, user_id: str) -> Listing:
    """The user's credentials of every type (``ec2``, ``totp``, ``cert``
    ...)."""
    return listing(conn, '/credentials', 'credentials', user_id=user_id)


def delete_credential(conn: Any, credential_id: str) -> None:
    conn.identity.delete_credential(credential_id, ignore_missing=False)


def trusts_of(conn: Any, trustor_id: str) -> Listing:
    """The trusts the user made (as trustor)."""
    return listing(
        conn, '/OS-TRUST/trusts', 'trusts', trustor_user_id=trustor_id
    )


def delete_trust(conn: Any, trust_id: str) -> None:
    conn.identity.delete_trust(trust_id, ignore_missing=False)


def domain_body(conn: Any, domain_id: str) -> dict[str, Any] | None:
    """One domain as Keystone answers it; None if it answers 404."""
    try:
        return request(
            conn.identity, 'GET', f'/domains/{_quoted(domain_id)}'
        ).json()['domain']
    except sdk_exc.NotFoundException:
        return None


def domain_config(conn: Any, domain_id: str) -> dict[str, Any]:
    """The domain's own identity configuration (domain-specific drivers);
    {} when it has none (Keystone's 404)."""
    try:
        return (
            request(
                conn.identity, 'GET', f'/domains/{_quoted(domain_id)}/config'
            )
            .json()
            .get('config')
            or {}
        )
    except sdk_exc.NotFoundException:
        return {}


def update_domain(conn: Any, domain_id: str, **fields: Any) -> None:
    """PATCH a domain (``enabled``, or an extra property Keystone keeps
    and ``openstack domain show`` shows)."""
    request(
        conn.identity,
        'PATCH',
        f'/domains/{_quoted(domain_id)}',
        json={'domain': fields},
    )


def groups(conn: Any, domain_id: str) -> Listing:
    return listing(conn, '/groups', 'groups', domain_id=domain_id)


def delete_group(conn: Any, group_id: str) -> None:
    conn.identity.delete_group(group_id, ignore_missing=True)


def domain_role_assignments(conn: Any, domain_id: str) -> Listing:
    """The role assignments on the domain itself (users' and groups')."""
    return listing(
        conn,
        '/role_assignments',
        'role_assignments',
        **{'scope.domain.id': domain_id, 'include_names': 'True'},
    )


def domain_grant_path(domain_id: str, assignment: dict[str, Any]) -> str:
    """A grant on the domain, as ``role_assignments`` lists it: a user's
    or a group's role, or inherited by its projects (OS-INHERIT)."""
    if assignment.get('user'):
        actor = f'users/{_quoted(assignment["user"]["id"])}'
    else:
        actor = f'groups/{_quoted(assignment["group"]["id"])}'
    role = _quoted(assignment['role']['id'])
    path = f'/domains/{_quoted(domain_id)}/{actor}/roles/{role}'
    inherited = (assignment.get('scope') or {}).get('OS-INHERIT:inherited_to')
    if inherited:
        return f'/OS-INHERIT{path}/inherited_to_projects'
    return path


def revoke_domain_grant(conn: Any, path: str) -> None:
    try:
        request(conn.identity, 'DELETE', path)
    except sdk_exc.NotFoundException:
        pass


def delete_domain_config(conn: Any, domain_id: str) -> None:
    try:
        request(
            conn.identity, 'DELETE', f'/domains/{_quoted(domain_id)}/config'
        )
    except sdk_exc.NotFoundException:
        pass
