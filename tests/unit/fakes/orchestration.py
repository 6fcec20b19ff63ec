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

"""Heat, answering the way the minicloud's real Heat did (shared notes,
minicloud-heat-octavia-swift.md sections 3 and 11): a lookup by name or id
redirects (302) to ``/stacks/{name}/{id}`` in the stack's own project, the
plain list shows the admin every project's stacks while ``global_tenant``
is refused (stacks:global_index denies everybody by default),
abandon and export answer 400 ``NotSupported`` while ``abandon_enabled`` is
off, a delete swaps in an empty template so that abandon and export return
no resources afterwards, an abandon forgets the stack and its nested stacks
but leaves every physical resource in place, and the resource list still
shows the rows of a stack that is being deleted.

A stack's ``on_delete`` says what its delete does: ``complete`` (gone after
``delete_polls`` GETs, physical resources included), ``hang`` (stays
DELETE_IN_PROGRESS) or ``fail`` (DELETE_FAILED at the next GET).

``lost_abandon_answers`` are abandons that Heat carries out but whose
answer the caller does not get: a status (a proxy's 502 or 504 while
heat-engine went on) or ``'drop'`` (the connection drops)."""

from __future__ import annotations

import copy
import re

import requests

from tests.unit.fakes.common import (
    ADMIN_PROJECT,
    HEAT,
    Redirect,
    new_id,
    versions,
)

#: Heat types whose physical resource the fake can find and delete
PHYSICAL = {
    'OS::Neutron::Net': 'networks',
    'OS::Neutron::Subnet': 'subnets',
    'OS::Neutron::Port': 'ports',
    'OS::Neutron::Router': 'routers',
    'OS::Nova::Server': 'servers',
    'OS::Cinder::Volume': 'volumes',
    'OS::Swift::Container': 'containers',
}

NOT_SUPPORTED = {
    'code': 400,
    'title': 'Bad Request',
    'explanation': 'The server could not comply with the request since it '
    'is either malformed or otherwise incorrect.',
    'error': {
        'type': 'NotSupported',
        'traceback': None,
        'message': 'Stack Abandon is not supported.',
    },
}

STAMP = '2026-11-01T10:00:00Z'


def heat_not_found(name):
    return 404, {
        'code': 404,
        'title': 'Not Found',
        'explanation': 'The resource could not be found.',
        'error': {
            'type': 'EntityNotFound',
            'traceback': None,
            'message': f'The Stack ({name}) could not be found.',
        },
    }


