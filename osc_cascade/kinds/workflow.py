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

"""Mistral: workflows, and the cron and event triggers that keep starting
them after their project is gone.

An admin lists any project's with ``all_projects`` and ``project_id`` (the
filter holds; the event trigger list takes no filter, and answers any with
a 500: it lists every project's, and ``owned`` keeps the project's), a
page at a time (``marker``/``limit``, a ``next`` link).
``all_projects`` is an admin's: a token scoped to the project without
admin (the cascade without cloud admin) is refused it (403) and asks with
no filter, which lists its project's, other projects' public workflows and
those shared with it (``owned`` keeps the project's). Mistral refuses a
workflow that any project's trigger starts ("Can't delete workflow that
has cron triggers associated", 400): the triggers go first. A public
workflow (others may run it, or start it from their triggers) is kept
unless ``--delete-shared``. A private workflow shared with other projects
(its members) is deleted by Mistral with its members, without a word:
through the project's token the cascade asks each private workflow's
members and keeps one that has any, unless ``--delete-shared``. Mistral
shows a workflow's members to its own project alone (an admin of another
project gets an empty list, not a refusal): an admin's cascade cannot see
them, so it keeps every private workflow unless ``--delete-shared``. All
of it is what the minicloud's Mistral 23 does
(``tests/functional/test_real_mistral.py``).
"""

from __future__ import annotations

from typing import ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.calls import fan_out
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register

#: why an admin's cascade keeps a private workflow (module docstring)
MEMBERS_UNSEEN = (
    "Mistral shows a workflow's members to its own project alone, so an "
    'admin cannot tell whether other projects share it (its delete takes '
    'their shares): pass --delete-shared to delete it, or run the cascade '
    'as a member of the project'
)


class _MistralKind(ResourceKind):
    service_type = 'workflow'
    synchronous_delete = True
    #: the collection's path and JSON key: ``workflows``
    collection: ClassVar[str]

    def list(self, conn, project_id):
        # a non-admin is refused all_projects, and lists its own with
        # others' it may use; owned() keeps the project's
        query = {} if self.scoped else {'all_projects': 'true'}
        if project_id and not self.scoped and not self.lists_every_project:
            query['project_id'] = project_id
        return owned(
            (
                item_ref(self.name, item, **self.attrs_of(item))
                for item in pages(
                    conn.workflow,
                    f'/{self.collection}',
                    self.collection,
                    query,
                )
            ),
            project_id,
        )

    def attrs_of(self, item):
        return {}

    #: the SDK proxy's delete of the collection, if it has one
    sdk_delete: ClassVar[str | None] = None

    def delete(self, conn, ref):
        if self.sdk_delete:
            getattr(conn.workflow, self.sdk_delete)(
                ref.id, ignore_missing=False
            )
            return
        # raw: openstacksdk (4.16 to 4.22) has no event triggers
        request(conn.workflow, 'DELETE', f'/{self.collection}/{ref.id}')


@register
class Workflow(_MistralKind):
    name = 'workflow.workflow'
    collection = 'workflows'
    sdk_delete = 'delete_workflow'
    heat_types = ('OS::Mistral::Workflow',)

    def attrs_of(self, item):
        return {'public': True} if item.get('scope') == 'public' else {}

    def list(self, conn, project_id):
        refs = super().list(conn, project_id)
        if not self.scoped:
            # an admin is shown no members: whether it is shared is unknown
            for ref in refs:
                if not ref.attrs.get('public'):
                    ref.attrs['members_unseen'] = True
        else:
            # its members show only to the workflow's own project
            private = [r for r in refs if not r.attrs.get('public')]
            for ref, members in zip(
                private,
                fan_out(
                    lambda r: self._members(conn, r.id),
                    private,
                    service=self.service_type,
                ),
                strict=True,
            ):
                if members:
                    ref.attrs['shared_with'] = members
        return refs

    @staticmethod
    def _members(conn, workflow_id):
        """The projects the workflow is shared with (accepted, or offered
        and not yet accepted)."""
        answer = request(
            conn.workflow, 'GET', f'/workflows/{workflow_id}/members'
        )
        return sorted(
            m['member_id']
            for m in answer.json().get('members') or []
            if m.get('status') in ('accepted', 'pending')
        )

    def primary_step(self, ref):
        if not self.options.get('delete_shared'):
            if ref.attrs.get('public'):
                return resource.keep(
                    ref,
                    'public workflow: other projects may run it',
                    shared=True,
                )
            if ref.attrs.get('shared_with'):
                return resource.keep(
                    ref,
                    'shared with ' + ', '.join(ref.attrs['shared_with']),
                    shared=True,
                )
            if ref.attrs.get('members_unseen'):
                return resource.keep(ref, MEMBERS_UNSEEN, shared=True)
        return super().primary_step(ref)

    def is_in_use(self, exc):
        # a trigger that is still going away
        return super().is_in_use(exc) or (
            isinstance(exc, sdk_exc.BadRequestException)
            and 'triggers associated' in str(exc)
        )


class _Trigger(_MistralKind):
    def attrs_of(self, item):
        return {'workflow_id': item.get('workflow_id')}

    def relations(self, ref, inventory):
        yield Edge(
            delete_of(self.name, ref.id),
            delete_of(Workflow.name, ref.attrs.get('workflow_id')),
        )


@register
class CronTrigger(_Trigger):
    name = 'workflow.cron_trigger'
    collection = 'cron_triggers'
    sdk_delete = 'delete_cron_trigger'
    heat_types = ('OS::Mistral::CronTrigger',)


@register
class EventTrigger(_Trigger):
    name = 'workflow.event_trigger'
    collection = 'event_triggers'
    # its list takes no filter (a 500: "'NoneType' object has no attribute
    # 'datatype'"): every project's, of which owned() keeps the project's
    lists_every_project = True
