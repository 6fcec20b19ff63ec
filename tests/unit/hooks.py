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

"""The hooks of this tree on OSC's commands, for the shell run in-process
(``osc``), whether or not the installed package registers them yet: a
venv installed before a hook was added has no entry point for it
(setup.cfg is read at install time)."""

from __future__ import annotations

from cliff import command
from stevedore import extension

#: the hook groups of setup.cfg that are new, and their hook classes
HOOKS = {
    'openstack.cli.user_delete': 'osc_cascade.v1.user:UserDeleteCascade',
    'openstack.cli.domain_delete': (
        'osc_cascade.v1.domain:DomainDeleteCascade'
    ),
}


def install(monkeypatch) -> None:
    """Make every command named in ``HOOKS`` load its hook."""
    import importlib

    original = command.Command._load_hooks

    def load(self):
        original(self)
        if not self.cmd_name:
            return
        namespace = (
            f'{self.app.command_manager.namespace}.'
            f'{self.cmd_name.replace(" ", "_")}'
        )
        target = HOOKS.get(namespace)
        if target is None or any(
            e.entry_point_target == target for e in self._hooks
        ):
            return
        module, _, name = target.partition(':')
        cls = getattr(importlib.import_module(module), name)
        self._hooks = extension.ExtensionManager.make_test_instance(
            [extension.Extension('osc_cascade', None, cls, cls(command=self))]
        )

    monkeypatch.setattr(command.Command, '_load_hooks', load)
