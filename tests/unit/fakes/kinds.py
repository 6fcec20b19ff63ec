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

"""Small fakes for the pure parts: a resource kind whose behaviour a test
scripts, plans made of it, and the SDK's exceptions."""

from __future__ import annotations

from collections.abc import Iterable
import itertools
import threading

from openstack import exceptions as sdk_exc
import requests

from osc_cascade.engine import resource
from osc_cascade.engine.planner import Edge, Plan
from osc_cascade.engine.resource import ResourceRef, Step
from osc_cascade.kinds.base import GONE, ResourceKind, delete_of
from osc_cascade.kinds.registry import CLASSES

PROJECT = 'p1'
KIND = 'test.thing'


def ref(
    id_: str,
    kind: str = KIND,
    project_id: str = PROJECT,
    name: str = '',
    **attrs,
) -> ResourceRef:
    return ResourceRef(
        kind=kind, id=id_, name=name or id_, project_id=project_id, attrs=attrs
    )


class FakeKind(ResourceKind):
    """A kind driven by its refs' attributes (for the planner) and by
    scripts (for the executor).

    Planner: ``before=[ids]`` adds edges "me before them", ``breakable=
    [ids]`` the same with a ``cut_reference`` breaker, ``actions=[names]``
    break actions that must run before the delete, ``keep='why'`` a keep
    step, ``owned=True`` no step at all.

    Executor: ``script[id]`` is a list of what successive delete (or apply)
    calls do: an exception to raise, or None to succeed; ``statuses[id]``
    the successive answers of ``status`` (an exception is raised), GONE
    when the list runs out.
    """

    error_statuses = frozenset({'error_deleting'})

    def __init__(
        self,
        name: str = KIND,
        *,
        synchronous: bool = True,
        script: dict | None = None,
        statuses: dict | None = None,
        on_call=None,
        in_use=(sdk_exc.ConflictException,),
    ):
        super().__init__()
        self.name = name
        self.service_type = 'test'
        self.synchronous_delete = synchronous
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.statuses = {k: list(v) for k, v in (statuses or {}).items()}
        self.on_call = on_call
        self.in_use = in_use
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    # -- planner side ------------------------------------------------------

    def primary_step(self, ref_: ResourceRef) -> Step | None:
        if ref_.attrs.get('owned'):
            return None
        if ref_.attrs.get('keep'):
            return resource.keep(ref_, ref_.attrs['keep'])
        return resource.delete(ref_)

    def relations(self, ref_, inventory) -> Iterable[Edge]:
        me = delete_of(ref_.kind, ref_.id)
        for other in ref_.attrs.get('before', []):
            kind, _, id_ = other.rpartition(':')
            yield Edge(me, delete_of(kind or ref_.kind, id_))
        for other in ref_.attrs.get('breakable', []):
            yield Edge(
                me,
                delete_of(ref_.kind, other),
                breaker=Step('cut_reference', ref_, {'to': other}),
            )
        for action in ref_.attrs.get('actions', []):
            yield Edge(Step(action, ref_), me)

    # -- executor side -----------------------------------------------------

    def _next(self, table: dict, key: str, default):
        with self._lock:
            queue = table.get(key)
            return queue.pop(0) if queue else default

    def _do(self, what: str, key: str) -> None:
        with self._lock:
            self.calls.append((what, key))
        if self.on_call is not None:
            self.on_call(what, key)
        outcome = self._next(self.script, key, None)
        if isinstance(outcome, BaseException):
            raise outcome

    def delete(self, conn, ref_):
        self._do('delete', ref_.id)

    def apply(self, conn, step):
        self._do(step.action, step.target.id)

    def status(self, conn, ref_):
        answer = self._next(self.statuses, ref_.id, GONE)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def is_in_use(self, exc):
        return isinstance(exc, self.in_use)

    def deleted(self) -> list[str]:
        return [k for what, k in self.calls if what == 'delete']


def chain_plan(ids: list[str], kind: str = KIND) -> Plan:
    """A plan whose steps are deletes of ``ids``, each after the one
    before it."""
    steps = {}
    for id_ in ids:
        step = resource.delete(ref(id_, kind))
        steps[step.id] = step
    keys = list(steps)
    return Plan(
        [{'id': PROJECT, 'name': 'p'}], steps, set(itertools.pairwise(keys))
    )


def make_plan(
    nodes: Iterable[str | Step],
    edges: Iterable[tuple[str, str]] = (),
    kind: str = KIND,
) -> Plan:
    """A plan of delete steps (or given steps) named by id; edges name the
    ids of resources (or full step ids)."""
    steps: dict[str, Step] = {}
    for node in nodes:
        step = (
            node
            if isinstance(node, Step)
            else resource.delete(ref(node, kind))
        )
        steps[step.id] = step

    def sid(name: str) -> str:
        return name if name in steps else f'delete:{kind}:{name}'

    return Plan(
        [{'id': PROJECT, 'name': 'p'}],
        steps,
        {(sid(a), sid(b)) for a, b in edges},
    )


def response(status: int) -> requests.Response:
    resp = requests.Response()
    resp.status_code = status
    return resp


def sdk_error(cls, status: int, message: str) -> Exception:
    """An SDK exception as the SDK builds it: from a response."""
    return cls(message=message, response=response(status))


def conflict(message: str = 'in use') -> Exception:
    return sdk_error(sdk_exc.ConflictException, 409, message)


def http_error(status: int, message: str = 'boom') -> Exception:
    return sdk_error(sdk_exc.HttpException, status, message)


def not_found() -> Exception:
    return sdk_error(sdk_exc.NotFoundException, 404, 'not found')


def kinds_of(module) -> list[type[ResourceKind]]:
    """The kinds a kind module registers (a package: its modules)."""
    return [
        c
        for c in CLASSES.values()
        if c.__module__ == module.__name__
        or c.__module__.startswith(module.__name__ + '.')
    ]
