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

"""Metering labels; a label's rules go with it."""

from __future__ import annotations

from osc_cascade.kinds.network.common import _ExtensionKind
from osc_cascade.kinds.registry import register


@register
class MeteringLabel(_ExtensionKind):
    """A metering label; its rules go with it."""

    name = 'network.metering_label'
    extension = 'metering'
    sdk_list = 'metering_labels'
    sdk_delete = 'delete_metering_label'
