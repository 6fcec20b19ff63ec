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


"""Sahara calls: its API v2 (retired in 2024, still found in the wild) has
no resources in openstacksdk, only the service's adapter."""

from __future__ import annotations

from typing import Any

from osc_cascade.api.http import request


def clusters(conn: Any, **filters: str) -> list[dict[str, Any]]:
    """The clusters, with Sahara's filters (``name``...)."""
    # raw: openstacksdk has no Sahara resources (a bare proxy)
    return request(
        conn.data_processing, 'GET', '/clusters', params=filters
    ).json()['clusters']


def get_cluster(conn: Any, id_: str) -> dict[str, Any]:
    """One cluster by ID; NotFoundException if Sahara does not know it."""
    # raw: openstacksdk has no Sahara resources (a bare proxy)
    return request(conn.data_processing, 'GET', f'/clusters/{id_}').json()[
        'cluster'
    ]


def delete_cluster(conn: Any, id_: str) -> None:
    # raw: openstacksdk has no Sahara resources (a bare proxy)
    request(conn.data_processing, 'DELETE', f'/clusters/{id_}')
