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

"""Additions to Sphinx for the osc-cascade guide.

``autoprogram-cliff`` is cliff's directive, with one change: cliff reads
the commands' help, descriptions and epilogs as reStructuredText, but they
are plain text written for a terminal (``openstack help``), where a ``*``
or a backquote means nothing. A help string that says ``*_IN_PROGRESS``
would start an emphasis and fail the build. They are escaped first, so
that the page says what ``openstack help`` says.

``autoprogram-cliff-hooks``: cliff's ``autoprogram-cliff`` builds each
command without a name (``command_class(None, None)``), and cliff loads a
command's hooks only when it has one (``Command._load_hooks``), so the
options that osc-cascade's hooks add to OSC's ``project delete`` and
``compute service delete`` would not show. This directive takes the same
arguments and options, and builds the command as ``openstack help
<command>`` does: named, under OSC's command manager namespace
``openstack.cli``, so that every hook installed in the entry point group
``openstack.cli.<command with _ for spaces>`` adds its options and its
epilog. A command for which no hook loads is an error: the page would
otherwise lose the options quietly. ::

    .. autoprogram-cliff-hooks:: openstack.identity.v3
       :command: project delete

The ``include-read`` handler: an image in a file read by ``.. include::``
(tools/README.rst, benchmarks/README.rst) is looked up by Sphinx relative
to the including document; it is rewritten to be relative to the included
file, as it is when the file is read on its own.
"""

from __future__ import annotations

import argparse
import os
import re
import types
from typing import Any

from cliff import sphinxext
from docutils.parsers.rst import directives

#: OSC's command manager namespace (openstackclient/shell.py), the prefix
#: of the hooks' entry point groups
OSC_NAMESPACE = 'openstack.cli'

#: what reStructuredText reads as markup in running text: backslashes,
#: emphasis, literals and roles, substitutions; and a word's trailing
#: underscore (a reference)
_MARKUP = re.compile(r'([\\*`|])')
_REFERENCE = re.compile(r'(\w)_(?=\W|$)')


def plain_text(text: str | None) -> str | None:
    """``text`` escaped so that reStructuredText shows it as it is."""
    if not text or text == argparse.SUPPRESS:
        return text
    return _REFERENCE.sub(r'\1\\_', _MARKUP.sub(r'\\\1', text))


def _plain_help(command: Any) -> Any:
    """The command, whose parser's texts are escaped as plain text."""
    get_parser = command.get_parser

    def escaped(prog_name: str) -> argparse.ArgumentParser:
        parser = get_parser(prog_name)
        parser.description = plain_text(parser.description)
        # the exit statuses, one a line (common.exit_status_text): a
        # literal block, as the terminal shows them
        parser.epilog = plain_text(parser.epilog)
        if parser.epilog:
            parser.epilog = parser.epilog.replace(
                '\nExit status:\n',
                '\nExit status:\n\n.. code-block:: text\n\n',
            )
        for action in parser._actions:
            action.help = plain_text(action.help)
        return parser

    command.get_parser = escaped
    return command


class AutoprogramCliff(sphinxext.AutoprogramCliffDirective):
    """cliff's ``autoprogram-cliff``, with the help read as plain text."""

    def _make_command(self, command_class: Any, title: str) -> Any:
        return command_class(None, None)

    def _generate_nodes_per_command(
        self,
        title: str,
        command_name: str,
        command_class: Any,
        ignored_opts: list[str],
    ) -> list[Any]:
        def make(_app: None, _app_args: None) -> Any:
            return _plain_help(self._make_command(command_class, title))

        return super()._generate_nodes_per_command(
            title, command_name, make, ignored_opts
        )


class AutoprogramCliffHooks(AutoprogramCliff):
    """``autoprogram-cliff`` with the commands' hooks loaded."""

    option_spec = dict(
        sphinxext.AutoprogramCliffDirective.option_spec,
        namespace=directives.unchanged,
    )

    def _make_command(self, command_class: Any, title: str) -> Any:
        namespace = self.options.get('namespace') or OSC_NAMESPACE
        # all that cliff's Command reads of its app to find the hooks
        app = types.SimpleNamespace(
            command_manager=types.SimpleNamespace(namespace=namespace)
        )
        command = command_class(app, None, cmd_name=title)
        if not command._hooks.extensions:
            raise self.error(
                f'no hook is installed in {namespace}.'
                f'{title.replace(" ", "_")} (or none loads): is the plugin '
                f'installed?'
            )
        return command


_IMAGE = re.compile(
    r'^(?P<head>[ \t]*\.\. (?:image|figure)::[ \t]+)(?P<uri>\S+)[ \t]*$',
    re.MULTILINE,
)


def rebase_images(
    app: Any, relative_path: Any, parent_docname: str, content: list[str]
) -> None:
    """Make the images of an included file relative to that file."""
    srcdir = str(app.srcdir)
    included_dir = os.path.dirname(os.path.join(srcdir, str(relative_path)))
    parent_dir = os.path.dirname(os.path.join(srcdir, parent_docname))

    def rebase(match: re.Match[str]) -> str:
        uri = match['uri']
        if '://' in uri or uri.startswith(('/', 'data:')):
            return match[0]
        target = os.path.normpath(os.path.join(included_dir, uri))
        return match['head'] + os.path.relpath(target, parent_dir)

    content[0] = _IMAGE.sub(rebase, content[0])


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension('cliff.sphinxext')
    app.add_directive('autoprogram-cliff', AutoprogramCliff, override=True)
    app.add_directive('autoprogram-cliff-hooks', AutoprogramCliffHooks)
    app.connect('include-read', rebase_images)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
