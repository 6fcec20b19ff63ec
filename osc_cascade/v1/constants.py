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

"""The columns of every table the commands print, in one place."""

#: a dry run's plan: one row per step, in execution order
PLAN_COLUMNS = ('Stage', 'Action', 'Kind', 'ID', 'Name', 'Project', 'After')
#: what a real run did, per kind: every command that runs a plan
SUMMARY_COLUMNS = ('Kind', 'Done', 'Failed', 'Skipped')
#: ``orphan list``
ORPHAN_COLUMNS = (
    'Project ID',
    'Region',
    'Kind',
    'ID',
    'Name',
    'Reason',
    'Created At',
    'Updated At',
)
#: ``compute service delete --purge-allocations --dry-run``: one row per
#: step, in execution order, with what nova says of each consumer
SERVICE_PURGE_PLAN_COLUMNS = (
    'Stage',
    'Action',
    'Kind',
    'ID',
    'Name',
    'Class',
    'Detail',
)
#: ``compute service delete --purge-allocations``: what refuses the purge
SERVICE_PURGE_BLOCKER_COLUMNS = (
    'Consumer',
    'Class',
    'Providers',
    'Why, and what to do',
)
#: ``cluster stuck list``
STUCK_CLUSTER_COLUMNS = (
    'Service',
    'ID',
    'Name',
    'Project',
    'Status',
    'Stack ID',
    'Updated At',
    'Age',
)
#: ``cluster force-delete --dry-run``: one row per resource left behind
FORCE_DELETE_PLAN_COLUMNS = (
    'Cluster',
    'Service',
    'Status',
    'Stack',
    'Type',
    'Physical ID',
    'Project',
    'Action',
)
#: ``cluster force-delete``: one row per cluster
FORCE_DELETE_COLUMNS = (
    'Service',
    'Cluster',
    'ID',
    'Result',
    'Record',
    'Left Behind',
    'Leftovers Deleted',
    'Leftovers Not Deleted',
    'Manifest',
)
