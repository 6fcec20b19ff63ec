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

"""Users without cloud admin on the minicloud, for the cascade without
admin (``workflows.scoped``): a member of a project, granted by its
domain's manager as a self-service cloud does, and a project the domain
manager made."""

from __future__ import annotations

import subprocess
import uuid

import openstack

from tests.functional import topology
from tests.functional.conftest import openstack_bin
from tests.functional.topology import unique


class Member:
    """A user of the domain with the member role on the project, granted
    by the domain manager, as a self-service cloud does."""

    def __init__(self, admin, manager, project):
        self.password = uuid.uuid4().hex
        self.user = admin.identity.create_user(
            name=unique('member'),
            password=self.password,
            domain_id=project.domain_id,
        )
        role = manager.identity.find_role('member')
        manager.identity.assign_project_role_to_user(project, self.user, role)
        self.auth_url = admin.config.auth['auth_url']
        self.project = project

    def connection(self):
        return openstack.connect(
            auth_url=self.auth_url,
            username=self.user.name,
            password=self.password,
            user_domain_id=self.user.domain_id,
            project_id=self.project.id,
            region_name='RegionOne',
            interface='public',
            identity_api_version='3',
            load_yaml_config=False,
            load_envvars=False,
        )

    def run(self, *args):
        """`openstack` as this member, with a token scoped to its
        project."""
        proc = subprocess.run(
            [
                openstack_bin(),
                '--os-auth-url',
                self.auth_url,
                '--os-username',
                self.user.name,
                '--os-password',
                self.password,
                '--os-user-domain-id',
                self.user.domain_id,
                '--os-project-id',
                self.project.id,
                '--os-region-name',
                'RegionOne',
                '--os-interface',
                'public',
                '--os-identity-api-version',
                '3',
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
        return proc


def domain_member(admin, name):
    """A member of a new project of domain ``managed``, which its manager
    (cloud ``minicloud-manager``) made."""
    manager = openstack.connect(cloud='minicloud-manager')
    domain = admin.identity.find_domain('managed')
    return Member(admin, manager, domain_project(manager, domain, name))


def domain_project(manager, domain, name):
    """A project the domain manager made (no admin role on it)."""
    project = manager.identity.create_project(
        name=unique(name), domain_id=domain.id
    )
    topology.CREATED.append(project.id)
    return project


def member_credential(conn, user_id, **attrs):
    """An application credential of the role member alone, made through
    ``conn`` (the user's token). Without roles, Keystone takes the token's
    and checks each against the user's assignments: in a CI run with two
    workers, while the other worker's cascade deleted a project, the
    token's roles held manager, which the user never had (400 "Could not
    find role assignment"); naming the one role it has leaves that race
    out of the tests."""
    return conn.identity.create_application_credential(
        user_id, roles=[{'name': 'member'}], **attrs
    )