class Orchestration:
    def __init__(self, services=None, *, abandon_enabled=True, **kwargs):
        super().__init__(services, **kwargs)
        self.abandon_enabled = abandon_enabled
        #: the next abandons done, each answered so (see the module doc)
        self.lost_abandon_answers: list[int | str] = []

    def __enter__(self):
        super().__enter__()
        # Heat redirects to the stack's own project, not the caller's.
        self._route('orchestration', HEAT, r'/v1/.*$')
        return self

    def stack(
        self,
        name,
        project_id,
        *,
        status='CREATE_COMPLETE',
        on_delete='complete',
        parent=None,
        updated=STAMP,
        **extra,
    ):
        return self.add(
            'stacks',
            id=new_id('s'),
            stack_name=name,
            stack_status=status,
            project=project_id,
            creation_time=STAMP,
            updated_time=updated,
            parent=parent,
            on_delete=on_delete,
            template={'heat_template_version': '2021-04-16', 'resources': {}},
            emptied=False,
            **extra,
        )

    def resource(
        self,
        stack,
        name,
        type_,
        physical_id,
        *,
        deletion_policy=None,
        external_id=None,
        **extra,
    ):
        """A resource and its definition in the stack's template; with
        ``external_id``, one the stack only adopted (Heat's create adopts
        it: ADOPT_COMPLETE)."""
        definition = {'type': type_}
        if deletion_policy is not None:
            definition['deletion_policy'] = deletion_policy
        if external_id is not None:
            definition['external_id'] = external_id
            extra.setdefault('status', 'ADOPT_COMPLETE')
        stack['template']['resources'][name] = definition
        return self.add(
            'stack_resources',
            id=new_id('r'),
            stack_id=stack['id'],
            resource_name=name,
            resource_type=type_,
            physical_resource_id=physical_id,
            resource_status=extra.pop('status', 'CREATE_COMPLETE'),
            resource_data=extra.pop('data', {}),
            **extra,
        )

    def nested(self, parent, name, type_='OS::Heat::ResourceGroup'):
        """A nested stack owned by a resource of ``parent``."""
        child = self.stack(
            f'{parent["stack_name"]}-{name}-x1',
            parent['project'],
            parent=parent['id'],
        )
        self.resource(
            parent, name, type_, child['id'], nested_stack_id=child['id']
        )
        return child

    def resources_of(self, stack_id):
        return [
            r for r in self.all('stack_resources') if r['stack_id'] == stack_id
        ]

    def stack_by_name(self, name, project_id):
        for s in self.all('stacks'):
            if s['stack_name'] == name and s['project'] == project_id:
                return s
        return None

    def _orchestration(self, method, path, query, body):
        path = re.sub(r'^/v1/[^/]+', '', path)
        if path in ('', '/'):
            return 300, versions('v1.0', HEAT + '/v1/')
        if path == '/stacks' and method == 'GET':
            if query.get('global_tenant') == 'True':
                return 403, {
                    'code': 403,
                    'title': 'Forbidden',
                    'error': {
                        'type': 'Forbidden',
                        'message': 'You are not '
                        'authorized to use stacks:global_index.',
                    },
                }
            return 200, {'stacks': self._list_stacks(query)}
        m = re.fullmatch(r'/stacks/([^/]+)', path)
        if m:
            return self._lookup(m.group(1))
        m = re.fullmatch(r'/stacks/([^/]+)/([^/]+)(?:/([a-z_]+))?', path)
        if not m:
            return 404, {'error': {'message': 'no route ' + path}}
        name, id_, action = m.groups()
        stack = self._poll_stack(id_)
        if stack is None or stack['stack_name'] != name:
            return heat_not_found(name)
        if action is None and method == 'GET':
            return 200, {'stack': self._stack_view(stack)}
        if action is None and method == 'DELETE':
            self.delete_stack(stack)
            return 204, None
        if action == 'resources' and method == 'GET':
            depth = int(query.get('nested_depth', 0))
            return 200, {'resources': self._resource_views(stack, depth)}
        if action in ('export', 'abandon'):
            if not self.abandon_enabled:
                return 400, copy.deepcopy(NOT_SUPPORTED)
            data = self._abandon_data(stack)
            if action == 'abandon' and method == 'DELETE':
                self._forget(stack)
                if self.lost_abandon_answers:
                    return self._lost_answer(self.lost_abandon_answers.pop(0))
            return 200, data
        return 405, None

    def _lost_answer(self, answer):
        if answer == 'drop':
            raise requests.exceptions.ConnectionError(
                'Connection aborted.', 'RemoteDisconnected'
            )
        return answer, {
            'error': {'message': 'the proxy got no answer', 'code': answer}
        }

    def _list_stacks(self, query):
        out = []
        for s in list(self.all('stacks')):
            # a listing shows how each delete it was asked for goes on, as
            # a GET does
            if 'polls_left' in s and self._poll_stack(s['id']) is None:
                continue
            if s['stack_status'] == 'DELETE_COMPLETE' or (
                s['parent'] and query.get('show_nested') != 'True'
            ):
                continue
            if 'name' in query and s['stack_name'] != query['name']:
                continue
            if 'tenant' in query and s['project'] != query['tenant']:
                continue
            view = self._stack_view(s)
            # the caller is a cloud admin: every project, and which
            view['project'] = s['project']
            out.append(view)
        return out

    def _lookup(self, name_or_id):
        stack = self._poll_stack(name_or_id)
        if stack is None:
            # by name: only in the caller's project, as Heat does
            stack = self.stack_by_name(name_or_id, ADMIN_PROJECT)
        if stack is None or stack['stack_status'] == 'DELETE_COMPLETE':
            return heat_not_found(name_or_id)
        raise Redirect(self._stack_url(stack))

    def _stack_url(self, stack):
        return (
            f'{HEAT}/v1/{stack["project"]}/stacks/'
            f'{stack["stack_name"]}/{stack["id"]}'
        )

    def _stack_view(self, stack):
        return {
            'id': stack['id'],
            'stack_name': stack['stack_name'],
            'stack_status': stack['stack_status'],
            'stack_status_reason': '',
            'description': stack.get('description', ''),
            'creation_time': stack['creation_time'],
            'updated_time': stack['updated_time'],
            'deletion_time': None,
            'parent': stack['parent'],
            # Heat's stacks_view: the username of the stack's creator
            'stack_owner': stack.get('stack_owner'),
            'stack_user_project_id': None,
            'tags': None,
            'timeout_mins': None,
            'disable_rollback': True,
            'parameters': {},
            'links': [{'href': self._stack_url(stack), 'rel': 'self'}],
        }

    def _resource_views(self, stack, depth, parent_resource=None):
        out = []
        for res in self.resources_of(stack['id']):
            links = [
                {
                    'href': self._stack_url(stack)
                    + '/resources/'
                    + res['resource_name'],
                    'rel': 'self',
                },
                {'href': self._stack_url(stack), 'rel': 'stack'},
            ]
            child = self.get('stacks', res.get('nested_stack_id') or '')
            if child:
                links.append({'href': self._stack_url(child), 'rel': 'nested'})
            view = {
                'resource_name': res['resource_name'],
                'logical_resource_id': res['resource_name'],
                'physical_resource_id': res['physical_resource_id'],
                'resource_type': res['resource_type'],
                'resource_status': res['resource_status'],
                'resource_status_reason': 'state changed',
                'creation_time': STAMP,
                'updated_time': STAMP,
                'required_by': [],
                'links': links,
            }
            if parent_resource:
                view['parent_resource'] = parent_resource
            out.append(view)
            if child and depth > 0:
                out.extend(
                    self._resource_views(
                        child, depth - 1, res['resource_name']
                    )
                )
        return out

    def _abandon_data(self, stack):
        """Heat's prepare_abandon(): after a delete attempt the template is
        empty and so are the resources."""
        resources = {}
        if not stack['emptied']:
            for res in self.resources_of(stack['id']):
                child = self.get('stacks', res.get('nested_stack_id') or '')
                action, _, status = res['resource_status'].partition('_')
                resources[res['resource_name']] = (
                    self._abandon_data(child)
                    if child
                    else {
                        'name': res['resource_name'],
                        'resource_id': res['physical_resource_id'],
                        'type': res['resource_type'],
                        'action': action,
                        'status': status,
                        'metadata': {},
                        'resource_data': res['resource_data'],
                    }
                )
        action, _, status = stack['stack_status'].partition('_')
        return {
            'name': stack['stack_name'],
            'id': stack['id'],
            'action': action,
            'status': status,
            'environment': {
                'parameters': {},
                'resource_registry': {'resources': {}},
            },
            'files': {},
            # the template with each resource's deletion_policy and
            # external_id; a delete swapped in an empty one
            'template': {
                'heat_template_version': '2021-04-16',
                'resources': {},
            }
            if stack['emptied']
            else copy.deepcopy(stack['template']),
            'resources': resources,
            'project_id': stack['project'],
            'stack_user_project_id': None,
            'tags': [],
        }

    def _forget(self, stack):
        """Abandon: the stack and its nested stacks go, what they made
        stays."""
        for res in self.resources_of(stack['id']):
            child = self.get('stacks', res.get('nested_stack_id') or '')
            if child:
                self._forget(child)
            self._remove('stack_resources', res['id'])
        self._remove('stacks', stack['id'])

    def delete_stack(self, stack):
        if stack['stack_status'] == 'DELETE_IN_PROGRESS':
            return
        stack['stack_status'] = 'DELETE_IN_PROGRESS'
        stack['emptied'] = True
        stack['polls_left'] = self.delete_polls

    def _poll_stack(self, id_):
        """GET of a stack: how its delete goes on (see module doc)."""
        stack = self.get('stacks', id_)
        if stack is None or stack['stack_status'] != 'DELETE_IN_PROGRESS':
            return stack
        if stack['on_delete'] == 'fail':
            stack['stack_status'] = 'DELETE_FAILED'
        elif stack['on_delete'] == 'complete':
            if stack['polls_left'] <= 0:
                self._destroy(stack)
                return None
            stack['polls_left'] -= 1
        return stack

    def _destroy(self, stack):
        """A delete that finished: physical resources go too."""
        for res in self.resources_of(stack['id']):
            child = self.get('stacks', res.get('nested_stack_id') or '')
            if child:
                self._destroy(child)
            collection = PHYSICAL.get(res['resource_type'])
            if collection:
                self._remove(collection, res['physical_resource_id'])
            self._remove('stack_resources', res['id'])
        self._remove('stacks', stack['id'])

    def stack_gone(self, stack_id):
        return self._poll_stack(stack_id) is None
