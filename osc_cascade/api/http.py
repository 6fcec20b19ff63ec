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

"""The one way to make a call that openstacksdk's resources do not cover."""

from __future__ import annotations

from typing import Any

from openstack import exceptions as sdk_exc


def request(proxy: Any, method: str, path: str, **kwargs: Any) -> Any:
    """A call the SDK's resources do not cover (a filter they refuse, a
    header they cannot send), through the service's SDK adapter; an error
    answer raises the SDK's exception (NotFoundException, ...)."""
    response = proxy.request(path, method, **kwargs)
    sdk_exc.raise_from_response(response)
    return response
