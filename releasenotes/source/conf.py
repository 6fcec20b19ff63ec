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

"""Sphinx configuration of the release notes (``tox -e releasenotes``).

reno reads the notes of ``releasenotes/notes/`` from the git history, so a
note shows once it is committed.
"""

extensions = [
    'reno.sphinxext',
]

project = 'osc-cascade Release Notes'
copyright = 'osc-cascade developers; Apache License 2.0'
root_doc = 'index'
exclude_patterns = []
# smart quotes, but no smart dashes: '--cascade' in a help text must not
# become an en dash followed by 'cascade'
smartquotes_action = 'qe'

# the guide's theme (doc/source/conf.py): Sphinx's own, neutral
html_theme = 'alabaster'
html_title = 'osc-cascade Release Notes'
html_theme_options = {'fixed_sidebar': True, 'show_powered_by': False}
html_sidebars = {'**': ['about.html', 'navigation.html', 'searchbox.html']}
html_show_sourcelink = False
