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

"""Sphinx configuration of the osc-cascade guide (``tox -e docs``)."""

import os
import sys

# doc/ext: the directive that documents the hooks' options, and the
# include-read handler for images of included files
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'ext'))

extensions = [
    'cliff.sphinxext',
    # the reaper's options, from its oslo.config.opts entry point
    'oslo_config.sphinxext',
    'osc_cascade_docs',
    # the table of the kinds proved on real services (issue 31)
    'kinds_proved',
]

project = 'osc-cascade'
copyright = 'osc-cascade developers; Apache License 2.0'
root_doc = 'index'
exclude_patterns = []
# smart quotes, but no smart dashes: '--cascade' in a help text must not
# become an en dash followed by 'cascade'
smartquotes_action = 'qe'

# -- the theme ----------------------------------------------------------------

# Sphinx's own neutral theme: osc-cascade is no official OpenStack project,
# so its pages do not wear docs.openstack.org's header, log-in, marketplace
# links and licence footer (the OpenStack docs theme's), and report page
# views to nobody
html_theme = 'alabaster'
html_title = 'osc-cascade'
html_theme_options = {
    'description': 'deletes what OpenStack leaves behind, in dependency '
    'order, and never more than it was asked to',
    'fixed_sidebar': True,
    'show_powered_by': False,
    'page_width': '1100px',
}
html_sidebars = {
    '**': ['about.html', 'navigation.html', 'relations.html', 'searchbox.html']
}
html_show_sourcelink = False

# -- cliff.sphinxext (the command reference, cli/index.rst) ------------------

autoprogram_cliff_application = 'openstack'
# the commands that are OSC's own (project delete, compute service delete)
# get no "provided by the ... plugin" line; the plugin's commands do
autoprogram_cliff_app_dist_name = 'python-openstackclient'
# cliff's formatter options, the same on every OSC command; -f and -c stay
autoprogram_cliff_ignored = [
    '--help',
    '--max-width',
    '--fit-width',
    '--print-empty',
    '--noindent',
    '--quote',
    '--prefix',
    '--sort-column',
    '--sort-ascending',
    '--sort-descending',
]
