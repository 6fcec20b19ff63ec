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


"""``cluster force-delete``: the last resort for clusters stuck in deletion.

A cluster built on a Heat stack (``workflows.clusters``) hangs in deletion
when Heat cannot delete one of the stack's resources. Heat can *abandon* a
stack: the stack's record goes, what it made stays. For one cluster,
``ForceDelete``:

1. records the stack's resources, nested ones included, and checks with an
   export (which changes nothing) that the cloud allows abandon at all, and,
   for a plain stack that it will delete itself, that Heat would not take
   the caller's own containers or keypairs of the same name with it;
2. unless the cluster is being deleted already, deletes it the normal way
   and gives that ``grace`` seconds: a delete that finishes abandons
   nothing, and the force path never replaces the normal delete;
3. writes the manifest of what the stack holds, then abandons the stack.
   An answer that may hide an abandon that happened (a 5xx, a dropped
   connection, a timeout) keeps the manifest, marks the abandon's outcome
   unknown and looks at the stack: gone, it was abandoned; still there,
   the cluster fails and says so;
4. checks which of the resources still exist (one list per kind and
   project, then a GET by id of what a list lacks, in each region of its
   service: gone only on a 404 everywhere): the manifest and the outcome
   list those, not what Heat's delete removed during the grace period;
5. lets the service finish the cluster's record (Magnum and Sahara destroy
   a cluster whose stack is gone) and, with ``wait``, waits for it to go;
6. with ``delete_leftovers``, deletes what the manifest lists and still
   exists, in dependency order (``leftovers``), but keeps, saying why,
   what Heat's own delete would keep (``deletion_policy`` Retain, an
   ``external_id``), what is another project's or region's, what the
   template no longer tells of, and a router with someone else's
   interface (``keeps``); a volume whose policy is Snapshot is backed up
   first.

One cluster's failure, even an unexpected one, is its outcome's: the
others go on (``preview_all``, ``run_all``). ``load`` and ``resume`` take
up a manifest alone, without the cluster: the deletion of the leftovers
of a run that stopped after the abandon.

The parts: ``outcome`` (options, preview, outcome), ``manifest`` (the
file), ``base`` (the shared calls and waits), ``abandon`` (Heat's abandon),
``resume`` (what the abandon left, and the resume from a manifest),
``keeps`` (what the deletion keeps and why),
``leftovers`` (finding and deleting those with the cascade's engine),
``capi`` (a Magnum cluster on a Cluster API driver, which has no stack:
what its controllers made, deleted with ``workflows.k8s``) and
``run`` (``ForceDelete``, which joins them). This package names the public
ones.
"""

from osc_cascade.workflows.force_delete.manifest import (
    MANIFEST_FORMAT,
    Manifest,
    default_manifest_name,
    read_manifest,
    write_manifest,
)
from osc_cascade.workflows.force_delete.outcome import (
    ABANDONED,
    DELETED_NORMALLY,
    FAILED,
    NOT_STARTED,
    RECORD_LEFT,
    ForceDeleteOptions,
    ForceDeleteOutcome,
    Preview,
)
from osc_cascade.workflows.force_delete.run import ForceDelete

__all__ = [
    'ABANDONED',
    'DELETED_NORMALLY',
    'FAILED',
    'MANIFEST_FORMAT',
    'NOT_STARTED',
    'RECORD_LEFT',
    'ForceDelete',
    'ForceDeleteOptions',
    'ForceDeleteOutcome',
    'Manifest',
    'Preview',
    'default_manifest_name',
    'read_manifest',
    'write_manifest',
]
