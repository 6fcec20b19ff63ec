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

#: ``project delete --cascade --dry-run`` and ``orphan purge --dry-run``:
#: one row per step, sorted by
#: stage, region, kind and name; in a table After is a count and there is
#: no Project; -f json and -f yaml have every step id in After and the
#: project's ID
CASCADE_PLAN_COLUMNS = (
    'Stage',
    'Region',
    'Action',
    'Kind',
    'ID',
    'Name',
    'Project',
    'After',
    'Reason',
)
#: what a real run did, per kind and region: resources deleted, break
#: actions done (a router's interface removed), resources kept, failed
#: and skipped steps
SUMMARY_COLUMNS = (
    'Kind',
    'Region',
    'Deleted',
    'Actions',
    'Kept',
    'Failed',
    'Skipped',
)
#: the verbs a person reads for a step, where the plan's action is not
#: the word: (kind, action) -> verb. The same in the plan and the progress
VERBS = {
    ('placement.allocation', 'delete'): 'remove',
    ('placement.allocation', 'keep'): 'block',
}
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
