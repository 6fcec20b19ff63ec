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

An admin lists any project's with ``all_projects`` and ``project_id``, a
page at a time (``marker``/``limit``, a ``next`` link). Mistral refuses a
workflow that any project's trigger starts ("Can't delete workflow that
has cron triggers associated", 400): the triggers go first. A public
workflow (others may run it, or start it from their triggers) is kept
unless ``--delete-shared``.
"""

from __future__ import annotations

from typing import ClassVar

from openstack import exceptions as sdk_exc

from osc_cascade.api.http import request
from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge
from osc_cascade.kinds.base import ResourceKind, delete_of, owned
from osc_cascade.kinds.paging import item_ref, pages
from osc_cascade.kinds.registry import register


class _MistralKind(ResourceKind):
    service_type = 'workflow'
    synchronous_delete = True
    #: the collection's path and JSON key: ``workflows``
    collection: ClassVar[str]

    def list(self, conn, project_id):
        query = {'all_projects': 'true'}
        if project_id:
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

    def primary_step(self, ref):
        if ref.attrs.get('public') and not self.options.get('delete_shared'):
            return resource.keep(
                ref, 'public workflow: other projects may run it', shared=True
            )
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
